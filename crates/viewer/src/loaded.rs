//! A loaded trace with everything the viewer derives from it once: the index, a colour per
//! name, the minimap's activity profile, and (on first use) the whole-trace statistics.

use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use render_gl::Color;

use trace_index::{EventIndex, TraceIndex};
use trace_model::{NameStats, StatsFilter, Trace};

/// Columns in the minimap's profile (the web page's load worker computes it too).
pub use spall_web_transfer::MINIMAP_BINS;

/// A loaded trace with what the views derive from it once: index, colours, minimap.
pub struct Loaded {
    /// Shared (`Arc`) so that other threads (the SQL worker, flame builds) can hold it.
    pub trace: std::sync::Arc<Trace>,
    /// Visible-range queries over the trace's spans.
    pub index: TraceIndex,
    /// Counters, instants, async tracks, samples and flows, arranged for drawing.
    pub kinds: EventIndex,
    /// A colour per interned string (used for span names).
    pub colors: Vec<Color>,
    /// Per minimap column, how busy the threads' top-level spans are (0..=1).
    pub minimap: Vec<f32>,
    /// Where the trace came from, for the title bar.
    pub source: String,
    /// What the warning banner says when loading found problems (`None`: clean).
    pub warnings: Option<String>,
    /// Per-name statistics of the whole trace: O(spans), so computed once, off the UI
    /// thread by the window ([`whole_stats`](Loaded::whole_stats)).
    stats: OnceLock<Vec<NameStats>>,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// A stable colour for a name (FNV-1a: the same on every run and machine).
/// chrome://tracing's reserved colour names (`cname`), as its colour scheme defines them.
pub fn reserved_color(cname: &str) -> Option<Color> {
    let (r, g, b) = match cname {
        "thread_state_uninterruptible" => (182, 125, 143),
        "thread_state_iowait" => (255, 140, 0),
        "thread_state_running" => (126, 200, 148),
        "thread_state_runnable" => (133, 160, 210),
        "thread_state_sleeping" => (240, 240, 240),
        "thread_state_unknown" => (199, 155, 125),
        "background_memory_dump" => (0, 180, 180),
        "light_memory_dump" => (0, 0, 180),
        "detailed_memory_dump" => (180, 0, 180),
        "vsync_highlight_color" => (0, 0, 255),
        "generic_work" => (125, 125, 125),
        "good" => (0, 125, 0),
        "bad" => (180, 125, 0),
        "terrible" => (180, 0, 0),
        "black" => (0, 0, 0),
        "grey" => (221, 221, 221),
        "white" => (255, 255, 255),
        "yellow" => (255, 255, 0),
        "olive" => (100, 100, 0),
        "rail_response" => (67, 135, 253),
        "rail_animation" => (244, 74, 63),
        "rail_idle" => (238, 142, 0),
        "rail_load" => (13, 168, 97),
        "startup" => (230, 230, 0),
        "heap_dump_stack_frame" => (128, 128, 128),
        "heap_dump_object_type" => (0, 0, 255),
        "heap_dump_child_node_arrow" => (204, 102, 0),
        "cq_build_running" => (255, 255, 119),
        "cq_build_passed" => (153, 238, 102),
        "cq_build_failed" => (238, 136, 136),
        "cq_build_abandoned" => (187, 187, 187),
        _ => return None,
    };
    Some(Color::rgb(r, g, b))
}

/// The colour of spans named `name`: a hash of the name, the same in every trace.
pub fn name_color(name: &str) -> Color {
    struct Fnv(u64);
    impl Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    name.hash(&mut h);
    Color::from_hash(h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

impl Loaded {
    /// Indexes `trace` and derives the views' data; `source` names where it came from.
    pub fn new(trace: Trace, source: String) -> Loaded {
        let index = TraceIndex::build(&trace);
        Loaded::with_index(trace, index, source)
    }

    /// [`new`](Self::new) with the index already built.
    pub fn with_index(trace: Trace, index: TraceIndex, source: String) -> Loaded {
        let kinds = EventIndex::new(&trace);
        let minimap = trace.activity(MINIMAP_BINS);
        Loaded::with_views(trace, index, kinds, minimap, source)
    }

    /// [`with_index`](Self::with_index) with the parts that may take long derived already
    /// (a page takes them a step at a time, the minimap, O(spans), from its load worker):
    /// what is left is O(names).
    pub(crate) fn with_views(
        trace: Trace,
        index: TraceIndex,
        kinds: EventIndex,
        minimap: Vec<f32>,
        source: String,
    ) -> Loaded {
        let colors = trace.strings().iter().map(|(_, s)| name_color(s)).collect();
        let warnings = warning_summary(&trace);
        Loaded {
            trace: std::sync::Arc::new(trace),
            index,
            kinds,
            colors,
            minimap,
            source,
            warnings,
            stats: OnceLock::new(),
        }
    }

    /// The whole-trace statistics, if they have been computed.
    pub fn whole_stats_ready(&self) -> Option<&[NameStats]> {
        self.stats.get().map(Vec::as_slice)
    }

    /// Takes the whole-trace statistics computed elsewhere (a page's load worker).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn set_whole_stats(&self, stats: Vec<NameStats>) {
        let _ = self.stats.set(stats);
    }

    /// Per-name statistics of the whole trace (of a sampling profile, per function:
    /// [`Trace::table_stats`]), computed on first use (and waited for, if another thread is
    /// computing them).
    pub fn whole_stats(&self) -> &[NameStats] {
        self.stats
            .get_or_init(|| self.trace.table_stats(&StatsFilter::default()))
    }
}

/// "N warnings while loading: the three most common kinds", or `None` for a clean load.
pub fn warning_summary(t: &Trace) -> Option<String> {
    let mut kinds = t.warning_counts();
    let total: u64 = kinds.iter().map(|k| k.1).sum();
    if total == 0 {
        return None;
    }
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let shown: Vec<String> = kinds
        .iter()
        .take(3)
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect();
    let more = if kinds.len() > 3 { ", …" } else { "" };
    Some(format!(
        "{total} warning{} while loading: {}{more}. Some events may be missing; `spall-cli validate` lists each.",
        if total == 1 { "" } else { "s" },
        shown.join(", ")
    ))
}
