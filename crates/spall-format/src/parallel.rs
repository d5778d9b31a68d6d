//! Parallel decoding: the input cut into chunks in file order, each decoded on its own core
//! into its own sink.
//!
//! Chunks are whole runs of `.spall` version 3 buffers, or runs of elements of the JSON event
//! array. Their size is fixed ([`CHUNK_BYTES`]), not derived from the number of cores, so the
//! sinks receive the same events in the same order whatever the thread count: replaying the
//! sinks in order gives exactly the events of a sequential [`decode`](crate::decode).
//! Warnings are merged in chunk order.
//!
//! JSON chunk starts are guessed (a `{` after `}` and `,`) and then checked: chunk `k` parses
//! up to the first element at or after chunk `k + 1`'s guessed start, and a chunk whose
//! guess is not where the previous chunk stopped (it was inside a string or an event's
//! args) is thrown away and parsed again from where the previous one stopped. The result is
//! therefore always that of the sequential parser.
//!
//! Perfetto protobuf is cut by packet sequence rather than by bytes (`proto::parts`), with
//! the same contract. `perf script` text and collapsed stacks are cut where a record
//! starts, as their stream cuts them ([`ProfileStream`](crate::ProfileStream)).
//!
//! `.spall` version 1 files (a flat stream), small inputs and JSON that is not one event
//! array are decoded sequentially into a single sink.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{EventSink, RawEvent};
use crate::input::{detect, Bytes, DecodeOptions, Detected};
use crate::json::{self, LoopState, Stop};
use crate::sampled::{collapsed, perf, ProfileFormat};
use crate::{decode_plain, spall, Format, Input, Summary};

/// The size of a chunk: large enough that per-chunk costs vanish, small enough that two
/// cores share even a 50 MB input evenly.
pub const CHUNK_BYTES: usize = 4 << 20;

/// How far past a chunk's size the start of the next JSON chunk is looked for.
pub(crate) const GUESS_AHEAD: usize = 1 << 20;

/// Inputs below this size are decoded in one piece.
pub(crate) const PARALLEL_MIN: usize = 2 * CHUNK_BYTES;

/// Bytes done, shared by the chunks, reported through one callback.
struct Progress<'p> {
    done: AtomicU64,
    total: u64,
    report: &'p (dyn Fn(u64, u64) + Sync),
}

impl Progress<'_> {
    fn add(&self, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        (self.report)(done.min(self.total), self.total);
    }
}

/// Forwards events to `sink` and positions to a progress callback (the sequential path).
struct Forward<'p, S> {
    sink: S,
    progress: &'p (dyn Fn(u64, u64) + Sync),
}

impl<S: EventSink> EventSink for Forward<'_, S> {
    #[inline]
    fn event(&mut self, event: &RawEvent<'_>) {
        self.sink.event(event);
    }

    fn sample(&mut self, sample: &crate::RawSample<'_>) {
        self.sink.sample(sample);
    }

    fn track_counter(&mut self, counter: &crate::TrackCounter<'_>) {
        self.sink.track_counter(counter);
    }

    fn sample_kind_default(&mut self, kind: &str, unit: crate::SampleUnit) {
        self.sink.sample_kind_default(kind, unit);
    }

    fn tree_nodes(&mut self, nodes: usize) {
        self.sink.tree_nodes(nodes);
    }

    fn sched(&mut self, sched: &crate::RawSched<'_>) {
        self.sink.sched(sched);
    }

    fn sched_compact(&mut self, block: &crate::CompactSched<'_>) {
        self.sink.sched_compact(block);
    }

    fn progress(&mut self, done: u64, total: u64) {
        (self.progress)(done, total);
    }

    fn spall_buffer(&mut self, pid: u32, tid: u32) {
        self.sink.spall_buffer(pid, tid);
    }

    #[inline]
    fn spall_begin(&mut self, event: &RawEvent<'_>) {
        self.sink.spall_begin(event);
    }

    #[inline]
    fn spall_end(&mut self, event: &RawEvent<'_>) {
        self.sink.spall_end(event);
    }

    #[inline]
    fn thread_slice(&mut self, slice: &crate::ThreadSlice<'_>) {
        self.sink.thread_slice(slice);
    }
}

