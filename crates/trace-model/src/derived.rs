//! Views derived from a finished trace at their first use, each computed once and kept
//! with the trace. A view's module owns its type and how it is computed from the trace;
//! the trace holds it here with its type erased, so that `trace.rs` imports none of the
//! modules that read a trace (and no file imports another in a circle).

use std::any::Any;
use std::sync::OnceLock;

/// One slot per view; empty until the view is first asked for.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    /// trace_processor's view (`perfetto::View`).
    perfetto: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl Derived {
    /// trace_processor's view, made by `make` at the first call.
    pub(crate) fn perfetto<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> &T {
        let v = self.perfetto.get_or_init(|| Box::new(make()));
        // Only `Trace::perfetto` fills this slot, always with one type.
        v.downcast_ref()
            .expect("the slot holds trace_processor's view")
    }
}
