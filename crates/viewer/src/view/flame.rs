//! The flame graph view's state: which spans it merges (scope), its orientation and order,
//! the zoomed-in frame, the selection, the sandwich, and hit testing. Drawing is in
//! `crate::flame`. No GL, no threads: the app may build trees off its UI thread through
//! [`FlameView::wanted`] and [`FlameView::install`].

use std::sync::Arc;

use trace_model::changes::{self, Change};
use trace_model::{label_text, FlameOptions, FlameSort, FlameTree, FrameLabel, SpanRef, Trace};

use crate::loaded::Loaded;
use crate::view::layout::{Collapsed, Track};
use crate::view::removed_stacks::Room;

/// Which view the main area shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Spans on their threads over time.
    #[default]
    Timeline,
    /// The flame graph of the spans' call stacks.
    Flame,
}

/// Which threads the flame graph merges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlameThreads {
    /// Every thread, merged.
    #[default]
    All,
    /// The threads the track filter shows.
    Visible,
    /// One thread (index into `Trace::threads`).
    One(u32),
}

/// One flame graph on screen, zoomed into a frame.
#[derive(Clone, Debug)]
pub struct Pane {
    /// The aggregated call tree shown.
    pub tree: Arc<FlameTree>,
    /// The frame whose subtree fills the width.
    pub zoom: u32,
    /// Compare mode: the layout widened for the stacks only BASE has, when there are any.
    pub room: Option<Arc<Room>>,
}

impl Pane {
    /// A pane showing the whole of `tree`.
    pub fn new(tree: Arc<FlameTree>) -> Pane {
        Pane {
            tree,
            zoom: 0,
            room: None,
        }
    }

    /// Where node `n`'s bar starts, in the layout's nanoseconds.
    pub fn x(&self, n: u32) -> i64 {
        match &self.room {
            Some(r) => r.x[n as usize],
            None => self.tree.x[n as usize],
        }
    }

    /// Node `n`'s width, in the layout's nanoseconds.
    pub fn w(&self, n: u32) -> i64 {
        match &self.room {
            Some(r) => r.w[n as usize],
            None => self.tree.total[n as usize],
        }
    }
}

/// Which pane a node is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The merged flame graph.
    Main,
    /// The sandwich's callers of its function.
    Callers,
    /// The sandwich's callees of its function.
    Callees,
}

/// A frame under the pointer or selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlameHit {
    /// The pane the frame is in.
    pub pane: Which,
    /// Index of the frame's node in that pane's tree.
    pub node: u32,
}

/// Speedscope's sandwich for one function.
#[derive(Clone, Debug)]
pub struct Sandwich {
    /// The function the sandwich is about.
    pub label: FrameLabel,
    /// Who calls it, the function at the root.
    pub callers: Pane,
    /// What it calls, the function at the root.
    pub callees: Pane,
    /// Compare mode: per frame of [`callers`](Self::callers), its change against BASE's
    /// sandwich of the same function (empty otherwise).
    pub callers_changes: Vec<Change>,
    /// Compare mode: the same for [`callees`](Self::callees).
    pub callees_changes: Vec<Change>,
}

/// Compare mode's results for a graph built off the UI thread: each frame's change, and
/// BASE's graph of the same scope (kept for the sandwich).
#[derive(Clone, Debug, Default)]
pub struct Compared {
    /// Per frame of NEW's graph, its change against BASE.
    pub changes: Vec<Change>,
    /// BASE's graph, built with NEW's scope.
    pub base_tree: Option<Arc<FlameTree>>,
}

/// The flame view.
#[derive(Clone, Debug)]
pub struct FlameView {
    /// Which threads are merged.
    pub threads: FlameThreads,
    /// Keep threads apart (process and thread as the first frames).
    pub per_thread: bool,
    /// Clip to the range selection, when there is one.
    pub use_range: bool,
    /// Root on top (icicle), else at the bottom (flame).
    pub icicle: bool,
    /// The order of siblings.
    pub sort: FlameSort,
    /// The merged graph, and what it was built from.
    pub main: Option<Pane>,
    built: Option<(FlameOptions, FlameSort)>,
    /// The sandwich of the chosen function, when one is open.
    pub sandwich: Option<Sandwich>,
    /// The selected frame.
    pub selected: Option<FlameHit>,
    /// The frame under the pointer, and the pointer's position in pixels.
    pub hover: Option<(FlameHit, f32, f32)>,
    /// Compare mode: the frame only BASE has under the pointer (its node in BASE's
    /// graph), and the pointer's position.
    pub hover_removed: Option<(u32, f32, f32)>,
    /// Spans merged into the selected frame, by start; and the one last stepped to.
    pub occurrences: Vec<SpanRef>,
    /// Index into [`occurrences`](Self::occurrences) of the span last stepped to.
    pub occurrence: Option<usize>,
    /// Compare mode: the trace (BASE) the graph is compared with.
    pub base: Option<Arc<Trace>>,
    /// Compare mode: per frame of the main graph, its change against BASE.
    pub changes: Vec<Change>,
    /// Compare mode: BASE's graph of the main graph's scope.
    pub base_tree: Option<Arc<FlameTree>>,
}