impl Input {
    /// Decodes every event, chunks in parallel, each chunk into a sink made by `new_sink`.
    /// Returns the sinks in file order: chunks are [`CHUNK_BYTES`] of whole `.spall`
    /// buffers or JSON elements, whatever the thread count, so replaying the sinks in order
    /// gives exactly the events of a sequential [`decode`](crate::decode). `progress` is
    /// called with `(bytes done, bytes total)` from any thread.
    pub fn decode_parallel<S, F>(
        &self,
        new_sink: F,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<(Summary, Vec<S>), Error>
    where
        S: EventSink + Send,
        F: Fn() -> S + Sync,
    {
        // Each chunk's pages leave resident memory once it is decoded: peak memory is then
        // the model being built, not the model plus the whole file.
        let release = |from: usize, to: usize| self.bytes.release(from..to);
        let r = decode_plain_parallel(
            self.bytes(),
            self.diagnostics.clone(),
            self.max_decompressed,
            &new_sink,
            progress,
            &release,
        );
        self.check_intact()?;
        let (mut summary, sinks) = r?;
        summary.gzip = self.gzip;
        summary.input_bytes = self.input_bytes;
        Ok((summary, sinks))
    }
}

/// [`Input::decode_parallel`] for bytes in memory (gzip is decompressed first).
pub fn decode_parallel<S, F>(
    bytes: &[u8],
    opts: &DecodeOptions,
    new_sink: F,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(Summary, Vec<S>), Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    if detect(bytes) == Detected::Gzip {
        return Input::from_bytes(Bytes::Owned(bytes.to_vec()), opts)?
            .decode_parallel(new_sink, progress);
    }
    decode_plain_parallel(
        bytes,
        Diagnostics::default(),
        opts.max_decompressed,
        &new_sink,
        progress,
        &|_, _| {},
    )
}

/// Called with each byte range decoded, from any thread.
type Release<'r> = &'r (dyn Fn(usize, usize) + Sync);

fn decode_plain_parallel<S, F>(
    b: &[u8],
    diags: Diagnostics,
    max_decompressed: u64,
    new_sink: &F,
    progress: &(dyn Fn(u64, u64) + Sync),
    release: Release<'_>,
) -> Result<(Summary, Vec<S>), Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    let parallel = b.len() >= PARALLEL_MIN;
    let result = match detect(b) {
        Detected::Spall if parallel => spall_v3(b, diags.clone(), new_sink, progress, release)?,
        Detected::Json if parallel => Some(json(b, diags.clone(), new_sink, progress, release)?),
        Detected::Proto if parallel => Some(proto(
            b,
            diags.clone(),
            max_decompressed,
            new_sink,
            progress,
        )?),
        Detected::Profile(f @ (ProfileFormat::Perf | ProfileFormat::Collapsed)) if parallel => {
            Some(profile_text(
                b,
                f,
                diags.clone(),
                new_sink,
                progress,
                release,
            ))
        }
        Detected::Profile(ProfileFormat::Speedscope) => {
            crate::sampled::walked_speedscope(b, diags.clone(), new_sink)
        }
        _ => None,
    };
    match result {
        Some(r) => Ok(r),
        None => {
            let mut f = Forward {
                sink: new_sink(),
                progress,
            };
            let summary = decode_plain(b, false, b.len() as u64, diags, max_decompressed, &mut f)?;
            Ok((summary, vec![f.sink]))
        }
    }
}

type Decoded<S> = (Summary, Vec<S>);

