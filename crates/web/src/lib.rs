//! The spall viewer in a browser: `scripts/build-web.sh OUTDIR` compiles this crate to
//! WebAssembly and writes a static site (`index.html`, the `.wasm` and its JavaScript glue).
//! Nothing runs on a server: traces are read by the page and never leave the machine.
//!
//! The page (`web/index.html`) calls `start` once. Each trace (dropped on the page, picked,
//! or `?trace=URL`) is loaded by a Web Worker (`web/worker.js`), a second instance of this
//! module that reads the file, builds the trace with `Loader` (wasm32 only) and hands it
//! over in pieces: the page says `load_begun`, `load_progress` as it goes, then `open_model` with the
//! trace and `open_index` with its index (and `open_stats` with the statistics the worker computes after it), or
//! `open_failed` with why there is none. Where no worker can start, the page
//! gives the bytes to `open_bytes`, which loads them in steps on the page's thread.
//! `run_sql` serves `?sql=QUERY`. Everything else is `spall_viewer`'s, compiled for `wasm32`.
//!
//! Built with `--no-default-features --features threads` (and atomics), the crate is the
//! threaded load worker's module instead: `Loader` and `initThreadPool` (rayon's pool on Web
//! Workers sharing the module's memory), no viewer. `web/worker.js` takes it on a
//! cross-origin-isolated page (docs/WEB.md, "Threads").
//! With no features at all it is the `Loader` alone, which `scripts/build-web.sh` builds with
//! simd128 for the single load worker (`?simd=0` on the page: its scalar module instead;
//! docs/WEB.md, "SIMD").
//!
//! On other targets this crate is empty.

#[cfg(target_arch = "wasm32")]
mod heap;
#[cfg(all(target_arch = "wasm32", feature = "threads"))]
pub use wasm_bindgen_rayon::init_thread_pool;
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static HEAP: heap::Heap = heap::Heap;
#[cfg(target_arch = "wasm32")]
mod worker;
#[cfg(target_arch = "wasm32")]
pub use worker::Loader;

#[cfg(all(target_arch = "wasm32", feature = "page"))]
mod page {
    use wasm_bindgen::prelude::*;

    /// Starts the viewer on the page's `<canvas id="spall-canvas">`, showing the built-in
    /// demo until a trace is opened. A panic is written to the console and to
    /// `<body data-state="error" data-error=...>`, never a silent blank canvas.
    #[wasm_bindgen]
    pub fn start(demo: bool) -> Result<(), JsValue> {
        std::panic::set_hook(Box::new(|info| {
            let msg = format!("spall panicked: {info}");
            web_sys::console::error_1(&msg.clone().into());
            if let Some(body) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.body())
            {
                let _ = body.dataset().set("state", "error");
                let _ = body.dataset().set("error", &msg);
            }
        }));
        let options = spall_viewer::app::Options {
            start_empty: !demo,
            ..Default::default()
        };
        spall_viewer::app::start(options).map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// A load began in the page's worker (the page ended any other worker first).
    #[wasm_bindgen]
    pub fn load_begun(name: String) {
        spall_viewer::platform::web::load_begun(name);
    }

    /// The worker's progress: `done` of `total` bytes, in `stage` ("reading",
    /// "decompressing", "loading", "building", "indexing").
    #[wasm_bindgen]
    pub fn load_progress(done: f64, total: f64, stage: &str) {
        spall_viewer::platform::web::load_progress(done, total, stage);
    }

    /// The worker's estimate of the model it is building, in bytes: the page writes that
    /// much of its memory while the worker decodes, so that taking the model faults in no
    /// fresh pages (`spall_viewer::platform::web::warm`).
    #[wasm_bindgen]
    pub fn warm_memory(bytes: f64) {
        spall_viewer::platform::web::warm::warm_memory(bytes);
    }

    /// The worker's trace, as `Loader::finish` returned it: taken while the worker builds
    /// its index.
    #[wasm_bindgen]
    pub fn open_model(name: String, model: JsValue) {
        spall_viewer::platform::web::open_model(name, model);
    }

    /// The index of the trace `open_model` opened, as `Loader::finish_index` returned it:
    /// taken, then the trace shown.
    #[wasm_bindgen]
    pub fn open_index(name: String, index: JsValue) {
        spall_viewer::platform::web::open_index(name, index);
    }

    /// The stored levels of the index `open_index` took, which that part left for later
    /// (`Loader::finish_levels`): the page takes them while it draws.
    #[wasm_bindgen]
    pub fn open_levels(name: String, levels: JsValue) {
        spall_viewer::platform::web::open_levels(name, levels);
    }

    /// The worker's whole-trace statistics of the trace it built (`Loader::stats`); empty:
    /// the page computes them.
    #[wasm_bindgen]
    pub fn open_stats(name: String, bytes: Vec<u8>) {
        spall_viewer::platform::web::open_stats(name, bytes);
    }

    /// Opens a trace from its bytes, in steps on the page's thread (no worker); `name` is
    /// shown as its source.
    #[wasm_bindgen]
    pub fn open_bytes(name: String, bytes: Vec<u8>) {
        spall_viewer::platform::web::open_bytes(name, bytes);
    }

    /// Shows why the page could not get a trace.
    #[wasm_bindgen]
    pub fn open_failed(message: String) {
        spall_viewer::platform::web::open_failed(message);
    }

    /// Compare mode: a load of BASE began in a load worker of its own (`?compare=`,
    /// "Compare with…", a drop with Shift or Alt).
    #[wasm_bindgen]
    pub fn base_begun(name: String) {
        spall_viewer::platform::web::base::base_begun(name);
    }

    /// Compare mode: the worker's BASE, as `Loader::finish` and `Loader::finish_index`
    /// returned it.
    #[wasm_bindgen]
    pub fn open_base(name: String, model: JsValue, index: JsValue) {
        spall_viewer::platform::web::base::open_base(name, model, index);
    }

    /// Compare mode: BASE's file bytes, loaded on the page's thread (no worker).
    #[wasm_bindgen]
    pub fn open_base_bytes(name: String, bytes: Vec<u8>) {
        spall_viewer::platform::web::base::open_base_bytes(name, bytes);
    }

    /// Compare mode: why the page could not get BASE.
    #[wasm_bindgen]
    pub fn base_failed(name: String, message: String) {
        spall_viewer::platform::web::base::base_failed(name, message);
    }

    /// Runs a query in the side panel's SQL section once a trace is loaded (`?sql=`).
    #[wasm_bindgen]
    pub fn run_sql(sql: String) {
        spall_viewer::platform::web::run_sql(sql);
    }
}
