//! A `tracing_subscriber::Layer` that records `tracing` spans and events.

use std::fmt::{self, Write as _};

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// Records `tracing` spans (a Begin on enter, an End on exit, with the span's fields as
/// args) and events (instants named by their message) into the running session, so code
/// instrumented with `#[tracing::instrument]` is profiled with no other change.
///
/// ```no_run
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let _guard = spall_trace::init("trace.spall")?;
/// let subscriber = tracing_subscriber::registry().with(spall_trace::SpallLayer::new());
/// tracing::subscriber::set_global_default(subscriber).unwrap();
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// Nothing is recorded while no session runs ([`init`](crate::init)).
#[derive(Clone, Copy, Debug, Default)]
pub struct SpallLayer {
    _private: (),
}

impl SpallLayer {
    /// The layer.
    pub fn new() -> SpallLayer {
        SpallLayer::default()
    }
}

/// A span's fields as `key=value, ...`, kept in its extensions.
#[derive(Default)]
struct Fields {
    text: String,
    /// An event's `message` field, which names the instant.
    message: Option<String>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" && self.message.is_none() {
            self.message = Some(format!("{value:?}"));
            return;
        }
        if !self.text.is_empty() {
            self.text.push_str(", ");
        }
        let _ = write!(self.text, "{}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        // Without the quotes `Debug` would add.
        self.record_debug(field, &format_args!("{value}"));
    }
}

impl<S> Layer<S> for SpallLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if !fields.text.is_empty() {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut ext = span.extensions_mut();
        match ext.get_mut::<Fields>() {
            Some(fields) => values.record(fields),
            None => {
                let mut fields = Fields::default();
                values.record(&mut fields);
                ext.insert(fields);
            }
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let ext = span.extensions();
        let args = ext.get::<Fields>().map_or("", |f| f.text.as_str());
        let _ = crate::begin(
            spall_layout::event_type::BEGIN,
            span.name(),
            spall_layout::cut(args).as_bytes(),
        )
        .leak();
    }

    fn on_exit(&self, _id: &Id, _ctx: Context<'_, S>) {
        crate::end_current();
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let name = fields.message.as_deref().unwrap_or(event.metadata().name());
        crate::instant_with(name, &fields.text);
    }
}
