//! The spall viewer in a browser: `scripts/build-web.sh OUTDIR` compiles this crate to
//! WebAssembly and writes a static site (`index.html`, the `.wasm` and its JavaScript glue).
//! Nothing runs on a server: traces are read by the page and never leave the machine.
//!
//! The page (`web/index.html`) calls `start` once, then `open_bytes` with each trace's
//! bytes (dropped on the page, picked, or fetched for `?trace=URL`), or `open_failed` with
//! why it could not get them, and `run_sql` for `?sql=QUERY`. Everything else is `spall_viewer`'s, compiled for `wasm32`.
//!
//! On other targets this crate is empty.

#[cfg(target_arch = "wasm32")]
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

    /// Opens a trace from its bytes; `name` is shown as its source.
    #[wasm_bindgen]
    pub fn open_bytes(name: String, bytes: Vec<u8>) {
        spall_viewer::platform::web::open_bytes(name, bytes);
    }

    /// Shows why the page could not get a trace.
    #[wasm_bindgen]
    pub fn open_failed(message: String) {
        spall_viewer::platform::web::open_failed(message);
    }

    /// Runs a query in the side panel's SQL section once a trace is loaded (`?sql=`).
    #[wasm_bindgen]
    pub fn run_sql(sql: String) {
        spall_viewer::platform::web::run_sql(sql);
    }
}
