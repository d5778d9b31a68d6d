//! What the targets that stream share (included with `#[path]`, no target of its own): a
//! sink that counts, and the check that a stream which finished gave the whole decode's
//! events and warnings.

use spall_format::{RawEvent, Summary};

/// Events counted, and their names' and arguments' bytes.
#[derive(Default, Debug, PartialEq)]
pub struct Count(pub u64, pub u64);

impl spall_format::EventSink for Count {
    fn event(&mut self, e: &RawEvent<'_>) {
        self.0 += 1;
        self.1 += e.name.len() as u64 + e.args.raw().map_or(0, str::len) as u64;
    }
}

/// The stream's summary and sinks against the whole decode's.
pub fn same(got: &Summary, sinks: Vec<Count>, whole: &Count, summary: &Summary) {
    let mut all = Count::default();
    for c in sinks {
        all.0 += c.0;
        all.1 += c.1;
    }
    assert_eq!(&all, whole);
    assert_eq!(got.events, summary.events);
    let counts = |s: &Summary| s.diagnostics.counts().collect::<Vec<_>>();
    assert_eq!(counts(got), counts(summary));
}
