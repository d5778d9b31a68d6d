//! The memory a load will take, estimated before the model is built.
//!
//! The decoder counts the events of the input's first [`SAMPLE_BYTES`] by kind (a few
//! milliseconds), the counts are scaled to the whole input, and each kind is charged its
//! peak cost while loading (docs/PERFORMANCE.md, "Memory guard"). Decompressed gzip text
//! is held in memory and counts in full; a mapped file does not (its pages are released as
//! they are decoded, and the page cache is reclaimable).
//!
//! A load's check looks at the first [`GLANCE_BYTES`] first: an input that fits with room
//! to spare (see [`check_memory`]) is not decoded further, so the bytes counted twice are
//! a sixteenth of the sample's; only one that might not fit has its full sample counted.

use spall_format::{Error, ErrorKind, EventSink, Input, MemoryLimit, Phase, RawEvent, RawSample};
use spall_util::{human_bytes, LimitSource};

/// How much of the input is decoded to count its events.
pub const SAMPLE_BYTES: usize = 4 << 20;

/// How much of the input a load's check decodes first ([`check_memory`]).
pub const GLANCE_BYTES: usize = 256 << 10;
/// An input fits at a glance when its glance's estimate, this many times over, is within
/// the limit: room for a start that is sparser than the rest.
const GLANCE_MARGIN: u64 = 4;
/// ... and the input's size, this many times over, is within the limit too: the largest
/// peak measured is under 5 bytes a byte of input (the 300 MB `compact_sched` trace's
/// 1.28–1.45 GB, docs/PERFORMANCE.md). Inputs that may take more (deep collapsed stacks, packets
/// compressed inside a file) are only caught where the part sampled shows them, as with the
/// full sample.
const GLANCE_SIZE_TIMES: u64 = 8;

/// Peak bytes per span while loading a `.spall` file: the model's lanes (29) and the index
/// (8), plus the chunks' closed spans (24), some of which coexist with the lanes.
const SPALL_SPAN_BYTES: u64 = 48;
/// The same for JSON, whose B/E matching and argument ranges add to it.
const JSON_SPAN_BYTES: u64 = 90;
/// Peak bytes per event of another kind (counters, instants, async, flows, `P` events).
const EVENT_BYTES: u64 = 40;
/// Peak bytes per sample of a sampling profile: its time, leaf frame and weight in the
/// model (20), and the builder's growing vectors of them.
const PROFILE_SAMPLE_BYTES: u64 = 32;
/// Peak bytes per frame of a sample's stack: the viewer's stacks over time, a box (37
/// bytes, and its index) for every 2 to 12 stack frames of samples on real profiles
/// (consecutive samples' common frames merge), with the vectors' slack.
const STACK_FRAME_BYTES: u64 = 20;
/// The model's fixed costs, and the viewer's.
const BASE_BYTES: u64 = 16 << 20;

/// What a load is expected to need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Peak bytes.
    pub bytes: u64,
    /// Spans expected (counted, or extrapolated from [`sampled`](Self::sampled)).
    pub spans: u64,
    /// Events other than spans, a profile's samples included (metadata not counted).
    pub other_events: u64,
    /// Bytes of the input that were decoded to count (all of it for small inputs).
    pub sampled: u64,
    /// Bytes of decompressed text held in memory (gzip input).
    pub held: u64,
    /// A profile's stack frames, over its samples (the viewer's stacks over time are a box
    /// for every 2 to 12 of them).
    pub stack_frames: u64,
}

impl MemoryEstimate {
    /// What the estimate rests on, for messages.
    pub fn basis(&self) -> String {
        let m = |n: u64| match n {
            0..1_000 => n.to_string(),
            1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
            _ => format!("{:.1}M", n as f64 / 1e6),
        };
        let mut s = format!(
            "{} spans and {} other events, counted in the first {}",
            m(self.spans),
            m(self.other_events),
            human_bytes(self.sampled)
        );
        if self.held > 0 {
            s += &format!(", plus {} of decompressed text", human_bytes(self.held));
        }
        s
    }
}

#[derive(Default)]
struct Count {
    spans: u64,
    other: u64,
    /// Samples of a sampling profile, and the frames of their stacks.
    samples: u64,
    stack_frames: u64,
}