/// `.spall` version 3: runs of whole buffers. `None` for version 1.
fn spall_v3<S, F>(
    b: &[u8],
    mut diags: Diagnostics,
    new_sink: &F,
    progress: &(dyn Fn(u64, u64) + Sync),
    release: Release<'_>,
) -> Result<Option<Decoded<S>>, Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    let (header, scale) = spall::prepare(b, &mut diags)?;
    if header.version != 3 {
        return Ok(None);
    }
    let progress = Progress {
        done: AtomicU64::new(0),
        total: b.len() as u64,
        report: progress,
    };
    let chunks = spall::v3_chunks(b, CHUNK_BYTES);
    let parts: Vec<(S, Diagnostics, u64)> = chunks
        .par_iter()
        .map(|&range| {
            let mut sink = new_sink();
            let mut d = Diagnostics::default();
            let n = spall::decode_chunk(b, 3, range, 0, &scale, &mut sink, &mut d);
            release(range.0, range.1);
            progress.add((range.1 - range.0) as u64);
            (sink, d, n)
        })
        .collect();
    let (sinks, events) = in_order(parts, &mut diags);
    let summary = Summary {
        spall: Some(header),
        ..read_once(Format::SpallV3, b.len() as u64, events, diags)
    };
    Ok(Some((summary, sinks)))
}

/// The summary of a decode that read each of its `bytes` once, unwrapped from nothing.
fn read_once(format: Format, bytes: u64, events: u64, diagnostics: Diagnostics) -> Summary {
    Summary {
        format,
        gzip: false,
        input_bytes: bytes,
        decoded_bytes: bytes,
        parsed_bytes: bytes,
        events,
        diagnostics,
        spall: None,
        json: None,
    }
}

/// The chunks' sinks in file order and their event count, their warnings merged in order.
fn in_order<S>(parts: Vec<(S, Diagnostics, u64)>, diags: &mut Diagnostics) -> (Vec<S>, u64) {
    let mut events = 0;
    let mut sinks = Vec::with_capacity(parts.len());
    for (s, d, n) in parts {
        diags.merge(d);
        events += n;
        sinks.push(s);
    }
    (sinks, events)
}

/// `perf script` text or collapsed stacks: runs of about [`CHUNK_BYTES`] of whole records,
/// each cut where a record starts. Text that is not UTF-8 is warned about once, first, as
/// the sequential decode does.
fn profile_text<S, F>(
    b: &[u8],
    format: ProfileFormat,
    mut diags: Diagnostics,
    new_sink: &F,
    progress: &(dyn Fn(u64, u64) + Sync),
    release: Release<'_>,
) -> Decoded<S>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < b.len() {
        let target = start + CHUNK_BYTES;
        let cut = |w: &[u8]| match format {
            ProfileFormat::Perf => perf::run_end(w),
            _ => memchr::memrchr(b'\n', w).map(|i| i + 1),
        };
        let end = match b.get(start..target).map(cut) {
            Some(Some(p)) if p > 0 => start + p,
            Some(_) => b.len(),
            None => b.len(),
        };
        ranges.push((start, end));
        start = end;
    }
    if format == ProfileFormat::Perf && simdutf8::basic::from_utf8(b).is_err() {
        perf::warn_not_utf8(&mut diags);
    }
    let progress = Progress {
        done: AtomicU64::new(0),
        total: b.len() as u64,
        report: progress,
    };
    let total = b.len() as u64;
    let parts: Vec<(S, Diagnostics, u64)> = ranges
        .par_iter()
        .map(|&(s, e)| {
            let mut sink = new_sink();
            let mut d = Diagnostics::default();
            let n = match format {
                ProfileFormat::Perf => {
                    let tree = &mut perf::Tree::default();
                    perf::decode_run(
                        &b[s..e],
                        s as u64,
                        total,
                        &mut sink,
                        &mut d,
                        &mut true,
                        tree,
                    )
                }
                _ => collapsed::decode_run(&b[s..e], s as u64, total, &mut sink, &mut d),
            };
            release(s, e);
            progress.add((e - s) as u64);
            (sink, d, n)
        })
        .collect();
    let (sinks, events) = in_order(parts, &mut diags);
    let summary = read_once(Format::Profile(format), total, events, diags);
    (summary, sinks)
}

/// Perfetto protobuf: packet sequences in parts, each part on its own (see `proto::parts`).
fn proto<S, F>(
    b: &[u8],
    mut diags: Diagnostics,
    max_decompressed: u64,
    new_sink: &F,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Decoded<S>, Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    let progress = Progress {
        done: AtomicU64::new(0),
        total: b.len() as u64,
        report: progress,
    };
    let (events, sinks) =
        crate::proto::decode_parallel(b, &mut diags, max_decompressed, new_sink, &|n| {
            progress.add(n)
        })?;
    let summary = read_once(Format::Proto, b.len() as u64, events, diags);
    Ok((summary, sinks))
}

