//! Names of Perfetto's named async tracks, as `M` `track_name` events: each names the
//! operations of one id (the track's uuid) in its process, so that slices of any names on
//! one track stay on one track, under the track's name, as Perfetto shows them.

use std::borrow::Cow;

use super::annot::escape_bytes;
use super::scan::{Found, Place};
use super::wire::{repeated, Reader};
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

/// TrackEvent's `chrome_active_processes` field.
pub(super) const ACTIVE_PROCESSES: u32 = 49;

/// The processes a `ChromeActiveProcesses` message lists (`m`): trace_processor gives each
/// a process and its main thread, named or not; each becomes a `spall_thread` event, which
/// says only that thread `pid` of process `pid` exists. Returns how many.
/// Each is also met ([`met`](super::events::met)) at `ts`, in list order after the
/// event's own meeting (its TrackEvent at `at`). `typed`: the event's typed fields
/// (number, message, offset), among which the list may be.
pub(super) fn active_processes<S: EventSink>(
    typed: &[(u32, &[u8], u64)],
    ts: i64,
    at: u64,
    sink: &mut S,
) -> u64 {
    let mut events = 0;
    let lists = typed.iter().filter(|t| t.0 == ACTIVE_PROCESSES);
    for f in lists.flat_map(|t| Reader::new(t.1, 0).map_while(Result::ok)) {
        if f.num != 1 {
            continue;
        }
        // `repeated int32 pid`: packed or not.
        let _ = repeated(f.value, false, |pid| {
            let pid = pid as i32 as i64;
            sink.event(&RawEvent {
                ph: Phase::METADATA,
                name: Cow::Borrowed("spall_thread"),
                pid: RawId::Num(pid),
                tid: RawId::Num(pid),
                ..RawEvent::default()
            });
            events += 1;
            super::events::met(sink, pid, pid, ts, at + events, false);
        });
    }
    events
}