impl Default for FlameView {
    fn default() -> Self {
        FlameView {
            threads: FlameThreads::All,
            per_thread: false,
            use_range: true,
            icicle: true,
            sort: FlameSort::Heaviest,
            main: None,
            built: None,
            sandwich: None,
            selected: None,
            hover: None,
            hover_removed: None,
            occurrences: Vec::new(),
            occurrence: None,
            base: None,
            changes: Vec::new(),
            base_tree: None,
        }
    }
}

impl FlameView {
    /// Takes the user's choices (scope, order, orientation) from the view of an earlier
    /// load; the graph itself is rebuilt.
    pub fn carry_settings(&mut self, old: &FlameView) {
        self.threads = old.threads;
        self.per_thread = old.per_thread;
        self.use_range = old.use_range;
        self.icicle = old.icicle;
        self.sort = old.sort;
        self.base = old.base.clone();
    }
}

impl FlameView {
    /// Compare mode on (`Some(BASE)`) or off: the graph is built again, coloured by
    /// its changes against BASE.
    pub fn set_base(&mut self, base: Option<Arc<Trace>>) {
        self.base = base;
        self.built = None;
        self.changes.clear();
        self.base_tree = None;
    }

    /// Compare mode: the changes of a pane's frames (empty without BASE).
    pub fn changes_of(&self, which: Which) -> &[Change] {
        match (which, &self.sandwich) {
            (Which::Main, _) => &self.changes,
            (Which::Callers, Some(sw)) => &sw.callers_changes,
            (Which::Callees, Some(sw)) => &sw.callees_changes,
            _ => &[],
        }
    }
}

/// Per frame of `tree` (NEW's graph, built for `want`), its change against `base` (its
/// graph built with the same scope: threads matched by name, the range shifted by the
/// traces' starts), and that graph; nothing when there is no base.
pub fn compare_tree(
    new: &Trace,
    base: Option<&Trace>,
    want: &(FlameOptions, FlameSort),
    tree: &FlameTree,
) -> Compared {
    let Some(b) = base else {
        return Compared::default();
    };
    let bo = base_options(new, b, &want.0);
    let bt = b.flame(&bo, want.1);
    Compared {
        changes: changes::changes((new, tree, &want.0), (b, &bt, &bo)),
        base_tree: Some(Arc::new(bt)),
    }
}

/// Height of the strip above the graph (scope and breadcrumb), logical pixels.
pub const HEADER_PX: f32 = 24.0;
/// Height of a frame's row, logical pixels.
pub const ROW_PX: f32 = 18.0;

/// Where a pane is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    /// Left edge, in physical pixels.
    pub x: f32,
    /// Top edge, in physical pixels.
    pub y: f32,
    /// Width, in physical pixels.
    pub w: f32,
    /// Height, in physical pixels.
    pub h: f32,
    /// Rows go down from the top (icicle), else up from the bottom.
    pub down: bool,
    /// Height of a frame's row, in physical pixels.
    pub row_h: f32,
}

impl Region {
    /// The top of the row at `depth`.
    pub fn row_y(&self, depth: u32) -> f32 {
        if self.down {
            self.y + depth as f32 * self.row_h
        } else {
            self.y + self.h - (depth + 1) as f32 * self.row_h
        }
    }

    /// The depth of the row at `y`, if any.
    pub fn row_at(&self, y: f32) -> Option<u32> {
        if y < self.y || y >= self.y + self.h {
            return None;
        }
        let r = if self.down {
            (y - self.y) / self.row_h
        } else {
            (self.y + self.h - y) / self.row_h
        };
        Some(r as u32)
    }
}

