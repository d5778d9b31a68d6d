//! A system trace's `compact_sched` blocks read ahead on a second thread. A system trace's
//! ftrace bundles are one sequence, so one part ([`parts`](super::parts)), decoded on one
//! core while the others wait; most of its work is reading the blocks' packed columns, which
//! needs nothing from the packets before. So where a decode is one part and has a spare
//! core, a reader walks the part's packets as the decoder will, reads each block's intern
//! table and columns (its warnings kept with it) and hands it over; the decoder hands on the
//! columns of a block it reaches (the sink merges them as it stores them), or reads the
//! block itself (one the reader did not see: in a bundle of compressed packets, whose
//! offsets are not the file's). The records and
//! warnings are those of the block read where it lies, so the events do not depend on which
//! thread read it.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use super::compact::read_columns;
use super::scan::Found;
use super::wire::{Reader, Value};
use crate::diag::Diagnostics;

/// Blocks in flight between the two threads (their columns: a few MB).
const IN_FLIGHT: usize = 16;

/// A block's columns.
type Columns = [Vec<u64>; 12];

/// One block, its columns read (merged where they are stored, on the decoder's thread: that
/// half of the work stays there, as rows made here would be read from the other core).
pub(super) struct Block {
    /// Where it lies in the file: the key the decoder finds it by.
    at: u64,
    /// Its switches and wakings; `None` where it broke (and was warned of).
    pub(super) counts: Option<(usize, usize)>,
    pub(super) comms: Vec<Cow<'static, str>>,
    pub(super) cols: Columns,
    /// What reading it warned of.
    pub(super) diags: Diagnostics,
}

/// The decoder's end: blocks in file order, and their columns going back for reuse.
pub(super) struct Ahead {
    from: Receiver<Block>,
    back: SyncSender<Columns>,
    pending: Option<Block>,
    /// Whether the packets being decoded are the file's own bytes, which the reader walks.
    pub(super) live: bool,
}

impl Ahead {
    /// The block at byte `at`, if the reader read it.
    pub(super) fn take(&mut self, at: u64) -> Option<Block> {
        if !self.live {
            return None;
        }
        loop {
            let b = match self.pending.take() {
                Some(b) => b,
                None => self.from.recv().ok()?,
            };
            match b.at.cmp(&at) {
                // A block the decoder did not reach (its packet or bundle broke before it).
                Ordering::Less => self.give_back(b.cols),
                Ordering::Equal => return Some(b),
                Ordering::Greater => {
                    self.pending = Some(b);
                    return None;
                }
            }
        }
    }

    /// Columns for the reader to fill again.
    pub(super) fn give_back(&mut self, cols: Columns) {
        let _ = self.back.try_send(cols);
    }
}

/// Whether a decode of `parts` parts may read ahead: one part, and a spare core.
pub(super) fn worth_it(parts: usize) -> bool {
    !cfg!(target_arch = "wasm32") && parts == 1 && rayon::current_num_threads() > 1
}

/// Runs `decode` with a reader of the blocks in `ranges` (a part's, as
/// `parts::plan` gives them: buffer, start, end) ahead of it (`decode` sets the
/// decoder's [`Ahead`] from the one given, and drops it when done).
pub(super) fn with_reader<R>(
    f: &Found<'_>,
    ranges: &[(u32, usize, usize)],
    decode: impl FnOnce(Ahead) -> R,
) -> R {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (to, from) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let (back, recycled) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let to = Sender { to, stop: &stop };
        s.spawn(move || read(f, ranges, &to, &recycled));
        // The reader stops once the decode ends, even by a panic, which would otherwise
        // wait for the reader while it waits for room (the receiver lives in the decoder).
        let _stop = Stop(&stop);
        decode(Ahead {
            from,
            back,
            pending: None,
            live: false,
        })
    })
}

/// Sets its flag when dropped.
struct Stop<'a>(&'a AtomicBool);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.store(true, AtomicOrdering::Relaxed);
    }
}

/// The reader's end: a block is sent once there is room, unless the decode has ended.
struct Sender<'a> {
    to: SyncSender<Block>,
    stop: &'a AtomicBool,
}

