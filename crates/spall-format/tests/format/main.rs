//! spall-format's integration tests, one binary: a module per area, through the public
//! API only.

mod common;

mod corpus;
mod errors;
mod fuzz_regressions;
mod json_leniency;
mod parallel;
mod spall_cases;
mod systrace;
mod truncation;
