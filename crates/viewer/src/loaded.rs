//! A loaded trace with everything the viewer derives from it once: the index, a colour per
//! name, the minimap's activity profile, and (on first use) the whole-trace statistics.

use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use render_gl::Color;
use trace_index::TraceIndex;
use trace_model::{NameStats, StatsFilter, Trace};

/// Columns in the minimap's profile.
pub const MINIMAP_BINS: usize = 1024;

pub struct Loaded {
    pub trace: Trace,
    pub index: TraceIndex,
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
    pub fn new(trace: Trace, source: String) -> Loaded {
        let index = TraceIndex::build(&trace);
        let colors = trace.strings().iter().map(|(_, s)| name_color(s)).collect();
        let minimap = profile(&trace);
        let warnings = warning_summary(&trace);
        Loaded {
            trace,
            index,
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

    /// Per-name statistics of the whole trace, computed on first use (and waited for, if
    /// another thread is computing them).
    pub fn whole_stats(&self) -> &[NameStats] {
        self.stats
            .get_or_init(|| self.trace.stats(&StatsFilter::default()))
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

/// The fraction of threads busy at depth 0, per column of the trace's time span.
fn profile(trace: &Trace) -> Vec<f32> {
    let mut bins = vec![0f64; MINIMAP_BINS];
    let (s, e) = (trace.start_ns(), trace.end_ns().max(trace.start_ns() + 1));
    let bin_ns = (e - s) as f64 / MINIMAP_BINS as f64;
    let mut threads = 0;
    for t in trace.threads() {
        let Some(lane) = t.lanes.first() else {
            continue;
        };
        threads += 1;
        for i in 0..lane.len() {
            let a = (lane.start[i] - s) as f64 / bin_ns;
            let b = (lane.end(i) - s) as f64 / bin_ns;
            let (ai, bi) = (
                a.floor().max(0.0) as usize,
                (b.ceil() as usize).min(MINIMAP_BINS),
            );
            for (k, bin) in bins.iter_mut().enumerate().take(bi).skip(ai) {
                let lo = a.max(k as f64);
                let hi = b.min(k as f64 + 1.0);
                if hi > lo {
                    *bin += hi - lo;
                }
            }
        }
    }
    let n = threads.max(1) as f64;
    bins.into_iter()
        .map(|b| (b / n).clamp(0.0, 1.0) as f32)
        .collect()
}