/// A parsed run of JSON array elements.
struct Run<S> {
    sink: S,
    diags: Diagnostics,
    stop: Stop,
    state: LoopState,
    events: u64,
}

fn run<S: EventSink>(
    text: &str,
    b: &[u8],
    from: usize,
    stop: usize,
    state: LoopState,
    sink: S,
) -> Run<S> {
    let mut sink = sink;
    let mut diags = Diagnostics::default();
    let (stop, state, events) = json::parse_run(text, b, from, stop, state, &mut sink, &mut diags);
    Run {
        sink,
        diags,
        stop,
        state,
        events,
    }
}

/// Guesses where an array element starts at or after `from`: a `{` whose previous
/// non-blank bytes are `,` and then `}`, preferring one whose object has a `ph` member (a
/// trace event rather than an object inside an event's args: Chromium's snapshots hold
/// arrays of objects). Looks at most `ahead` bytes ahead ([`GUESS_AHEAD`]), and reads no
/// further to check candidates. A wrong guess costs a chunk parsed twice.
pub(crate) fn guess_element(b: &[u8], from: usize, ahead: usize) -> Option<usize> {
    let window = &b[..b.len().min(from.saturating_add(ahead))];
    let mut candidates = memchr::memchr_iter(b'{', &window[from.min(window.len())..])
        .map(|j| from + j)
        .filter(|&i| {
            let before = |mut k: usize| {
                while k > 0 && json::scan::is_ws(b[k - 1]) {
                    k -= 1;
                }
                k.checked_sub(1).map(|k| (k, b[k]))
            };
            match before(i) {
                Some((k, b',')) => matches!(before(k), Some((_, b'}'))),
                _ => false,
            }
        });
    let first = candidates.next()?;
    let mut budget = ahead;
    let mut i = first;
    loop {
        let (event, stop) = json::scan::object_has_key(window, i, b"ph");
        if event {
            return Some(i);
        }
        budget = budget.saturating_sub(stop - i);
        match candidates.next() {
            Some(next) if budget > 0 => i = next,
            _ => return Some(first),
        }
    }
}

