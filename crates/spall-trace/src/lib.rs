//! Profile Rust code into `.spall` files, with nanoseconds of overhead per span.
//!
//! Each thread appends binary events to its own buffer, with no lock and no formatting;
//! a full buffer is written to the file as one `.spall` version 3 buffer. Timestamps come
//! from the CPU's time-stamp counter where it is invariant (else `Instant`), with the unit
//! in the file header. Open the result with `spall FILE`, or query it with `spall-cli`.
//!
//! ```
//! # let dir = std::env::temp_dir().join(format!("spall-trace-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("trace.spall");
//! let guard = spall_trace::init(&path)?; // usually `let _guard = ...` at the top of main
//! spall_trace::name_thread("main");
//! {
//!     let _s = spall_trace::span("parse");
//!     let _t = spall_trace::span_with("read", format_args!("file={}", "a.txt"));
//!     spall_trace::instant("cache miss");
//! }
//! std::thread::spawn(|| {
//!     spall_trace::scope!(); // a span named after the enclosing function
//! })
//! .join()
//! .unwrap();
//! let report = guard.finish()?; // or let it drop
//! assert_eq!(report.threads, 2);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Spans end when their guard drops, so a panic inside a span still closes it. Threads that
//! exit write their buffers; dropping the session's [`Guard`] writes those of threads still
//! running. With the `tracing` feature, `SpallLayer` records `tracing` spans and events.
//!
//! Instants use event type 5, which upstream spall reserves without a layout: files with
//! instants open in this project's tools, not in spall-web.

#![warn(missing_docs)]

mod arch;
mod buffer;
mod builder;
mod clock;
#[cfg(feature = "tracing")]
mod layer;
mod session;
mod shared;

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::Acquire;

use spall_layout as layout;

use buffer::Event;
use session::GENERATION;

pub use builder::{init, Builder, Guard};
pub use clock::Clock;
#[cfg(feature = "tracing")]
pub use layer::SpallLayer;
pub use session::Report;

/// An open span: it ends when dropped, on the thread that began it.
#[derive(Debug)]
#[must_use = "a span ends when dropped: bind it with `let _s = ...`"]
pub struct Span {
    /// The session it was recorded in; 0 when it was not recorded.
    generation: u64,
    /// Not `Send`: the End must go to the buffer of the thread that has the Begin.
    _thread: PhantomData<*const ()>,
}

impl Span {
    /// Whether the Begin was recorded (a session is running).
    pub fn is_recording(&self) -> bool {
        self.generation != 0
    }

    /// Forgets the span without an End (for instants, which have none).
    fn leak(mut self) -> u64 {
        std::mem::take(&mut self.generation)
    }
}

impl Drop for Span {
    #[inline]
    fn drop(&mut self) {
        if self.generation != 0 {
            end(self.generation);
        }
    }
}

/// Begins a span named `name` (at most 255 bytes are kept); it ends when the returned
/// guard drops. Costs one relaxed load when no session is running.
#[inline]
pub fn span(name: &str) -> Span {
    begin(layout::event_type::BEGIN, name, b"")
}

/// Begins a span with arguments shown in the viewer's details, such as
/// `format_args!("rows={n}")` (formatted into a 255-byte stack buffer, so no allocation).
#[inline]
pub fn span_with(name: &str, args: impl fmt::Display) -> Span {
    if GENERATION.load(Acquire) == 0 {
        return not_recording();
    }
    let args = Args::format(args);
    begin(layout::event_type::BEGIN, name, args.bytes())
}

/// Records an instant: something that happened at one moment on this thread.
#[inline]
pub fn instant(name: &str) {
    let _ = begin(layout::event_type::INSTANT, name, b"").leak();
}

/// Records an instant with arguments.
pub fn instant_with(name: &str, args: impl fmt::Display) {
    if GENERATION.load(Acquire) != 0 {
        let args = Args::format(args);
        let _ = begin(layout::event_type::INSTANT, name, args.bytes()).leak();
    }
}