impl Pane {
    /// The on-screen box of `node` (ancestors of the zoomed frame fill the width).
    pub fn node_box(&self, r: &Region, node: u32) -> Option<(f32, f32, f32, f32)> {
        let t = &self.tree;
        let (z, n) = (self.zoom as usize, node as usize);
        let y = r.row_y(t.depth[n]);
        let inside = node >= self.zoom && node < self.zoom + t.size[z];
        if !inside {
            let ancestor = self.zoom == node || t.path(self.zoom).contains(&node) || node == 0;
            return ancestor.then_some((r.x, y, r.w, r.row_h - 1.0));
        }
        let scale = r.w as f64 / self.w(self.zoom).max(1) as f64;
        let x = r.x + ((self.x(node) - self.x(self.zoom)) as f64 * scale) as f32;
        let w = (self.w(node) as f64 * scale) as f32;
        Some((x, y, w, r.row_h - 1.0))
    }

    /// The frame only BASE has at a point (compare mode): its node in BASE's tree.
    pub fn hit_removed(&self, r: &Region, x: f32, y: f32) -> Option<u32> {
        let room = self.room.as_ref()?;
        let (row, at) = self.row_and_time(r, x, y)?;
        let t = &self.tree;
        let mut n = self.zoom;
        while t.depth[n as usize] < row {
            match self.child_at(n, at) {
                Some(c) => n = c,
                None => return room.hit(n, row, at),
            }
        }
        None
    }

    /// The row at `y` below the zoomed frame, and the layout's time at `x`.
    fn row_and_time(&self, r: &Region, x: f32, y: f32) -> Option<(u32, f64)> {
        if self.tree.is_empty() || x < r.x || x >= r.x + r.w {
            return None;
        }
        let row = r.row_at(y)?;
        let zw = self.w(self.zoom) as f64;
        let at = self.x(self.zoom) as f64 + (x - r.x) as f64 / r.w as f64 * zw;
        Some((row, at))
    }

    /// The child of `n` whose bar covers the layout's time `at`.
    fn child_at(&self, n: u32, at: f64) -> Option<u32> {
        (self.tree.children(n))
            .find(|&c| (self.x(c) as f64) <= at && at < (self.x(c) + self.w(c)) as f64)
    }

    /// The frame at a point.
    pub fn hit(&self, r: &Region, x: f32, y: f32) -> Option<u32> {
        let t = &self.tree;
        let (row, at) = self.row_and_time(r, x, y)?;
        if row <= t.depth[self.zoom as usize] {
            let mut chain = vec![0];
            chain.extend(t.path(self.zoom));
            return chain.get(row as usize).copied();
        }
        let mut n = self.zoom;
        while t.depth[n as usize] < row {
            n = self.child_at(n, at)?;
        }
        Some(n)
    }
}

impl FlameView {
    /// What the graph should be built from now, for the tracks shown (`collapsed`) and
    /// the range selection: `None` when the built one is current.
    pub fn wanted(
        &self,
        l: &Loaded,
        collapsed: &Collapsed,
        range: Option<(i64, i64)>,
    ) -> Option<(FlameOptions, FlameSort)> {
        let opts = self.options(l, collapsed, range);
        let want = (opts, self.sort);
        (self.built.as_ref() != Some(&want)).then_some(want)
    }

    /// The options the current scope asks for.
    pub fn options(
        &self,
        l: &Loaded,
        collapsed: &Collapsed,
        range: Option<(i64, i64)>,
    ) -> FlameOptions {
        let t = &l.trace;
        let threads = match self.threads {
            FlameThreads::All => None,
            FlameThreads::One(ti) => Some(vec![ti]),
            FlameThreads::Visible => Some(
                (0..t.threads().len() as u32)
                    .filter(|&ti| {
                        let p = t.threads()[ti as usize].process;
                        !collapsed.is_hidden(Track::Thread(ti))
                            && !collapsed.is_hidden(Track::Process(p))
                    })
                    .collect(),
            ),
        };
        FlameOptions {
            threads,
            range: if self.use_range { range } else { None },
            per_thread: self.per_thread,
        }
    }

    /// Puts a tree built for `want` in place (keeping the zoom on the same stack when it is
    /// still there).
    pub fn install(&mut self, l: &Loaded, want: (FlameOptions, FlameSort), tree: FlameTree) {
        let compared = compare_tree(&l.trace, self.base.as_deref(), &want, &tree);
        self.install_compared(l, want, tree, compared);
    }

