//! trace_processor's numbering of a protobuf trace's threads (its `utid`), which a
//! protobuf event on a process or global track carries as `legacy_event.passthrough_utid`
//! (docs/SQL.md): its swapper at 0, then each thread in the order its importer first meets
//! it, by time; at one time, events before TrackDescriptors, then in file order. The
//! protobuf reader tells each meeting as a `spall_met` `M` event (its `scope` `d` for a
//! descriptor's); a meeting of a thread is one of its process too, and meeting a process
//! first brings its main thread (tid = pid) just before the thread met.

use hashbrown::HashMap;
use spall_format::{RawEvent, RawId};

/// When a thread is first met: time, whether by a descriptor, byte offset, and whether
/// after its process's main thread met in the same place.
type Key = (i64, bool, u64, bool);

/// Each thread's first meeting, by (pid, tid).
#[derive(Debug, Default)]
pub(crate) struct Met(HashMap<(i64, i64), Key>);

impl Met {
    /// A `spall_met` event: thread `tid` of process `pid` met.
    pub(crate) fn meet(&mut self, ev: &RawEvent<'_>) {
        let (RawId::Num(pid), RawId::Num(tid)) = (&ev.pid, &ev.tid) else {
            return;
        };
        let key = (ev.ts, ev.scope == Some(b'd'), ev.offset, false);
        self.first((*pid, *pid), key);
        if tid != pid {
            self.first((*pid, *tid), (key.0, key.1, key.2, true));
        }
    }

    fn first(&mut self, thread: (i64, i64), key: Key) {
        let k = self.0.entry(thread).or_insert(key);
        *k = (*k).min(key);
    }

    /// Another builder's meetings (a chunk's), merged.
    pub(crate) fn absorb(&mut self, other: Met) {
        for (t, k) in other.0 {
            self.first(t, k);
        }
    }

    /// The threads met, (pid, tid), in trace_processor's order: the `i`-th is its utid
    /// `i + 1` (the swapper, pid and tid 0, is its utid 0).
    pub(crate) fn order(self) -> Vec<(i64, i64)> {
        let mut v: Vec<((i64, i64), Key)> = self.0.into_iter().filter(|t| t.0 != (0, 0)).collect();
        v.sort_unstable_by_key(|&(t, k)| (k, t));
        v.into_iter().map(|(t, _)| t).collect()
    }
}