/// Names the calling thread in the trace. Threads named through `std::thread::Builder`
/// are named automatically.
pub fn name_thread(name: &str) {
    let g = GENERATION.load(Acquire);
    if g != 0 {
        let name = layout::cut(name);
        buffer::record(
            g,
            &Event {
                ty: layout::event_type::NAME_THREAD,
                ticks: 0,
                name: name.as_bytes(),
                args: &[],
            },
        );
    }
}

fn not_recording() -> Span {
    Span {
        generation: 0,
        _thread: PhantomData,
    }
}

#[inline]
fn begin(ty: u8, name: &str, args: &[u8]) -> Span {
    let generation = GENERATION.load(Acquire);
    if generation == 0 {
        return not_recording();
    }
    let name = layout::cut(name);
    let ticks = clock::now();
    let ev = Event {
        ty,
        ticks,
        name: name.as_bytes(),
        args,
    };
    Span {
        generation: if buffer::record(generation, &ev) {
            generation
        } else {
            0
        },
        _thread: PhantomData,
    }
}

/// Ends the calling thread's innermost span of the running session, for callers (the
/// `tracing` layer) that pair Begin and End themselves.
#[cfg(feature = "tracing")]
fn end_current() {
    let g = GENERATION.load(Acquire);
    if g != 0 && buffer::joined(g) {
        end(g);
    }
}

#[inline]
fn end(generation: u64) {
    let ticks = clock::now();
    buffer::record(
        generation,
        &Event {
            ty: layout::event_type::END,
            ticks,
            name: &[],
            args: &[],
        },
    );
}

/// Arguments formatted on the stack, cut at 255 bytes on a character boundary.
struct Args {
    buf: [u8; layout::MAX_TEXT],
    len: usize,
}

impl Args {
    fn format(args: impl fmt::Display) -> Args {
        let mut a = Args {
            buf: [0; layout::MAX_TEXT],
            len: 0,
        };
        let _ = fmt::write(&mut a, format_args!("{args}"));
        a
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for Args {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = layout::MAX_TEXT - self.len;
        let mut n = s.len().min(room);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        if n < s.len() {
            Err(fmt::Error)
        } else {
            Ok(())
        }
    }
}

/// Begins a span that lasts until the end of the enclosing block: `scope!()` names it
/// after the enclosing function (`module::function`), `scope!("name")` and
/// `scope!("name", "rows={}", n)` name it and give it arguments.
#[macro_export]
macro_rules! scope {
    () => {
        let _spall_scope = $crate::span({
            fn f() {}
            static NAME: ::std::sync::OnceLock<&'static str> = ::std::sync::OnceLock::new();
            *NAME.get_or_init(|| $crate::__function_name(::std::any::type_name_of_val(&f)))
        });
    };
    ($name:expr) => {
        let _spall_scope = $crate::span($name);
    };
    ($name:expr, $($args:tt)+) => {
        let _spall_scope = $crate::span_with($name, format_args!($($args)+));
    };
}

/// `crate::module::function::f` (the type name of a function declared inside `function`)
/// shortened to `module::function`, closures skipped.
#[doc(hidden)]
pub fn __function_name(f: &'static str) -> &'static str {
    let mut path = f.strip_suffix("::f").unwrap_or(f);
    while let Some(p) = path.strip_suffix("::{{closure}}") {
        path = p;
    }
    match path.rmatch_indices("::").nth(1) {
        Some((i, _)) => &path[i + 2..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_keep_module_and_function() {
        assert_eq!(__function_name("app::parse::read::f"), "parse::read");
        assert_eq!(
            __function_name("app::parse::read::{{closure}}::{{closure}}::f"),
            "parse::read"
        );
        assert_eq!(__function_name("main::f"), "main");
    }

    #[test]
    fn args_are_cut_on_a_character_boundary() {
        let a = Args::format(format_args!("{}", "é".repeat(200)));
        assert_eq!(a.len, 254);
        assert!(std::str::from_utf8(a.bytes()).is_ok());
    }
}
