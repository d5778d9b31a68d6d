//! `spall TRACE --screenshot OUT.png`: one frame through render-gl's headless EGL path, with
//! no window system.

#![allow(unsafe_code)] // Renderer calls are unsafe by signature; the context is ours.

use std::path::Path;

#[cfg(not(target_arch = "wasm32"))]
use render_gl::{Fonts, Headless, Renderer, Scene, ShaderVersion};

use crate::error::ViewerError;
use crate::kinds::Pick;
use crate::loaded::Loaded;
#[cfg(not(target_arch = "wasm32"))]
use crate::scene::SceneBuilder;
use crate::theme::Theme;
use crate::view::flame::{FlameHit, FlameThreads, Mode, Which};
use crate::view::state::ViewState;
use crate::view::timeline::FlowMode;

/// What to show.
#[derive(Clone, Debug)]
pub struct Shot {
    /// Image width, in physical pixels.
    pub width: u32,
    /// Image height, in physical pixels.
    pub height: u32,
    /// `[start, end]` relative to the trace start, ns; open ends reach the trace's ends.
    pub view: Option<(Option<i64>, Option<i64>)>,
    /// Select the first span (by time) with this exact name, else containing it; failing
    /// that, the first async slice, then the first instant, the same way.
    pub select: Option<String>,
    /// Which flow arrows to draw.
    pub flows: FlowMode,
    /// The colours to draw with.
    pub theme: Theme,
    /// HiDPI scale: rows, strips and text are this many pixels per logical pixel.
    pub scale: f32,
    /// Timeline or flame graph. In the flame graph, `view` is the range merged (spans
    /// clipped to it) and `select` zooms into the heaviest frame of that name.
    pub mode: Mode,
    /// Flame graph: only this thread (`PID:TID` as the file writes them, a name, a TID, or
    /// part of a name).
    pub thread: Option<String>,
    /// Flame graph: the sandwich of this function.
    pub sandwich: Option<String>,
    /// Flame graph: root at the bottom instead of the top.
    pub flame_up: bool,
}

/// The thread `spec` names ([`Trace::find_threads`](trace_model::Trace::find_threads)'s
/// rule; the first in the trace's order when it names several).
pub fn find_thread(t: &trace_model::Trace, spec: &str) -> Option<u32> {
    t.find_threads(spec).first().copied()
}

/// The state a screenshot shows (separate from GL so tests can inspect it).
pub fn prepare(l: &Loaded, shot: &Shot) -> Result<ViewState, ViewerError> {
    prepare_compare(l, shot, None)
}

/// [`prepare`], in compare mode when `base` is given: the flame graph's frames coloured by
/// their change against that trace; the timeline with BASE's tracks under NEW's, aligned
/// at the starts, or with `select` at the first span of that name in each.
pub fn prepare_compare(
    l: &Loaded,
    shot: &Shot,
    base: Option<std::sync::Arc<Loaded>>,
) -> Result<ViewState, ViewerError> {
    let mut s = ViewState::new(l, shot.width as f32, shot.height as f32, shot.theme);
    s.timeline.set_scale(l, shot.scale);
    let t = &l.trace;
    if let Some((a, b)) = shot.view {
        let start = t.start_ns() + a.unwrap_or(0);
        let end = b.map_or(t.end_ns(), |b| t.start_ns() + b);
        s.timeline.viewport.show(start, end.max(start + 1));
    }
    s.timeline.flows = shot.flows;
    s.set_base(l, base);
    if shot.view.is_none() && s.compare.is_some() {
        // Both traces, the longer one whole.
        s.fit_all(l);
    }
    if shot.mode == Mode::Flame {
        flame(l, shot, &mut s)?;
        return Ok(s);
    }
    if let Some(name) = &shot.select {
        let exact = |n: &str| n == name;
        let within = |n: &str| n.contains(name.as_str());
        let rules: [&(dyn Fn(&str) -> bool + Sync); 2] = [&exact, &within];
        let found = rules.iter().find_map(|m| {
            let spans = t.occurrences(m);
            if let Some(&r) = spans.first() {
                return Some(Pick::Span(r));
            }
            let a = t.async_slices().iter().position(|a| m(t.str(a.name)));
            if let Some(a) = a {
                return Some(Pick::Async(a as u32));
            }
            let i = t.instants().iter().position(|i| m(t.str(i.name)));
            i.map(|i| Pick::Instant(i as u32))
        });
        match found {
            Some(Pick::Span(r)) => s.timeline.select(l, Some(r)),
            Some(p) => s.timeline.selected = Some(p),
            None => return Err(ViewerError::NoSuchSpan(name.clone())),
        }
        s.align_at_selection(l);
    }
    s.sync_compare();
    Ok(s)
}