impl Count {
    #[inline]
    fn phase(&mut self, ph: Phase) {
        match ph {
            Phase::BEGIN | Phase::COMPLETE => self.spans += 1,
            Phase::END | Phase::METADATA => {}
            _ => self.other += 1,
        }
    }
}

impl EventSink for Count {
    fn event(&mut self, e: &RawEvent<'_>) {
        self.phase(e.ph);
    }

    /// Counted by its phase, as [`event`](Self::event) counts it, with no event built
    /// (a Perfetto file's sample is mostly thread slices).
    fn thread_slice(&mut self, s: &spall_format::ThreadSlice<'_>) {
        self.phase(s.ph);
    }

    fn track_counter(&mut self, _: &spall_format::TrackCounter<'_>) {
        self.other += 1;
    }

    fn sample(&mut self, s: &RawSample<'_>) {
        self.samples += 1;
        self.stack_frames += s.stack.len() as u64;
    }

    fn sched(&mut self, _: &spall_format::RawSched<'_>) {
        // A scheduler record peaks at about 90 bytes (its 40-byte row while the 24-byte
        // slice, the two 24-byte thread states of a switch, or a waking's state are made):
        // three other events' worth, with room.
        self.other += 3;
    }

    fn sched_compact(&mut self, block: &spall_format::CompactSched<'_>) {
        // A compact record is held in 12 bytes until the replay, which frees them as it
        // goes; the slices and the states' room are allocated whole: about 75 bytes of
        // heap a record at the peak (45 resident), two other events' worth.
        self.other += 2 * block.len() as u64;
    }
}

/// Estimates the peak memory of loading `input`.
pub fn estimate_memory(input: &Input) -> MemoryEstimate {
    estimate_bytes(input.bytes(), input.is_owned())
}

/// [`estimate_memory`] for decoded bytes; `held`: count them as memory the load takes (they
/// are not mapped from a file, nor allocated already).
pub(crate) fn estimate_bytes(bytes: &[u8], held: bool) -> MemoryEstimate {
    estimate_sample(
        &bytes[..bytes.len().min(SAMPLE_BYTES)],
        bytes.len() as u64,
        held,
    )
}

/// [`estimate_memory`] before the whole input is there (a file read in chunks): the events
/// of `sample`, its first bytes (up to [`SAMPLE_BYTES`] are used), scaled to `total` bytes;
/// `held`: the input's bytes will be held in memory as well.
pub fn estimate_sample(sample: &[u8], total: u64, held: bool) -> MemoryEstimate {
    let sample = &sample[..sample.len().min(SAMPLE_BYTES)];
    let mut count = Count::default();
    // A cut-off sample decodes like a live trace: what is complete, the rest warned about;
    // but a JSON profile cut off gives nothing, so it is not read (up to three times) for
    // nothing.
    if sample.len() as u64 >= total || spall_format::sampled::cut_decodes(sample) {
        let _ = spall_format::decode(sample, &mut count);
    }
    let scale = |n: u64| {
        if sample.is_empty() {
            0
        } else {
            (n as u128 * total as u128 / sample.len() as u128) as u64
        }
    };
    let (spans, other) = (scale(count.spans), scale(count.other));
    let (samples, stack_frames) = (scale(count.samples), scale(count.stack_frames));
    let other_events = other + samples;
    let span_bytes = match spall_format::detect(sample) {
        spall_format::Detected::Json | spall_format::Detected::Proto => JSON_SPAN_BYTES,
        _ => SPALL_SPAN_BYTES,
    };
    let held = if held { total } else { 0 };
    MemoryEstimate {
        bytes: BASE_BYTES
            + held
            + spans * span_bytes
            + other * EVENT_BYTES
            + samples * PROFILE_SAMPLE_BYTES
            + stack_frames * STACK_FRAME_BYTES,
        spans,
        other_events,
        sampled: sample.len() as u64,
        held,
        stack_frames,
    }
}

/// Fails with [`ErrorKind::NotEnoughMemory`] when the estimate exceeds the limit.
///
/// An input that fits at a glance is not sampled further: the estimate of its first
/// [`GLANCE_BYTES`], four times over, and its size, eight times over, are both within the
/// limit. Any other is estimated from its full sample ([`estimate_memory`]).
pub fn check_memory(input: &Input, limit: MemoryLimit) -> Result<(), Error> {
    check_bytes(input.bytes(), input.is_owned(), limit)
}

