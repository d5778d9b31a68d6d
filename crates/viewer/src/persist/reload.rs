//! Reloading a trace without losing the view: the visible range, scroll, collapsed, hidden
//! and pinned tracks, the selected span, the range selection, the search, the mode and the
//! flame graph's settings carry over to the new load of the same file.
//!
//! Tracks are matched by their ids in the file (process and thread ids), not by index: a
//! trace still being written may gain threads that sort before existing ones.

use std::collections::HashMap;

use trace_model::{ExtId, SpanRef};

use crate::kinds::Pick;
use crate::loaded::Loaded;
use crate::view::layout::{Collapsed, Layout, Track};
use crate::view::state::ViewState;

/// What a file looked like when it was loaded: a reload is due when it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub len: u64,
    /// Modification time, where the file system gives one.
    pub modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    /// The file's size and modification time, or `None` if it cannot be read.
    pub fn of(path: &std::path::Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// Index maps from the old trace's processes and threads to the new one's.
struct Remap {
    processes: Vec<Option<u32>>,
    threads: Vec<Option<u32>>,
}

/// An id as the file wrote it (string ids are interned differently in each load).
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    Num(i64),
    Str(&'a str),
}

fn key(l: &Loaded, id: ExtId) -> Key<'_> {
    match id {
        ExtId::Num(n) => Key::Num(n),
        ExtId::Str(s) => Key::Str(l.trace.strings().get(s)),
    }
}

impl Remap {
    fn new(old: &Loaded, new: &Loaded) -> Remap {
        let pids: HashMap<Key<'_>, u32> = (new.trace.processes().iter().enumerate())
            .map(|(i, p)| (key(new, p.pid), i as u32))
            .collect();
        let tids: HashMap<(Key<'_>, Key<'_>), u32> = (new.trace.threads().iter().enumerate())
            .map(|(i, t)| ((key(new, t.pid), key(new, t.tid)), i as u32))
            .collect();
        Remap {
            processes: (old.trace.processes().iter())
                .map(|p| pids.get(&key(old, p.pid)).copied())
                .collect(),
            threads: (old.trace.threads().iter())
                .map(|t| tids.get(&(key(old, t.pid), key(old, t.tid))).copied())
                .collect(),
        }
    }

    fn track(&self, t: Track, asyncs: usize) -> Option<Track> {
        let at = |v: &[Option<u32>], i: u32| v.get(i as usize).copied().flatten();
        Some(match t {
            Track::Process(p) => Track::Process(at(&self.processes, p)?),
            Track::Thread(i) => Track::Thread(at(&self.threads, i)?),
            // Async tracks are keyed by name and id in the model, in first-seen order,
            // which a growing file keeps.
            Track::Async(a) if (a as usize) < asyncs => Track::Async(a),
            _ => return None,
        })
    }
}

impl ViewState {
    /// Carries the view of `old` (showing `old_l`) over to this fresh state of `l`, a new
    /// load of the same file.
    pub fn carry_over(&mut self, old: &ViewState, old_l: &Loaded, l: &Loaded) {
        let map = Remap::new(old_l, l);
        self.timeline.collapsed = carry_collapsed(&old.timeline.collapsed, &map, l);
        self.timeline.theme = old.timeline.theme;
        self.timeline.scale = old.timeline.scale;
        self.timeline.flows = old.timeline.flows;
        self.range = old.range;
        // Markers are kept relative to the trace's start, as saved.
        self.timeline.markers = old.timeline.markers.clone();
        self.mode = old.mode;
        self.flame.carry_settings(&old.flame);
        self.timeline.layout = Layout::new(
            &l.trace,
            &l.kinds,
            &self.timeline.collapsed,
            self.timeline.scale,
        );
        // The same times at the same pixels, though the trace's start (the origin) moved.
        let origin = self.timeline.viewport.origin;
        self.timeline.viewport = old.timeline.viewport;
        self.timeline.viewport.t0 += (old.timeline.viewport.origin - origin) as f64;
        self.timeline.viewport.origin = origin;
        self.timeline.viewport.resize(self.timeline.width as f64);
        self.timeline.scroll_y = old.timeline.scroll_y;
        self.timeline.clamp_scroll();
        if old.timeline.matches.is_active() {
            self.search(l, &old.timeline.matches.query);
        }
        self.timeline.selected = match old.timeline.selected {
            Some(Pick::Span(r)) => same_span(old_l, l, &map, r).map(Pick::Span),
            _ => None,
        };
    }
}

fn carry_collapsed(old: &Collapsed, map: &Remap, l: &Loaded) -> Collapsed {
    let mut c = Collapsed::for_trace(&l.trace);
    let copy = |from: &[bool], to: &mut [bool], m: &dyn Fn(usize) -> Option<u32>| {
        for (i, &v) in from.iter().enumerate() {
            if let Some(slot) = m(i).and_then(|j| to.get_mut(j as usize)) {
                *slot = v;
            }
        }
    };
    copy(&old.processes, &mut c.processes, &|i| map.processes[i]);
    copy(&old.threads, &mut c.threads, &|i| map.threads[i]);
    copy(&old.asyncs, &mut c.asyncs, &|i| Some(i as u32));
    copy(&old.async_groups, &mut c.async_groups, &|i| {
        map.processes[i]
    });
    c.cpu_counters = old.cpu_counters;
    let asyncs = c.asyncs.len();
    c.hidden = (old.hidden.iter())
        .filter_map(|&t| map.track(t, asyncs))
        .collect();
    c.pinned = (old.pinned.iter())
        .filter_map(|&t| map.track(t, asyncs))
        .collect();
    c
}

/// The span of the new trace on the same thread and depth, with the same start and name.
fn same_span(old_l: &Loaded, l: &Loaded, map: &Remap, r: SpanRef) -> Option<SpanRef> {
    let was = old_l.trace.span(r);
    let name = old_l.trace.strings().get(was.name);
    let thread = map.threads.get(r.thread as usize).copied().flatten()?;
    let lane = l.trace.threads()[thread as usize]
        .lanes
        .get(r.depth as usize)?;
    let first = lane.start.partition_point(|&s| s < was.start);
    (first..lane.start.len())
        .take_while(|&i| lane.start[i] == was.start)
        .map(|i| SpanRef {
            thread,
            depth: r.depth,
            index: i as u32,
        })
        .find(|&n| l.trace.strings().get(l.trace.span(n).name) == name)
}
