//! The first pass: what events refer to, from anywhere in the file. Track descriptors may
//! come after the events on their tracks (another sequence wrote them), and a clock
//! snapshot after the timestamps it converts.

use std::collections::BTreeMap;

use super::clock::{self, Clocks, Reading};
use super::compressed::Bundle;
use super::hash::IdMap;
use super::packets;
use super::wire::{skim, Reader, Value};
use crate::diag::{Diagnostics, WarningKind};
use crate::error::Error;

/// A counter track's unit multiplier and whether its values are deltas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterInfo {
    pub multiplier: i64,
    pub incremental: bool,
}

/// Where a track's events go in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A thread's own track: its slices are the thread's spans.
    Thread,
    /// A process's own track: instants are process-scoped, slices async.
    Process,
    /// Any other track (async, custom, counter): slices are async.
    Other,
}

#[derive(Debug)]
pub struct Track<'a> {
    pub parent: u64,
    pub name: Option<&'a [u8]>,
    pub thread: Option<(i64, i64)>,
    pub process: Option<i64>,
    pub counter: Option<CounterInfo>,
    /// Resolved by [`Found::resolve`]: the place, and the (pid, tid) its events carry
    /// (tid `None`: the process's, whichever thread the event's sequence writes for).
    pub place: Place,
    pub pid: i64,
    pub tid: Option<i64>,
    /// Resolved by [`Found::resolve`]: an ancestor names a parent no descriptor defines.
    /// trace_processor cannot place such a track and drops its events.
    pub orphan: bool,
    /// The uuid as text: the async id of its slices.
    pub id: String,
    /// Resolved by [`Found::resolve`] for a counter track: its name as text (each of its
    /// values carries it).
    pub counter_name: Option<Box<str>>,
}

impl Track<'_> {
    /// A track known only by its uuid: global, not a thread's or a process's.
    pub fn new(uuid: u64) -> Self {
        Track {
            parent: 0,
            name: None,
            thread: None,
            process: None,
            counter: None,
            place: Place::Other,
            pid: 0,
            tid: None,
            orphan: false,
            id: uuid.to_string(),
            counter_name: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Named<'a> {
    pub name: Option<&'a [u8]>,
    pub sort_index: Option<i64>,
    pub labels: Vec<&'a [u8]>,
    /// A process named by a descriptor that also said what Chrome process it is: the first
    /// such name stays.
    pub by_chrome: bool,
}

/// Packets of one sequence next to each other in one buffer: `bufs[buf][start..end]`,
/// whole framed packets.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub buf: u32,
    pub start: usize,
    pub end: usize,
    pub seq: u32,
}

/// Bytes packets lie in: the file (the first), or an inflated bundle of compressed packets.
#[derive(Clone, Copy, Debug)]
pub struct Buf<'a> {
    pub bytes: &'a [u8],
    /// Where its offsets start: 0 for the file, a bundle's packet in it.
    pub at: u64,
    /// Its size in the file, for progress.
    pub packed: usize,
}

/// Everything the first pass found.
#[derive(Debug)]
pub struct Found<'a> {
    pub tracks: IdMap<u64, Track<'a>>,
    pub clocks: Clocks,
    pub processes: BTreeMap<i64, Named<'a>>,
    pub threads: BTreeMap<(i64, i64), Named<'a>>,
    /// Every packet, as runs of one sequence each, in file order (a bundle's packets in its
    /// place).
    pub runs: Vec<Run>,
    pub bufs: Vec<Buf<'a>>,
    /// The bundles of compressed packets in the file, and their packets' offsets.
    pub compressed: Vec<(&'a [u8], u64)>,
    /// Each sequence's thread, as its (last) thread TrackDescriptor names it: the writer
    /// of its events on process and global tracks (trace_processor's sequence thread).
    pub seq_threads: IdMap<u32, (i64, i64)>,
}

