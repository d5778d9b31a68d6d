//! The tracefs `trace` text format and systrace HTML pages.
