//! The worker's model crossing to the page: the trace's columns written straight into
//! typed arrays of at most 32 MB in the worker ([`pack_trace`], shared with the threaded
//! load worker's module), transferred, and copied into the page's model a few megabytes a
//! step ([`Taking`]) while the worker builds the index, whose columns follow likewise
//! ([`pack_index`]), then the views' data derived a part a step (the minimap, O(spans),
//! comes from the worker).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_time::{Duration, Instant};

use crate::loaded::{Loaded, MINIMAP_BINS};
use trace_index::EventIndex;

use spall_web_transfer::Streams;
pub use spall_web_transfer::{pack_index, pack_trace, Model};

/// The index's part of a worker's model, as the page received it (`web::open_index`).
#[derive(Debug)]
pub struct IndexPart(pub(crate) JsValue);

/// How long one turn of taking the worker's model may run before the page draws a frame.
const TAKE_STEP: Duration = Duration::from_millis(50);
/// Bytes of columns copied between two looks at the clock.
const TAKE_BYTES: usize = 8 << 20;

/// The worker's model ([`pack_trace`], then [`pack_index`]) taken in steps: the trace's
/// head, its columns a few megabytes at a time, the index's likewise once its part is in, then the views' data: the kinds (O(events
/// other than spans)) in a step, the colours and warnings (O(names)) in the last, with the
/// worker's minimap. Steps run back to back for up to [`TAKE_STEP`] a turn, and the page
/// draws a frame between turns: a small model is taken in one turn, a large one never
/// holds the page for much more than a turn. Nothing is decoded or checked again beyond the
/// ids and offsets the copies pass through.
pub(crate) struct Taking {
    model: Model,
    /// The kinds, derived in a step of their own once the trace and index are in.
    kinds: Option<EventIndex>,
    /// Steps run so far (`<body data-take-steps>` once taken).
    steps: u32,
    /// Turns so far, a frame apart (`<body data-take-turns>` once taken).
    turns: u32,
    trace_in: Option<trace_model::TraceIn>,
    trace: Option<trace_model::Trace>,
    index_in: Option<trace_index::IndexIn>,
    index: Option<trace_index::TraceIndex>,
    /// The stream values left for the index once the trace is in.
    left: [u64; 3],
}

impl Taking {
    pub(crate) fn new(model: Model) -> Taking {
        Taking {
            model,
            kinds: None,
            steps: 0,
            turns: 0,
            trace_in: None,
            trace: None,
            index_in: None,
            index: None,
            left: [0; 3],
        }
    }

    /// The index's part of the model, which the worker sends once it has built it (the
    /// page copies the trace's columns in meanwhile).
    pub(crate) fn add_index(&mut self, index: &IndexPart) {
        if !self.model.has_index() {
            self.model.add_index(&index.0);
        }
    }

    /// Whether the trace is in and the index's part not yet: nothing to do until it comes
    /// ([`add_index`](Self::add_index)).
    pub(crate) fn waiting(&self) -> bool {
        self.trace.is_some() && self.index.is_none() && !self.model.has_index()
    }

    /// The next turn: steps until [`TAKE_STEP`] has passed or the index's part is awaited;
    /// the trace, ready to show, after the last (the page is told, see [`taken`]). The
    /// error says where the model is damaged.
    pub(crate) fn run(&mut self, source: &str) -> Option<Result<Loaded, String>> {
        self.turns += 1;
        let until = Instant::now() + TAKE_STEP;
        loop {
            if self.waiting() {
                return None;
            }
            self.steps += 1;
            if let Some(r) = self.step(source, until) {
                taken(self.steps, self.turns);
                return Some(r);
            }
            if Instant::now() >= until {
                return None;
            }
        }
    }

    fn step(&mut self, source: &str, until: Instant) -> Option<Result<Loaded, String>> {
        if let (None, None, Some(_), Some(_)) =
            (&self.trace_in, &self.index_in, &self.trace, &self.index)
        {
            // The views' data: the kinds in a step, the rest in the next.
            let Some(kinds) = self.kinds.take() else {
                // The samples' stacks come with the index (built in the worker).
                let stacks = self.index.as_mut()?.take_sample_stacks();
                self.kinds = Some(EventIndex::with_sample_stacks(self.trace.as_ref()?, stacks));
                return None;
            };
            let trace = self.trace.as_ref()?;
            if self.model.minimap.is_empty() {
                // A worker that sent none: the page's own (O(spans)), in a step of its own.
                self.model.minimap = trace.activity(MINIMAP_BINS);
                self.kinds = Some(kinds);
                return None;
            }
            let minimap = std::mem::take(&mut self.model.minimap);
            let columns = minimap.len();
            if columns != MINIMAP_BINS || !minimap.iter().all(|v| (0.0..=1.0).contains(v)) {
                let e = format!(
                    "its minimap has {columns} columns (of {MINIMAP_BINS}) or values outside 0..=1"
                );
                return Some(Err(format!("the worker's model is damaged: {e}")));
            }
            let (t, i) = (self.trace.take()?, self.index.take()?);
            let source = source.to_string();
            return Some(Ok(Loaded::with_views(t, i, kinds, minimap, source)));
        }
        loop {
            let stage = self.stage();
            match self.advance() {
                Err(e) => return Some(Err(format!("the worker's model is damaged: {e}"))),
                Ok(true) => return None,
                Ok(false) if Instant::now() >= until => return None,
                // A head read next (a model's worth of columns allocated): a step of its own.
                Ok(false) if stage != self.stage() => return None,
                Ok(false) => {}
            }
        }
    }