    /// [`install`](Self::install) with the changes against BASE already worked out (off
    /// the UI thread, by [`compare_tree`] for the base in [`base`](Self::base)).
    pub fn install_compared(
        &mut self,
        l: &Loaded,
        want: (FlameOptions, FlameSort),
        tree: FlameTree,
        compared: Compared,
    ) {
        let old_path = self.main.as_ref().map(|p| labels(&p.tree, p.zoom));
        let tree = Arc::new(tree);
        let zoom = old_path.map_or(0, |p| find_path(&tree, &p).unwrap_or(0));
        let room = (compared.base_tree.clone())
            .and_then(|b| Room::new(&tree, &compared.changes, b))
            .map(Arc::new);
        self.changes = compared.changes;
        self.base_tree = compared.base_tree;
        self.main = Some(Pane { tree, zoom, room });
        self.built = Some(want);
        self.selected = None;
        self.hover = None;
        self.hover_removed = None;
        self.occurrences.clear();
        self.occurrence = None;
        if let Some(sw) = &self.sandwich {
            let label = sw.label;
            self.open_sandwich(l, label);
        }
    }

    /// The pane `which`, if it is open.
    pub fn pane(&self, which: Which) -> Option<&Pane> {
        match which {
            Which::Main => self.main.as_ref(),
            Which::Callers => self.sandwich.as_ref().map(|s| &s.callers),
            Which::Callees => self.sandwich.as_ref().map(|s| &s.callees),
        }
    }

    fn pane_mut(&mut self, which: Which) -> Option<&mut Pane> {
        match which {
            Which::Main => self.main.as_mut(),
            Which::Callers => self.sandwich.as_mut().map(|s| &mut s.callers),
            Which::Callees => self.sandwich.as_mut().map(|s| &mut s.callees),
        }
    }

    /// The regions of the panes shown, in a `w × h` area whose graph starts at `top`.
    pub fn regions(&self, top: f32, w: f32, h: f32, scale: f32) -> Vec<(Which, Region)> {
        let row_h = ROW_PX * scale;
        let gh = (h - top).max(0.0);
        if self.sandwich.is_some() {
            let half = (gh / 2.0).floor();
            vec![
                (
                    Which::Callers,
                    Region {
                        x: 0.0,
                        y: top,
                        w,
                        h: half,
                        down: false,
                        row_h,
                    },
                ),
                (
                    Which::Callees,
                    Region {
                        x: 0.0,
                        y: top + half,
                        w,
                        h: gh - half,
                        down: true,
                        row_h,
                    },
                ),
            ]
        } else {
            let r = Region {
                x: 0.0,
                y: top,
                w,
                h: gh,
                down: self.icicle,
                row_h,
            };
            vec![(Which::Main, r)]
        }
    }

    /// The frame at a point of a `w × h` area drawn at `scale`.
    pub fn hit(&self, (w, h): (f32, f32), scale: f32, x: f32, y: f32) -> Option<FlameHit> {
        let top = HEADER_PX * scale;
        self.regions(top, w, h, scale)
            .into_iter()
            .find_map(|(which, r)| {
                let node = self.pane(which)?.hit(&r, x, y)?;
                Some(FlameHit { pane: which, node })
            })
    }

    /// The frame only BASE has at a point (compare mode): its node in BASE's graph.
    pub fn hit_removed(&self, (w, h): (f32, f32), scale: f32, x: f32, y: f32) -> Option<u32> {
        let top = HEADER_PX * scale;
        let (_, r) =
            (self.regions(top, w, h, scale).into_iter()).find(|(w, _)| *w == Which::Main)?;
        self.main.as_ref()?.hit_removed(&r, x, y)
    }

    /// A click: zooms into the frame (or back out to an ancestor) and selects it; the
    /// main graph's frames list their occurrences.
    pub fn click(&mut self, l: &Loaded, opts: &FlameOptions, h: FlameHit) {
        if let Some(p) = self.pane_mut(h.pane) {
            p.zoom = h.node;
        }
        self.select(l, opts, Some(h));
    }

    /// Selects a frame and finds its occurrences.
    pub fn select(&mut self, l: &Loaded, opts: &FlameOptions, h: Option<FlameHit>) {
        self.selected = h;
        self.occurrences.clear();
        self.occurrence = None;
        let Some(h) = h else { return };
        let Some(p) = self.pane(h.pane) else { return };
        let t = &l.trace;
        self.occurrences = match (h.pane, p.tree.label[h.node as usize]) {
            (Which::Main, _) => t.flame_occurrences(&p.tree, h.node, opts),
            // In a sandwich, the function itself: wherever it runs in scope.
            (_, FrameLabel::Name(n)) if h.node == 0 => t
                .occurrences(|x| x == t.str(n))
                .into_iter()
                .filter(|r| opts.threads.as_ref().is_none_or(|v| v.contains(&r.thread)))
                .collect(),
            _ => Vec::new(),
        };
    }