/// The flame graph's scope, zoom and sandwich for a screenshot.
fn flame(l: &Loaded, shot: &Shot, s: &mut ViewState) -> Result<(), ViewerError> {
    let t = &l.trace;
    s.mode = Mode::Flame;
    s.flame.icicle = !shot.flame_up;
    if let Some(spec) = &shot.thread {
        let ti = find_thread(t, spec).ok_or_else(|| ViewerError::NoSuchThread(spec.clone()))?;
        s.flame.threads = FlameThreads::One(ti);
    }
    if shot.view.is_some() {
        s.range = Some(s.timeline.viewport.visible());
    }
    s.ensure_flame(l);
    if let Some(name) = &shot.select {
        let node = s
            .flame
            .find(l, name)
            .ok_or_else(|| ViewerError::NoSuchFrame {
                option: "--select",
                name: name.clone(),
            })?;
        let hit = FlameHit {
            pane: Which::Main,
            node,
        };
        s.flame_click(l, hit);
    }
    if let Some(name) = &shot.sandwich {
        let missing = || ViewerError::NoSuchFrame {
            option: "--sandwich",
            name: name.clone(),
        };
        let id = t.strings().lookup(name).ok_or_else(missing)?;
        let tree = &s.flame.main.as_ref().ok_or_else(missing)?.tree;
        if !tree.label.contains(&trace_model::FrameLabel::Name(id)) {
            return Err(missing());
        }
        s.flame.open_sandwich(l, trace_model::FrameLabel::Name(id));
    }
    Ok(())
}

/// Renders the state to RGBA pixels (rows from the top), headless (EGL: native only).
#[cfg(not(target_arch = "wasm32"))]
pub fn render(l: &Loaded, s: &ViewState) -> Result<Vec<u8>, ViewerError> {
    let (w, h) = (s.timeline.width as u32, s.timeline.height as u32);
    let headless = Headless::new(w, h)?;
    // SAFETY: the headless context is current on this thread for the renderer's lifetime.
    let mut renderer = unsafe { Renderer::new(headless.gl().clone(), ShaderVersion::Gl33) }?;
    let mut fonts = Fonts::new();
    let mut scene = Scene::new();
    SceneBuilder::default().build(&mut scene, &mut fonts, l, s);
    headless.bind();
    // SAFETY: as above.
    unsafe { renderer.render(&mut scene, &fonts) };
    Ok(headless.read_rgba())
}

/// Loads nothing: renders `l` as `shot` describes and writes the PNG.
#[cfg(not(target_arch = "wasm32"))]
pub fn write(l: &Loaded, shot: &Shot, out: &Path) -> Result<(), ViewerError> {
    write_compare(l, shot, None, out, None)
}

/// [`write()`], in compare mode when `base` is given ([`prepare_compare`]); with `layout`,
/// also the drawn tracks as JSON ([`layout_json`](crate::view::drawn::layout_json)).
#[cfg(not(target_arch = "wasm32"))]
pub fn write_compare(
    l: &Loaded,
    shot: &Shot,
    base: Option<std::sync::Arc<Loaded>>,
    out: &Path,
    layout: Option<&Path>,
) -> Result<(), ViewerError> {
    let s = prepare_compare(l, shot, base)?;
    let px = render(l, &s)?;
    write_png(out, shot.width, shot.height, &px)?;
    if let Some(path) = layout {
        let text = crate::view::drawn::layout_json(l, &s).to_string();
        spall_util::write_atomically(path, |f| {
            std::io::Write::write_all(f, text.as_bytes()).map_err(|e| spall_util::WriteError {
                path: path.to_path_buf(),
                action: "write",
                source: e,
            })
        })?;
    }
    Ok(())
}

/// Writes a PNG atomically: an existing file is replaced only by a complete image.
pub fn write_png(out: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), ViewerError> {
    Ok(spall_util::write_atomically(out, |f| {
        render_gl::encode_png(f, width, height, rgba).map_err(|e| spall_util::WriteError {
            path: out.to_path_buf(),
            action: "write",
            source: e,
        })
    })?)
}