/// The first pass; framing errors (a trace cut off mid-packet) are warned about here, once,
/// and the packets before them are the runs. `bundles` are the file's compressed packets,
/// inflated, in order: where there are fewer, the rest are only noted in `compressed`.
pub fn scan<'a>(
    b: &'a [u8],
    bundles: &'a [Bundle],
    d: &mut Diagnostics,
) -> Result<Found<'a>, Error> {
    let mut f = Found::new();
    f.bufs.push(Buf {
        bytes: b,
        at: 0,
        packed: b.len(),
    });
    let mut primary = None;
    packets(b, 0, d, |p, at, frame, d| {
        let Some(z) = f.packet(p, 0, at, frame, &mut primary) else {
            return;
        };
        f.compressed.push((z, at));
        let Some(bundle) = bundles.get(f.compressed.len() - 1) else {
            return;
        };
        let buf = f.bufs.len() as u32;
        f.bufs.push(Buf {
            bytes: &bundle.bytes,
            at: bundle.at,
            packed: bundle.packed,
        });
        let walked = packets(&bundle.bytes, bundle.at, d, |p, at, frame, d| {
            if f.packet(p, buf, at, frame, &mut primary).is_some() {
                d.warn(WarningKind::ProtoMalformed, bundle.at + at, || {
                    "compressed packets inside compressed packets; skipped".into()
                });
            }
        });
        if let Err(e) = walked {
            d.warn(WarningKind::ProtoMalformed, e.offset, || {
                format!("compressed packets that inflate to no packet ({e}); skipped")
            });
        }
    })?;
    f.finish(primary);
    Ok(f)
}

fn fields(b: &[u8]) -> impl Iterator<Item = (u32, Value<'_>)> {
    Reader::new(b, 0)
        .map_while(Result::ok)
        .map(|f| (f.num, f.value))
}