    /// Which of the trace's, then the index's, head and columns is being read.
    fn stage(&self) -> [bool; 3] {
        [
            self.trace_in.is_some(),
            self.trace.is_some(),
            self.index_in.is_some(),
        ]
    }

    /// Some of the work; true once the trace and index are whole.
    fn advance(&mut self) -> Result<bool, trace_model::TransferError> {
        let m = &mut self.model;
        match (&mut self.trace_in, &self.trace, &mut self.index_in) {
            (None, None, _) => {
                self.trace_in = Some(trace_model::TraceIn::new(&m.trace, m.trace_lens())?);
            }
            (Some(tin), _, _) => {
                if tin.fill(&mut m.streams, TAKE_BYTES)? {
                    self.left = tin.left();
                    self.trace = self.trace_in.take().and_then(|t| t.finish());
                }
            }
            (None, Some(_), None) if !m.has_index() => return Ok(true),
            (None, Some(trace), None) => {
                // The index's own part, when it came after the trace's.
                let more = m.index_lens();
                let left = std::array::from_fn(|k| self.left[k] + more[k]);
                let index = trace_index::IndexIn::new(&m.index, left, trace)?;
                self.index_in = Some(index);
            }
            (None, Some(trace), Some(iin)) => {
                if iin.fill(&mut m.streams, TAKE_BYTES, trace)? {
                    self.index = self.index_in.take().and_then(|i| i.finish());
                    // The typed arrays are garbage now.
                    m.streams = Streams::new(0);
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// The index's stored levels, which the worker sends after the pyramids the page drew
/// from first ([`pack_levels`](spall_web_transfer::pack_levels): no pyramids), taken in turns a frame
/// apart as the model was; once whole, the shown trace's index takes them
/// ([`TraceIndex::set_levels`](trace_index::TraceIndex::set_levels)). Queries answer the
/// same with or without them: they make frames of lanes with many spans a pixel cheaper.
pub(crate) struct LevelsTaking {
    /// The trace they are for.
    pub(crate) source: String,
    model: Model,
    index_in: Option<trace_index::IndexIn>,
}

impl LevelsTaking {
    pub(crate) fn new(source: String, part: &IndexPart) -> LevelsTaking {
        LevelsTaking {
            source,
            model: Model::from_js(&part.0),
            index_in: None,
        }
    }

    /// The next turn, for up to [`TAKE_STEP`]: the levels after the last, or where the
    /// part is damaged.
    pub(crate) fn run(
        &mut self,
        trace: &trace_model::Trace,
    ) -> Option<Result<trace_index::IndexLevels, trace_model::TransferError>> {
        let until = Instant::now() + TAKE_STEP;
        let m = &mut self.model;
        loop {
            let iin = match &mut self.index_in {
                Some(iin) => iin,
                None => match trace_index::IndexIn::levels(&m.index, m.lens(), trace) {
                    Ok(iin) => self.index_in.insert(iin),
                    Err(e) => return Some(Err(e)),
                },
            };
            match iin.fill(&mut m.streams, TAKE_BYTES, trace) {
                Err(e) => return Some(Err(e)),
                Ok(true) => return self.index_in.take().and_then(|i| i.finish_levels()).map(Ok),
                Ok(false) if Instant::now() >= until => return None,
                Ok(false) => {}
            }
        }
    }
}

/// Says on the page whether the index's levels were taken (`<body data-levels>`: "taken",
/// or "failed", with a warning on the console, where the pyramids answer alone).
pub(crate) fn levels_taken(ok: bool) {
    if !ok {
        web_sys::console::warn_1(&"spall: the index's levels were not taken".into());
    }
    if let Some(body) = super::document().and_then(|d| d.body()) {
        let _ = body
            .dataset()
            .set("levels", if ok { "taken" } else { "failed" });
    }
}

/// Tells the page that the worker's model is taken, in `steps` over `turns` (it calls
/// `globalThis.spall_taken` if it set one, and `<body data-take-steps>` and
/// `data-take-turns` say how many): the worker may then compute the statistics without
/// taking a core from the page's steps.
fn taken(steps: u32, turns: u32) {
    if let Some(body) = super::document().and_then(|d| d.body()) {
        let _ = body.dataset().set("takeSteps", &steps.to_string());
        let _ = body.dataset().set("takeTurns", &turns.to_string());
    }
    let f = js_sys::Reflect::get(&js_sys::global(), &"spall_taken".into());
    if let Some(f) = f.ok().and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let _ = f.call0(&JsValue::NULL);
    }
}
