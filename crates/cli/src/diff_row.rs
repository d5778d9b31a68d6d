//! One row of `diff`'s comparison, shared by its span and profile reports, and the word
//! a report gives its status.

use trace_model::changes::Status;
use trace_model::Group;

/// A status as the reports name it: a change for the worse is a regression.
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Slower => "regressed",
        Status::Faster => "improved",
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Unchanged => "unchanged",
    }
}

/// One row of the comparison.
pub struct Row<'a> {
    pub key: String,
    pub base: Option<&'a Group>,
    pub new: Option<&'a Group>,
    pub status: Status,
    pub delta: i64,
    pub ratio: Option<f64>,
    pub p_value: Option<f64>,
}