/// [`check_memory`] for decoded bytes (`held` as in [`estimate_bytes`]).
pub(crate) fn check_bytes(bytes: &[u8], held: bool, limit: MemoryLimit) -> Result<(), Error> {
    match limit.resolve() {
        Some(resolved) => fits(&estimate_within(bytes, held, resolved.0), resolved),
        None => Ok(()),
    }
}

/// The estimate [`check_bytes`] decides by against a limit of `most` bytes: the glance's
/// where the input fits at a glance, else the full sample's.
fn estimate_within(bytes: &[u8], held: bool, most: u64) -> MemoryEstimate {
    let total = bytes.len() as u64;
    if bytes.len() > GLANCE_BYTES && total.saturating_mul(GLANCE_SIZE_TIMES) <= most {
        let glance = estimate_sample(&bytes[..GLANCE_BYTES], total, held);
        if glance.bytes.saturating_mul(GLANCE_MARGIN) <= most {
            return glance;
        }
    }
    estimate_bytes(bytes, held)
}

/// Fails with [`ErrorKind::NotEnoughMemory`] when `e` exceeds the limit.
pub fn check_estimate(e: &MemoryEstimate, limit: MemoryLimit) -> Result<(), Error> {
    limit.resolve().map_or(Ok(()), |resolved| fits(e, resolved))
}

/// [`check_estimate`] against a limit already resolved (it reads the system's files).
fn fits(e: &MemoryEstimate, (limit, source): (u64, LimitSource)) -> Result<(), Error> {
    if e.bytes <= limit {
        return Ok(());
    }
    let kind = ErrorKind::NotEnoughMemory {
        needed: Some(e.bytes),
        limit,
        source,
        basis: e.basis(),
    };
    Err(Error::new(kind, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use spall_format::synth::Synth;

    /// A generated JSON trace of `spans` spans.
    fn json(spans: u64) -> Vec<u8> {
        let mut b = Vec::new();
        let s = Synth {
            spans,
            ..Synth::default()
        };
        s.write_json(&mut b, true).unwrap();
        b
    }

    #[test]
    fn an_input_that_fits_with_room_is_decoded_only_at_a_glance() {
        let b = json(200_000);
        assert!(b.len() > SAMPLE_BYTES, "{} bytes", b.len());
        let e = estimate_within(&b, false, u64::MAX / 16);
        assert_eq!(e.sampled, GLANCE_BYTES as u64);
        // Scaled from the glance, the spans are still near the truth.
        let ratio = e.spans as f64 / 200_000.0;
        assert!((0.8..1.25).contains(&ratio), "{} spans", e.spans);
    }

    #[test]
    fn an_input_that_might_not_fit_is_sampled_in_full() {
        // Too large for the limit by the size rule, though its glance leaves room.
        let b = json(200_000);
        let size = b.len() as u64;
        let most = size * GLANCE_SIZE_TIMES - 1;
        let glance = estimate_sample(&b[..GLANCE_BYTES], size, false);
        assert!(glance.bytes * GLANCE_MARGIN <= most, "{glance:?}");
        assert_eq!(
            estimate_within(&b, false, most).sampled,
            SAMPLE_BYTES as u64
        );
        // Small enough by size (its estimate's fixed costs weigh more), but its glance's
        // estimate leaves no room four times over.
        let b = json(60_000);
        assert!(b.len() > SAMPLE_BYTES, "{} bytes", b.len());
        let size = b.len() as u64;
        let glance = estimate_sample(&b[..GLANCE_BYTES], size, false);
        let most = size * GLANCE_SIZE_TIMES;
        assert!(glance.bytes * GLANCE_MARGIN > most, "{glance:?}");
        assert_eq!(
            estimate_within(&b, false, most).sampled,
            SAMPLE_BYTES as u64
        );
        // Within both rules, exactly at the limit: the glance decides.
        let most = glance.bytes * GLANCE_MARGIN;
        assert_eq!(
            estimate_within(&b, false, most).sampled,
            GLANCE_BYTES as u64
        );
    }

    #[test]
    fn a_small_input_is_estimated_whole() {
        let b = json(1_000);
        assert!(b.len() <= GLANCE_BYTES);
        let e = estimate_within(&b, false, u64::MAX);
        assert_eq!((e.sampled, e.spans), (b.len() as u64, 1_000));
    }
}
