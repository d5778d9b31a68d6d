//! What the model counts while building: every event it skips, repairs or cannot show yet.

use std::borrow::Cow;
use std::fmt;

use spall_format::{DiagnosticKind, Phase};

/// Model warnings. The `offset` of a model [`Warning`](spall_format::Warning) is the byte
/// offset of the event in the decoded input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ModelWarning {
    /// An `E` whose name differs from the `B` it closes (it still closes it).
    EndNameMismatch,
    /// An `E` with no open `B` on its thread (in JSON: none of its name and category);
    /// ignored.
    EndWithoutBegin,
    /// A `B` never closed; closed at the trace's last timestamp and flagged unfinished.
    UnclosedBegin,
    /// A span that starts inside its parent but ends after it; kept whole, one level deeper.
    PartialOverlap,
    /// An `X` with a negative or missing `dur`; its duration is taken as 0.
    BadDuration,
    /// A `C` argument that is not a number; that value was skipped.
    CounterNotNumeric,
    /// A `C` event with no `args` object; it has no values to record.
    CounterWithoutValues,
    /// An `M` event whose `args` are not the expected JSON; ignored.
    BadMetadata,
    /// A flow event (`s`, `t`, `f`) with no `id`; it cannot be linked.
    FlowWithoutId,
    /// A flow point inside no span of its thread (and no span after it, for an `f`); the
    /// flow is drawn without it.
    FlowUnbound,
    /// An async `e`, `F`, `T` or `p` with no open operation of its id; ignored.
    AsyncEndWithoutBegin,
    /// Async operations never ended; drawn to the trace's end and flagged unfinished.
    UnfinishedAsync,
    /// A V8 `ProfileChunk` that could not be read (no `Profile` before it, or no profile
    /// data); its samples are skipped.
    BadSamples,
    /// An event of a phase the model does not hold yet (per phase).
    UnmodelledPhase(Phase),
    /// A JSON `B` still open when the span it started in (an `X`, or a `B` ended out of
    /// order) ended; ended there, as trace_processor ends it.
    MisplacedEnd,
    /// A scheduler record of a system trace that could not be used, named as
    /// trace_processor's stat (`mismatched_sched_switch_tids`, `compact_sched_switch_skipped`,
    /// `compact_sched_waking_skipped`, `task_state_invalid`, `sched_switch_out_of_order`,
    /// `sched_pid_too_large`).
    Sched(&'static str),
}

/// The names [`ModelWarning::Sched`] takes.
pub(crate) const SCHED_STATS: [&str; 7] = [
    "mismatched_sched_switch_tids",
    "compact_sched_switch_skipped",
    "compact_sched_waking_skipped",
    "task_state_invalid",
    "sched_switch_out_of_order",
    "sched_waking_out_of_order",
    "sched_pid_too_large",
];

impl DiagnosticKind for ModelWarning {
    fn name(self) -> Cow<'static, str> {
        use ModelWarning::*;
        Cow::Borrowed(match self {
            EndNameMismatch => "end_name_mismatch",
            EndWithoutBegin => "end_without_begin",
            UnclosedBegin => "unclosed_begin",
            PartialOverlap => "partial_overlap",
            BadDuration => "bad_duration",
            CounterNotNumeric => "counter_not_numeric",
            CounterWithoutValues => "counter_without_values",
            BadMetadata => "bad_metadata",
            FlowWithoutId => "flow_without_id",
            FlowUnbound => "flow_unbound",
            AsyncEndWithoutBegin => "async_end_without_begin",
            UnfinishedAsync => "unfinished_async",
            BadSamples => "bad_samples",
            MisplacedEnd => "misplaced_end_event",
            Sched(name) => name,
            UnmodelledPhase(p) if p == Phase::MISSING => "event_without_phase",
            UnmodelledPhase(p) if p.0.is_ascii_graphic() => {
                return Cow::Owned(format!("unmodelled_phase_{}", p.as_char()))
            }
            UnmodelledPhase(p) => return Cow::Owned(format!("unmodelled_phase_0x{:02x}", p.0)),
        })
    }
}

impl fmt::Display for ModelWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.name())
    }
}
