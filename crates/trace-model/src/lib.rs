//! The trace model: raw events from [`spall_format`] turned into an immutable [`Trace`].
//!
//! A trace holds processes and threads (named and ordered from metadata), interned names,
//! and each thread's spans in *lanes*, one per depth: within a lane spans are sorted by
//! start and never overlap. It also keeps instants, counter series, flows, async events and
//! metadata, and counts in [`Trace::diagnostics`] every event it repaired or could not place.
//! The rules (B/E matching, nesting, unfinished spans, partial overlaps) are in
//! `docs/MODEL.md`.
//!
//! # Example
//!
//! ```
//! use trace_model::{load_bytes, StatsFilter};
//!
//! let json = br#"[
//!   {"name": "frame", "ph": "B", "ts": 0, "pid": 1, "tid": 1},
//!   {"name": "draw", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
//!   {"name": "frame", "ph": "E", "ts": 10, "pid": 1, "tid": 1}
//! ]"#;
//! let trace = load_bytes(json).unwrap();
//! assert_eq!(trace.span_count(), 2);
//! assert_eq!(trace.max_depth(), 2);
//! let stats = trace.stats(&StatsFilter::default());
//! let frame = &stats[0];
//! assert_eq!(trace.str(frame.name), "frame");
//! assert_eq!((frame.total_ns, frame.self_ns), (10_000, 8_000));
//! ```

#![warn(missing_docs)]

pub mod annotations;
mod args;
mod asyncs;
mod build;
pub mod changes;
mod clip;
mod demangle;
mod derived;
mod diag;
mod event_kinds;
mod export;
mod find;
mod flame_samples;
mod flame_tree;
mod flows;
mod histogram;
mod load;
mod memory;
mod nav;
mod nest;
mod noise;
mod order;
pub mod perfetto;
mod profile;
mod radix;
mod range;
mod sample_lanes;
mod samples;
pub mod sched;
mod span;
mod stack;
mod stats;
mod stream;
mod strings;
mod trace;
mod transfer;

pub use annotations::{Annotations, Marker};
pub use args::{ArgsId, ArgsStore};
pub use asyncs::{async_flags, AsyncSlice, AsyncTrack, NO_PARENT};
pub use build::TraceBuilder;
pub use clip::clip_span;
pub use diag::ModelWarning;
pub use event_kinds::{
    AsyncEvent, CounterSeries, Flow, FlowPoint, Instant, InstantScope, Metadata,
};
pub use export::SpallExport;
pub use flame_samples::{weight_text, SampleStats};
pub use flame_tree::{label_text, FlameOptions, FlameSort, FlameTree, FrameLabel};
pub use flows::FlowLink;
pub use histogram::DurationHistogram;
pub use load::{load, load_bytes, load_with, LoadSteps};
pub use memory::{
    check_estimate, check_memory, estimate_memory, estimate_sample, MemoryEstimate, GLANCE_BYTES,
    SAMPLE_BYTES,
};
pub use nav::Hit;
pub use noise::{
    mann_whitney_p, sampling_p, Judgement, Measure, NoiseRules, Observation, Verdict, MIN_SAMPLES,
};
pub use order::DisplayOrder;
pub use range::{AsyncRangeStats, CounterRangeStats};
pub use sample_lanes::{frame_at_depth, frame_depths, MAX_STACK_DEPTH};
pub use samples::{Frame, SampleTrack, NO_CPU, NO_FRAME};
pub use spall_format::tagged;
pub use spall_format::SampleUnit;
pub use spall_format::{DecodeOptions, Diagnostics, Error, ErrorKind, MemoryLimit, Summary};
pub use span::{flags, ExtId, Lane, Process, SpanData, SpanRef, Thread};
pub use stats::{percentile, Group, GroupBy, NameFilter, NameStats, StatsFilter};
pub use stream::LoadStream;
pub use strings::{StrId, Strings};
pub use trace::Trace;
pub use transfer::{
    ColumnFill, ColumnSink, ColumnSource, Columns, MemoryColumns, Stream, TraceIn, TransferError,
    TransferReader, TransferWriter,
};
