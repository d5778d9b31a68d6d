//! Compare mode's BASE on a page: the page loads it as it loads a trace, in a load worker
//! of its own (`?compare=URL`, "Compare with…", a file dropped with Shift or Alt held),
//! and hands over the worker's buffer, or, where no worker starts, the file's bytes. The
//! app takes it in one go (BASE is not shown while it loads: the trace compared with
//! it stays on screen) and compares as a native window does (`UserEvent::Base`).

use std::cell::RefCell;
use std::path::PathBuf;

use wasm_bindgen::JsCast;

use super::{document, send, Taking};
use crate::loaded::Loaded;
use crate::platform::UserEvent;
use crate::view::state::ViewState;

/// What the page says of compare mode's BASE.
#[derive(Debug)]
pub enum PageBase {
    /// A load of BASE began (the page ended any other BASE load first).
    Begun(String),
    /// The worker built BASE: its name and `web::pack`'s model.
    Built(String, super::Model),
    /// No worker: the file's bytes.
    Bytes(String, Vec<u8>),
    /// BASE could not be had: its name and why.
    Failed(String, String),
}

/// A load of BASE began in the page's worker.
pub fn base_begun(name: String) {
    send(UserEvent::PageBase(PageBase::Begun(name)));
}

/// The worker's BASE, as [`super::pack_trace`] and [`super::pack_index`] packed it.
pub fn open_base(name: String, model: wasm_bindgen::JsValue, index: wasm_bindgen::JsValue) {
    let mut model = super::Model::from_js(&model);
    if !model.has_index() {
        model.add_index(&index);
    }
    send(UserEvent::PageBase(PageBase::Built(name, model)));
}

/// BASE's file bytes, where no worker could start.
pub fn open_base_bytes(name: String, bytes: Vec<u8>) {
    send(UserEvent::PageBase(PageBase::Bytes(name, bytes)));
}

/// The page could not get BASE.
pub fn base_failed(name: String, message: String) {
    send(UserEvent::PageBase(PageBase::Failed(name, message)));
}

impl PageBase {
    /// The BASE this is about, as `UserEvent::Base` names it.
    pub(crate) fn name(&self) -> PathBuf {
        match self {
            PageBase::Begun(n) | PageBase::Built(n, _) => PathBuf::from(n),
            PageBase::Bytes(n, _) | PageBase::Failed(n, _) => PathBuf::from(n),
        }
    }

    /// The trace, once built (`None` for [`PageBase::Begun`]).
    pub(crate) fn into_loaded(self) -> Option<Result<Loaded, String>> {
        match self {
            PageBase::Begun(_) => None,
            PageBase::Failed(_, e) => Some(Err(e)),
            PageBase::Built(name, model) => {
                let mut taking = Taking::new(model);
                loop {
                    if let Some(r) = taking.run(&name) {
                        return Some(r);
                    }
                }
            }
            PageBase::Bytes(name, bytes) => Some(
                trace_model::load_bytes(&bytes)
                    .map(|t| Loaded::new(t, name.clone()))
                    .map_err(|e| e.with_path(name).to_string()),
            ),
        }
    }
}

/// "Compare with…": the page's second file picker (`<input type="file"
/// id="spall-base-file">`).
pub(crate) fn pick() {
    if let Some(input) = document()
        .and_then(|d| d.get_element_by_id("spall-base-file"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        input.click();
    }
}

thread_local! {
    static REPORTED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Writes `<body data-base-spans>`: the span count of the BASE the view is compared
/// with (empty when it is not), for scripts and the browser test.
pub(crate) fn report(s: Option<&ViewState>) {
    let spans = s
        .and_then(|s| s.flame.base.as_ref())
        .map_or(String::new(), |b| b.span_count().to_string());
    let changed = REPORTED.with(|r| {
        let mut r = r.borrow_mut();
        (r.as_ref() != Some(&spans)).then(|| *r = Some(spans.clone()))
    });
    if changed.is_none() {
        return;
    }
    if let Some(body) = document().and_then(|d| d.body()) {
        let _ = body.dataset().set("baseSpans", &spans);
    }
}
