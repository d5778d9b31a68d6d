//! The two rules by which every count of time clips a span: how much of it a range holds
//! ([`clip_span`]), and how much of a child its parent counts ([`child_time`], the rule of
//! self time).
//!
//! A range is half-open, `[from, to)`. A span `[start, end)` is in it when the two share
//! time; a zero-length span at `t` when `from <= t < to`. A span in the range counts with
//! the part of it inside (`min(end, to) - max(start, from)`), so a span straddling an edge
//! is cut there, one merely touching an edge is out, and an empty range holds nothing. The
//! rule, with examples, is in docs/MODEL.md ("Ranges").
//!
//! # Example
//!
//! ```
//! use trace_model::clip_span;
//!
//! assert_eq!(clip_span(0, 10, 5, 20), Some(5)); // cut at the range's start
//! assert_eq!(clip_span(20, 30, 5, 20), None); // starts where the range ends
//! assert_eq!(clip_span(5, 5, 5, 20), Some(0)); // zero-length, at the start: in
//! assert_eq!(clip_span(20, 20, 5, 20), None); // zero-length, at the end: out
//! ```

/// How much of the span `[start, end)` lies in the range `[from, to)`: `None` when the span
/// is not in it (see the module's rule: a zero-length span is in when `from <= start < to`).
#[inline]
pub fn clip_span(start: i64, end: i64, from: i64, to: i64) -> Option<i64> {
    let (a, b) = (start.max(from), end.min(to));
    let inside = a < b || (start == end && from <= start && start < to);
    inside.then_some(b - a)
}

/// The rule of self time, which a span's details, the statistics and the flame graph
/// share (each in its own loop): a span's self time is its time less its direct
/// children's, each child `[start, end)` counted only up to the parent's end `parent_end`
/// (a child that outlives its parent, a partial overlap in a broken trace, takes only
/// the part inside it) and only within the range `[from, to)`. A child outside either
/// counts 0.
#[inline]
pub(crate) fn child_time(start: i64, end: i64, parent_end: i64, (from, to): (i64, i64)) -> i64 {
    clip_span(start, end.min(parent_end), from, to).unwrap_or(0)
}