/// JSON: the top level parsed sequentially, the event array in chunks.
fn json<S, F>(
    b: &[u8],
    mut diags: Diagnostics,
    new_sink: &F,
    progress: &(dyn Fn(u64, u64) + Sync),
    release: Release<'_>,
) -> Result<Decoded<S>, Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    let utf8 = utf8_parallel(b);
    let text = utf8.unwrap_or("");
    spall_util::timing::stage("UTF-8 checked");
    let total = b.len() as u64;
    let progress = Progress {
        done: AtomicU64::new(0),
        total,
        report: progress,
    };
    let mut sinks: Vec<S> = Vec::new();
    let mut events = 0u64;
    let mut wasted = 0usize;
    let mut hook = |start: usize, d: &mut Diagnostics| -> (usize, bool) {
        let mut starts = vec![start];
        while let Some(g) = guess_element(b, starts[starts.len() - 1] + CHUNK_BYTES, GUESS_AHEAD) {
            starts.push(g);
        }
        spall_util::timing::stage("JSON chunk starts guessed");
        let runs: Vec<Run<S>> = (0..starts.len())
            .into_par_iter()
            .map(|k| {
                let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
                let state = LoopState {
                    after_value: false,
                    after_comma: k > 0,
                };
                let r = run(text, b, starts[k], stop, state, new_sink());
                release(starts[k], stop.min(b.len()));
                progress.add((stop.min(b.len()) - starts[k]) as u64);
                r
            })
            .collect();
        spall_util::timing::stage("JSON chunks decoded");
        let mut keep = |r: Run<S>| {
            d.merge(r.diags);
            events += r.events;
            sinks.push(r.sink);
            (r.stop, r.state)
        };
        // Accept each run that began exactly where the previous one stopped. A run whose
        // start was a wrong guess (inside a string or an event's args) is thrown away and
        // its chunk parsed again from where the previous run stopped, up to the next guess,
        // so one wrong guess costs one chunk parsed twice, not the rest of the file. The
        // last run has no stop position: it ends at `]` or at the end of the input.
        let (mut at, mut state) = (start, LoopState::default());
        let mut end = Stop::Eof;
        for (k, r) in runs.into_iter().enumerate() {
            let r = if starts[k] == at {
                r
            } else {
                let stop = starts.get(k + 1).copied().unwrap_or(usize::MAX);
                // The thrown-away run's bytes were parsed for nothing.
                wasted += (r.stop.at().unwrap_or(b.len()).min(stop)).saturating_sub(starts[k]);
                run(text, b, at, stop, state, new_sink())
            };
            match keep(r) {
                (Stop::At(next), s) => (at, state) = (next, s),
                (other, _) => {
                    end = other;
                    break;
                }
            }
        }
        spall_util::timing::stage("wrong guesses decoded again");
        match end {
            Stop::Closed(e) => (e, false),
            Stop::Eof => (b.len(), true),
            Stop::At(_) => unreachable!("a run with no stop position stops at ] or the end"),
        }
    };
    let mut top = Forward {
        sink: new_sink(),
        progress: &|_, _| {},
    };
    let (info, top_events) = json::decode_hooked(b, utf8, &mut top, &mut diags, Some(&mut hook))?;
    // Only `systemTraceEvents` gives events outside the array: they are in the top's sink.
    (progress.report)(total, total);
    let mut all = Vec::with_capacity(sinks.len() + 1);
    all.push(top.sink);
    all.extend(sinks);
    let summary = Summary {
        format: Format::Json,
        gzip: false,
        input_bytes: total,
        decoded_bytes: total,
        parsed_bytes: total + wasted as u64,
        events: events + top_events,
        diagnostics: diags,
        spall: None,
        json: Some(info),
    };
    Ok((summary, all))
}

/// `b` as text if it is all UTF-8, checked in chunks on every core. The pages it maps stay
/// for the decode that follows (released then, chunk by chunk): mapping them twice costs
/// more than the memory they hold meanwhile, which the page cache shares.
fn utf8_parallel(b: &[u8]) -> Option<&str> {
    // Cut only before a byte that starts a character, so each piece validates alone.
    let mut cuts = vec![0];
    let mut at = CHUNK_BYTES;
    while at < b.len() {
        let mut c = at;
        while c < b.len() && c < at + 4 && (b[c] & 0xC0) == 0x80 {
            c += 1;
        }
        cuts.push(c);
        at = c + CHUNK_BYTES;
    }
    cuts.push(b.len());
    let ok = cuts
        .par_windows(2)
        .all(|w| std::str::from_utf8(&b[w[0]..w[1]]).is_ok());
    if !ok {
        return None;
    }
    // SAFETY: every piece is valid UTF-8 and each cut lies before a byte that starts a
    // character (a cut that found four continuation bytes in a row made its piece invalid),
    // so the concatenation, `b`, is valid UTF-8.
    #[allow(unsafe_code)]
    Some(unsafe { std::str::from_utf8_unchecked(b) })
}

#[cfg(test)]
mod tests {
    use super::{guess_element, GUESS_AHEAD};

    #[test]
    fn guess_skips_objects_inside_args() {
        // A Chromium snapshot: an array of objects in the args, then the next event.
        let b = br#"[{"ph":"O","args":{"tiles":[{"id":1},{"id":2},{"id":3}]}},
{"name":"a","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}]"#;
        let inside = b.windows(5).position(|w| w == b"tiles").unwrap();
        let next = b.windows(8).position(|w| w == br#"{"name":"#).unwrap();
        assert_eq!(guess_element(b, inside, GUESS_AHEAD), Some(next));
    }

    #[test]
    fn guess_without_ph_keeps_the_first_candidate() {
        let b = br#"[{"a":1},{"b":2},{"c":3}]"#;
        assert_eq!(guess_element(b, 2, GUESS_AHEAD), Some(9));
        assert_eq!(guess_element(b, 20, GUESS_AHEAD), None);
    }
}