impl<'a> Found<'a> {
    /// Nothing found yet, in no buffer.
    pub fn new() -> Found<'a> {
        Found {
            tracks: IdMap::default(),
            clocks: Clocks::new(),
            processes: BTreeMap::new(),
            threads: BTreeMap::new(),
            runs: Vec::new(),
            bufs: Vec::new(),
            compressed: Vec::new(),
            seq_threads: IdMap::default(),
        }
    }

    /// After the last packet: the trace clock (the first snapshot's primary clock, if one
    /// named it), clock pairs, tracks' places and threads' names.
    pub fn finish(&mut self, primary: Option<u32>) {
        if let Some(c) = primary {
            self.clocks.trace_clock = c;
        }
        self.clocks.finish();
        self.resolve();
        self.name_threads();
    }

    /// A thread track's name names its thread, unless a ThreadDescriptor did.
    pub fn name_threads(&mut self) {
        for t in self.tracks.values() {
            if let (Place::Thread, Some(key), Some(n)) = (t.place, t.thread, t.name) {
                let th = self.threads.entry(key).or_default();
                th.name = th.name.or(Some(n));
            }
        }
    }

    /// One packet of buffer `buf`, at `at` there, framed from `frame`: what it describes
    /// noted, and the packet added to its sequence's run. A bundle of compressed packets is
    /// not: its bytes are returned.
    fn packet(
        &mut self,
        p: &'a [u8],
        buf: u32,
        at: u64,
        frame: u64,
        primary: &mut Option<u32>,
    ) -> Option<&'a [u8]> {
        let (seq, bundle) = self.facts(p, primary);
        if bundle.is_some() {
            return bundle;
        }
        add_run(
            &mut self.runs,
            buf,
            frame as usize,
            at as usize + p.len(),
            seq,
        );
        None
    }

    /// What packet `p` describes (tracks, clocks, processes, threads), noted; returns its
    /// sequence and, for a bundle of compressed packets, the bundle (nothing else noted).
    pub fn facts(&mut self, p: &'a [u8], primary: &mut Option<u32>) -> (u32, Option<&'a [u8]>) {
        let (seq, parts) = rare_fields(p);
        if parts[4].is_some() {
            return (seq, parts[4]);
        }
        self.note(seq, &parts, primary);
        (seq, None)
    }

    /// Notes a packet's rare fields ([`rare_fields`]; no bundle).
    pub fn note(&mut self, seq: u32, parts: &RareFields<'a>, primary: &mut Option<u32>) {
        if let Some(x) = parts[0] {
            if let Some(key) = self.track(x) {
                self.seq_threads.insert(seq, key);
            }
        }
        if let Some(x) = parts[1] {
            if let Some(c) = self.snapshot(x, seq) {
                primary.get_or_insert(c);
            }
        }
        if let Some(x) = parts[2] {
            self.process(x, false);
        }
        if let Some(x) = parts[3] {
            self.thread(x);
        }
    }

    /// A `TrackDescriptor`, noted; the thread it describes, if any.
    fn track(&mut self, b: &'a [u8]) -> Option<(i64, i64)> {
        let mut uuid = 0;
        let mut t = Track::new(0);
        let (mut process, mut chrome) = (None, false);
        for (num, v) in fields(b) {
            match (num, v) {
                (1, v) => uuid = v.uint().unwrap_or(0),
                (5, v) => t.parent = v.uint().unwrap_or(0),
                (2 | 10 | 13, Value::Bytes(s)) => t.name = Some(s),
                (3, Value::Bytes(x)) => process = Some(x),
                (6, Value::Bytes(_)) => chrome = true,
                (4, Value::Bytes(x)) => t.thread = Some(self.thread(x)),
                (8, Value::Bytes(x)) => {
                    let mut c = CounterInfo {
                        multiplier: 1,
                        incremental: false,
                    };
                    for (num, v) in fields(x) {
                        match num {
                            4 => c.multiplier = v.int().filter(|&m| m != 0).unwrap_or(1),
                            5 => c.incremental = v.uint().unwrap_or(0) != 0,
                            _ => {}
                        }
                    }
                    t.counter = Some(c);
                }
                _ => {}
            }
        }
        if let Some(x) = process {
            t.process = Some(self.process(x, chrome));
        }
        let thread = t.thread;
        // A descriptor emitted again (after an incremental state reset) updates the first.
        match self.tracks.get_mut(&uuid) {
            Some(old) => {
                old.parent = if t.parent != 0 { t.parent } else { old.parent };
                old.name = t.name.or(old.name);
                old.thread = t.thread.or(old.thread);
                old.process = t.process.or(old.process);
                old.counter = t.counter.or(old.counter);
            }
            None => {
                t.id = uuid.to_string();
                self.tracks.insert(uuid, t);
            }
        }
        thread
    }

    /// A `ProcessDescriptor`: its pid, its name and sort index noted. `chrome`: its track
    /// descriptor also has a `ChromeProcessDescriptor`.
    ///
    /// Chrome writes a process's descriptor on every sequence, named by its type
    /// ("Renderer") where it adds the `ChromeProcessDescriptor`, by its command line where
    /// not. trace_processor keeps the first name by time, which is the typed one in
    /// Chrome's traces: the first name of a descriptor with a `ChromeProcessDescriptor`
    /// stays; otherwise a later name replaces an earlier one.
    fn process(&mut self, b: &'a [u8], chrome: bool) -> i64 {
        let mut pid = 0;
        let (mut name, mut cmdline, mut sort) = (None, None, None);
        let mut labels = Vec::new();
        for (num, v) in fields(b) {
            match (num, v) {
                (1, v) => pid = v.int().unwrap_or(0) as i32 as i64,
                // An empty name names nothing: Chrome repeats a process's descriptor on
                // every sequence, some without the name.
                (6, Value::Bytes(s)) if !s.is_empty() => name = Some(s),
                (2, Value::Bytes(s)) => {
                    cmdline.get_or_insert(s);
                }
                (3, v) => sort = v.int().map(|i| i as i32 as i64),
                (8, Value::Bytes(s)) => labels.push(s),
                _ => {}
            }
        }
        let p = self.processes.entry(pid).or_default();
        if chrome && name.is_some() && !p.by_chrome {
            p.name = name;
            p.by_chrome = true;
        } else if !p.by_chrome {
            p.name = name.or(p.name).or(cmdline);
        }
        p.sort_index = sort.or(p.sort_index);
        if !labels.is_empty() {
            p.labels = labels;
        }
        pid
    }

    /// A `ThreadDescriptor`: its (pid, tid), its name and sort index noted.
    fn thread(&mut self, b: &'a [u8]) -> (i64, i64) {
        let (key, name, sort) = thread_descriptor(b);
        let t = self.threads.entry(key).or_default();
        t.name = name.or(t.name);
        t.sort_index = sort.or(t.sort_index);
        self.processes.entry(key.0).or_default();
        key
    }

    /// A `ClockSnapshot`: its readings; returns its primary trace clock, if it names one.
    fn snapshot(&mut self, b: &[u8], seq: u32) -> Option<u32> {
        let mut readings = Vec::new();
        let mut primary = None;
        for (num, v) in fields(b) {
            match (num, v) {
                (1, Value::Bytes(c)) => {
                    let (mut id, mut ts, mut inc, mut mult) = (0u32, 0u64, false, 1i64);
                    for (num, v) in fields(c) {
                        match num {
                            1 => id = v.uint().unwrap_or(0) as u32,
                            2 => ts = v.uint().unwrap_or(0),
                            3 => inc = v.uint().unwrap_or(0) != 0,
                            4 => mult = v.int().filter(|&m| m > 0).unwrap_or(1),
                            _ => {}
                        }
                    }
                    let key = clock::key(id, seq);
                    if mult != 1 {
                        self.clocks.set_multiplier(key, mult);
                    }
                    // An incremental clock's reading is only its sequence's starting point.
                    if inc {
                        continue;
                    }
                    if let Some(ns) = (ts as i128)
                        .checked_mul(mult as i128)
                        .and_then(|n| i64::try_from(n).ok())
                    {
                        readings.push(Reading { clock: key, ns });
                    }
                }
                (2, v) => primary = v.uint().map(|c| c as u32).filter(|&c| c != 0),
                _ => {}
            }
        }
        self.clocks.add(readings);
        primary
    }

    /// Works out each track's place and (pid, tid) from its ancestors.
    pub fn resolve(&mut self) {
        let uuids: Vec<u64> = self.tracks.keys().copied().collect();
        for u in uuids {
            self.resolve_track(u);
        }
    }

    /// Works out track `u`'s place and (pid, tid) from its ancestors, if it is defined.
    pub fn resolve_track(&mut self, u: u64) {
        let Some(t) = self.tracks.get(&u) else {
            return;
        };
        let place = if t.thread.is_some() {
            Place::Thread
        } else if t.process.is_some() {
            Place::Process
        } else {
            Place::Other
        };
        // Parents may form a cycle in a broken file: a bounded walk.
        let (mut pid, mut tid, mut orphan) = (None, None, false);
        let mut cur = Some(t);
        for _ in 0..64 {
            let Some(c) = cur else { break };
            if let Some((p, th)) = c.thread {
                pid = Some(p);
                tid = Some(th);
                break;
            }
            if let Some(p) = c.process {
                pid = Some(p);
                break;
            }
            cur = (c.parent != 0)
                .then(|| self.tracks.get(&c.parent))
                .flatten();
            orphan = c.parent != 0 && cur.is_none();
        }
        let t = self.tracks.get_mut(&u).expect("a track just found");
        t.orphan = orphan;
        t.place = place;
        t.pid = pid.unwrap_or(0);
        t.tid = tid;
        t.counter_name = t.counter.map(|_| match t.name {
            Some(n) => String::from_utf8_lossy(n).into(),
            None => format!("counter {u}").into(),
        });
    }
}

