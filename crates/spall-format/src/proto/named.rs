//! Names of Perfetto's named async tracks, as `M` `track_name` events: each names the
//! operations of one id (the track's uuid) in its process, so that slices of any names on
//! one track stay on one track, under the track's name, as Perfetto shows them.

use std::borrow::Cow;

use super::annot::escape_bytes;
use super::scan::{Found, Place};
use crate::diag::Diagnostics;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// Emits a `track_name` event for every named track whose slices are async (not a thread's
/// or a process's own track, not a counter track); returns how many.
pub(super) fn track_names<S: EventSink>(f: &Found<'_>, sink: &mut S) -> u64 {
    let mut d = Diagnostics::default();
    let mut args = String::new();
    let mut events = 0;
    for t in f.tracks.values() {
        let Some(name) = t
            .name
            .filter(|_| t.place == Place::Other && t.counter.is_none())
        else {
            continue;
        };
        args.clear();
        args.push_str("{\"name\":");
        escape_bytes(&mut args, name, 0, &mut d);
        args.push('}');
        sink.event(&RawEvent {
            ph: Phase::METADATA,
            name: Cow::Borrowed("track_name"),
            pid: RawId::Num(t.pid),
            tid: RawId::Num(t.tid.unwrap_or(t.pid)),
            id: Some(Cow::Borrowed(&t.id)),
            args: Args::Json(Cow::Borrowed(&args)),
            ..RawEvent::default()
        });
        events += 1;
    }
    events
}