impl Sender<'_> {
    /// False once the decode has ended.
    fn send(&self, mut b: Block) -> bool {
        loop {
            if self.stop.load(AtomicOrdering::Relaxed) {
                return false;
            }
            match self.to.try_send(b) {
                Ok(()) => return true,
                Err(TrySendError::Full(again)) => {
                    b = again;
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
    }
}

/// The reader: every block of the file's own bytes in `ranges`, in the decoder's order.
fn read(
    f: &Found<'_>,
    ranges: &[(u32, usize, usize)],
    to: &Sender<'_>,
    recycled: &Receiver<Columns>,
) {
    for &(buf, start, end) in ranges.iter().filter(|r| r.0 == 0) {
        let b = f.bufs[buf as usize];
        // As `Decoder::run` walks them: packets, or fields holding them.
        let mut r = Reader::new(&b.bytes[start..end], b.at + start as u64);
        loop {
            let p = match r.next_packet() {
                Some(p) => p,
                None => match r.next_field() {
                    Some(Ok(field)) => match field.value {
                        Value::Bytes(p) => p,
                        _ => continue,
                    },
                    _ => break,
                },
            };
            // As `Decoder::packet` and `Ftrace::bundle` find them, up to a field that breaks.
            let mut pr = Reader::new(p, r.offset_of(p));
            while let Some(Ok(fl)) = pr.next_field() {
                let (1, Value::Bytes(bundle)) = (fl.num, fl.value) else {
                    continue;
                };
                let mut br = Reader::new(bundle, pr.offset_of(bundle));
                while let Some(Ok(g)) = br.next_field() {
                    let (4, Value::Bytes(cs)) = (g.num, g.value) else {
                        continue;
                    };
                    let at = br.offset_of(cs);
                    let mut cols = recycled.try_recv().unwrap_or_default();
                    let (mut interned, mut diags) = (Vec::new(), Diagnostics::default());
                    let counts = read_columns(cs, at, &mut cols, &mut interned, &mut diags);
                    let comms = interned
                        .into_iter()
                        .map(|c| Cow::Owned(c.into_owned()))
                        .collect();
                    if !to.send(Block {
                        at,
                        counts,
                        comms,
                        cols,
                        diags,
                    }) {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use spall_test_support::{compact_sched_cpus, compact_sched_trace, field, fixture_bytes};

    use crate::event::{EventSink, RawEvent};
    use crate::ftrace::{CompactSched, RawSched};

    /// Everything a decode hands out, as text, in order.
    #[derive(Default)]
    struct Records(Vec<String>);

    impl EventSink for Records {
        fn event(&mut self, e: &RawEvent<'_>) {
            self.0.push(format!("{e:?}"));
        }
        fn sched(&mut self, s: &RawSched<'_>) {
            self.0.push(format!("{s:?}"));
        }
        fn sched_compact(&mut self, b: &CompactSched<'_>) {
            self.0.push(format!("{b:?}"));
        }
    }

    /// The records and the warnings of a decode on `threads` threads.
    fn decode(bytes: &[u8], threads: usize) -> (Vec<String>, String) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let bytes = match bytes.starts_with(&[0x1f, 0x8b]) {
            true => crate::input::gunzip(bytes, u64::MAX, &mut Default::default()).unwrap(),
            false => bytes.to_vec(),
        };
        pool.install(|| {
            // The parts' decode itself: a small input as a large one is decoded.
            let mut d = crate::Diagnostics::default();
            let (_, sinks) =
                super::super::decode_parallel(&bytes, &mut d, u64::MAX, &Records::default, &|_| {})
                    .unwrap();
            let records = sinks.into_iter().flat_map(|s| s.0).collect();
            (records, format!("{d:?}"))
        })
    }

    /// A bundle whose block has a column cut inside a number, and one whose columns
    /// differ in length: each warned of where it lies.
    fn broken_blocks() -> Vec<u8> {
        let mut cs = Vec::new();
        field(1, &[5, 6, 0x80], &mut cs);
        let mut bundle = vec![0x08, 2];
        field(4, &cs, &mut bundle);
        let mut packet = Vec::new();
        field(1, &bundle, &mut packet);
        let mut trace = Vec::new();
        field(1, &packet, &mut trace);
        let short: [(u64, &[u64]); 5] = [
            (1, &[5, 6, 7]),
            (2, &[0, 1]),
            (3, &[1, 2, 3]),
            (4, &[120; 3]),
            (6, &[0; 3]),
        ];
        trace.extend(compact_sched_trace(1, &["x"], &short));
        trace
    }

    /// A block read ahead on another thread gives the records and warnings it gives read
    /// where it lies: the decode on two threads (which reads ahead: one part) is the decode
    /// on one.
    #[test]
    fn blocks_read_ahead_are_the_blocks_read_in_place() {
        let mut inputs = vec![
            ("four_cpus", compact_sched_cpus(4, 5_000)),
            ("broken", broken_blocks()),
        ];
        for f in [
            "compact.pftrace.gz",
            "events.pftrace.gz",
            "hostile.pftrace.gz",
        ] {
            inputs.push((f, fixture_bytes(&format!("systrace/{f}"))));
        }
        for (name, bytes) in inputs {
            let (one, two) = (decode(&bytes, 1), decode(&bytes, 2));
            assert!(!one.0.is_empty(), "{name}: nothing decoded");
            assert!(one == two, "{name}: {:?}\n{:?}", one.1, two.1);
        }
        let (_, warned) = decode(&broken_blocks(), 2);
        assert!(
            warned.contains("breaks") && warned.contains("different lengths"),
            "{warned}"
        );
    }

    /// Damaged anywhere (a byte changed, or the file cut), the two decodes still agree: the
    /// reader and the decoder skip the same broken packets and blocks.
    #[test]
    fn damaged_traces_read_ahead_as_in_place() {
        let good = compact_sched_cpus(3, 300);
        let mut x = 0x2545f4914f6cdd1du64;
        for i in 0..120 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x % good.len() as u64) as usize;
            let bad = match i % 3 {
                0 => good[..at].to_vec(),
                _ => {
                    let mut b = good.clone();
                    b[at] ^= (x >> 32) as u8 | 1;
                    b
                }
            };
            assert!(decode(&bad, 1) == decode(&bad, 2), "damage {i} at {at}");
        }
    }
}