/// The packet framed from `start` to `end` of buffer `buf`, of sequence `seq`, added to the
/// last run where it follows it.
#[inline]
pub fn add_run(runs: &mut Vec<Run>, buf: u32, start: usize, end: usize, seq: u32) {
    match runs.last_mut() {
        Some(r) if r.seq == seq && r.buf == buf && r.end == start => r.end = end,
        _ => runs.push(Run {
            buf,
            start,
            end,
            seq,
        }),
    }
}

/// A packet's track descriptor, clock snapshot, process and thread descriptors and bundle
/// of compressed packets, where it has them.
pub type RareFields<'a> = [Option<&'a [u8]>; 5];

/// A packet's sequence and its [`RareFields`]: only those fields are read.
#[inline]
pub fn rare_fields(p: &[u8]) -> (u32, RareFields<'_>) {
    match usual_seq(p) {
        Some(seq) => (seq, [None; 5]),
        None => skimmed(p),
    }
}

/// [`rare_fields`] by the general skim.
fn skimmed(p: &[u8]) -> (u32, RareFields<'_>) {
    let mut seq = 0;
    let mut parts: RareFields<'_> = [None; 5];
    skim(
        p,
        10,
        |n| matches!(n, 60 | 6 | 43 | 44 | 50),
        |v| seq = v as u32,
        |n, x| {
            let i = match n {
                60 => 0,
                6 => 1,
                43 => 2,
                44 => 3,
                _ => 4,
            };
            parts[i] = Some(x);
        },
    );
    (seq, parts)
}