    /// The selected frame's label.
    pub fn selected_label(&self) -> Option<FrameLabel> {
        let h = self.selected?;
        Some(self.pane(h.pane)?.tree.label[h.node as usize])
    }

    /// Zooms the pane out one level; false when it shows its root already.
    pub fn zoom_out(&mut self, which: Which) -> bool {
        let Some(p) = self.pane_mut(which) else {
            return false;
        };
        if p.zoom == 0 {
            return false;
        }
        p.zoom = p.tree.parent[p.zoom as usize];
        true
    }

    /// Shows the sandwich of the frames labelled `label`.
    pub fn open_sandwich(&mut self, l: &Loaded, label: FrameLabel) {
        let Some(main) = &self.main else { return };
        let (callers, callees) = main.tree.sandwich(&l.trace, label, self.sort);
        let (callers_changes, callees_changes) =
            self.compare_sandwich(l, label, (&callers, &callees));
        self.sandwich = Some(Sandwich {
            label,
            callers: Pane::new(Arc::new(callers)),
            callees: Pane::new(Arc::new(callees)),
            callers_changes,
            callees_changes,
        });
        self.selected = None;
        self.hover = None;
        self.hover_removed = None;
    }

    /// Compare mode: the changes of NEW's sandwich of `label` against BASE's sandwich of
    /// the function of the same name (all added when BASE has none); empty without BASE.
    fn compare_sandwich(
        &self,
        l: &Loaded,
        label: FrameLabel,
        (callers, callees): (&FlameTree, &FlameTree),
    ) -> (Vec<Change>, Vec<Change>) {
        let (Some(b), Some(bt)) = (&self.base, &self.base_tree) else {
            return (Vec::new(), Vec::new());
        };
        let name = label_text(&l.trace, label);
        let theirs = match label {
            FrameLabel::Name(_) => b.strings().lookup(&name).map(FrameLabel::Name),
            _ => None,
        };
        let (bc, be) = match theirs {
            Some(bl) => bt.sandwich(b, bl, self.sort),
            None => (FlameTree::default(), FlameTree::default()),
        };
        let nt = &l.trace;
        (
            changes::changes_by_totals((nt, callers), (b, &bc)),
            changes::changes_by_totals((nt, callees), (b, &be)),
        )
    }

    /// The heaviest frame labelled with exactly `name`, else one containing it.
    pub fn find(&self, l: &Loaded, name: &str) -> Option<u32> {
        let t = &self.main.as_ref()?.tree;
        let text = |n: usize| label_text(&l.trace, t.label[n]);
        let best = |m: &dyn Fn(&str) -> bool| {
            (1..t.len())
                .filter(|&n| m(&text(n)))
                .max_by_key(|&n| (t.total[n], std::cmp::Reverse(n)))
        };
        best(&|x| x == name)
            .or_else(|| best(&|x| x.contains(name)))
            .map(|n| n as u32)
    }

    /// Steps through the selected frame's occurrences; returns the span stepped to.
    pub fn step_occurrence(&mut self, forward: bool) -> Option<SpanRef> {
        let n = self.occurrences.len();
        if n == 0 {
            return None;
        }
        let i = match (self.occurrence, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.occurrence = Some(i);
        Some(self.occurrences[i])
    }
}

/// The labels from the root's child down to `n`.
/// NEW's scope in BASE: the threads of the same names (ids change between runs), the
/// range at the same offset from the start.
fn base_options(new: &Trace, base: &Trace, o: &FlameOptions) -> FlameOptions {
    let threads = o.threads.as_ref().map(|ts| {
        let mut v: Vec<u32> = ts
            .iter()
            .flat_map(|&ti| {
                let th = &new.threads()[ti as usize];
                let spec = match th.name {
                    Some(n) => new.str(n).to_string(),
                    None => format!("{}:{}", new.ext_id(th.pid), new.ext_id(th.tid)),
                };
                base.find_threads(&spec)
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    });
    let shift = base.start_ns() - new.start_ns();
    FlameOptions {
        threads,
        range: o
            .range
            .map(|(a, b)| (a.saturating_add(shift), b.saturating_add(shift))),
        per_thread: o.per_thread,
    }
}

fn labels(t: &FlameTree, n: u32) -> Vec<FrameLabel> {
    t.path(n).iter().map(|&k| t.label[k as usize]).collect()
}

/// The node with this label path, if the tree has it.
fn find_path(t: &FlameTree, path: &[FrameLabel]) -> Option<u32> {
    let mut n = 0;
    for &want in path {
        n = t.children(n).find(|&c| t.label[c as usize] == want)?;
    }
    Some(n)
}