/// The sequence of packet `p` when it has no rare field, read the quick way: tags of one
/// or two bytes, varints and lengths of one or two; `None` for anything else (a rare
/// field, a longer varint, a field cut short), which [`skim`] then reads from the start.
/// Where it answers, it answers as [`skim`]: the last sequence id, no rare field.
#[inline(always)]
fn usual_seq(p: &[u8]) -> Option<u32> {
    /// The varint at `p[*i..]` if it takes one or two bytes, moving `i` past it.
    #[inline(always)]
    fn short(p: &[u8], i: &mut usize) -> Option<u64> {
        let &a = p.get(*i)?;
        if a < 0x80 {
            *i += 1;
            return Some(a as u64);
        }
        let &b = p.get(*i + 1)?;
        if b >= 0x80 {
            return None;
        }
        *i += 2;
        Some((a & 0x7f) as u64 | (b as u64) << 7)
    }
    let mut seq = 0;
    let mut i = 0;
    while i < p.len() {
        let tag = short(p, &mut i)?;
        let num = tag >> 3;
        match tag & 7 {
            0 if num == 10 => seq = short(p, &mut i)? as u32,
            0 => drop(short(p, &mut i)?),
            2 if matches!(num, 60 | 6 | 43 | 44 | 50) => return None,
            2 => {
                let len = short(p, &mut i)? as usize;
                if len > p.len() - i {
                    return None;
                }
                i += len;
            }
            _ => return None,
        }
    }
    Some(seq)
}

/// A `ThreadDescriptor`'s (pid, tid), name and sort index.
pub fn thread_descriptor(b: &[u8]) -> ((i64, i64), Option<&[u8]>, Option<i64>) {
    let (mut pid, mut tid, mut name, mut sort) = (0, 0, None, None);
    for (num, v) in fields(b) {
        match (num, v) {
            (1, v) => pid = v.int().unwrap_or(0) as i32 as i64,
            (2, v) => tid = v.int().unwrap_or(0),
            (5, Value::Bytes(s)) if !s.is_empty() => name = Some(s),
            (3, v) => sort = v.int().map(|i| i as i32 as i64),
            _ => {}
        }
    }
    ((pid, tid), name, sort)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The quick read of a packet's sequence answers as the skim wherever it answers: on
    /// every packet of the generated fixtures, every cut of them and every one-byte change,
    /// and on a real Chromium trace's packets.
    #[test]
    fn the_quick_read_answers_as_the_skim() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
        let (mut answered, mut declined) = (0, 0);
        let mut check = |p: &[u8]| match usual_seq(p) {
            Some(seq) => {
                answered += 1;
                assert_eq!(skimmed(p), (seq, [None; 5]), "{p:?}");
            }
            None => declined += 1,
        };
        for entry in std::fs::read_dir(format!("{root}proto")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "pftrace") {
                continue;
            }
            let b = std::fs::read(&path).unwrap();
            let mut r = Reader::new(&b, 0);
            while let Some(p) = r.next_packet() {
                for cut in 0..=p.len() {
                    check(&p[..cut]);
                }
                let mut q = p.to_vec();
                for i in 0..q.len() {
                    let old = q[i];
                    for x in [0x00, 0x08, 0x32, 0x50, 0x7f, 0x80, 0xd2, 0xe2, 0xff] {
                        q[i] = x;
                        check(&q);
                    }
                    q[i] = old;
                }
            }
        }
        let gz = std::fs::File::open(format!("{root}real/chromium156_script_all.pftrace.gz"));
        let mut b = Vec::new();
        flate2::read::GzDecoder::new(gz.unwrap())
            .read_to_end(&mut b)
            .unwrap();
        let mut r = Reader::new(&b, 0);
        while let Some(p) = r.next_packet() {
            check(p);
        }
        assert!(
            answered > 100_000 && declined > 1_000,
            "{answered} {declined}"
        );
    }
}
