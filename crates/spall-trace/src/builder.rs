//! Starting and ending a session: [`Builder`], [`init`] and the [`Guard`]. Above both the
//! session registry and the per-thread buffers, since a process name is recorded as the
//! starting thread's first event.

use std::io;
use std::path::{Path, PathBuf};

use spall_layout as layout;

use crate::buffer::{self, Event};
use crate::clock::Clock;
use crate::session::{self, Report};

/// Settings for a session; [`init`](crate::init) uses the defaults.
///
/// ```no_run
/// let _guard = spall_trace::Builder::new("trace.spall")
///     .process_name("my-server")
///     .buffer_size(4 << 20)
///     .clock(spall_trace::Clock::Instant)
///     .start()?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    path: PathBuf,
    buffer_size: usize,
    clock: Clock,
    process_name: Option<String>,
}

impl Builder {
    /// A session writing to `path` (created, or truncated if it exists).
    pub fn new(path: impl AsRef<Path>) -> Builder {
        Builder {
            path: path.as_ref().to_path_buf(),
            buffer_size: 1 << 20,
            clock: Clock::Auto,
            process_name: None,
        }
    }

    /// Each thread's buffer, in bytes (default 1 MiB; at least 4 KiB, at most 1 GiB). A
    /// thread writes its buffer to the file when it is full, so larger buffers mean fewer,
    /// larger writes and more memory per thread.
    pub fn buffer_size(mut self, bytes: usize) -> Builder {
        self.buffer_size = bytes.clamp(4 << 10, 1 << 30);
        self
    }

    /// Where timestamps come from (default [`Clock::Auto`]).
    pub fn clock(mut self, clock: Clock) -> Builder {
        self.clock = clock;
        self
    }

    /// The process's name in the viewer (default: none, so the viewer shows the pid).
    pub fn process_name(mut self, name: impl Into<String>) -> Builder {
        self.process_name = Some(name.into());
        self
    }

    /// Creates the file and starts recording. Fails if the file cannot be created or a
    /// session is already running.
    pub fn start(self) -> io::Result<Guard> {
        let generation = session::open(&self.path, self.buffer_size, self.clock)?;
        if let Some(name) = &self.process_name {
            let name = layout::cut(name);
            buffer::record(
                generation,
                &Event {
                    ty: layout::event_type::NAME_PROCESS,
                    ticks: 0,
                    name: name.as_bytes(),
                    args: &[],
                },
            );
        }
        Ok(Guard {
            generation,
            path: self.path,
        })
    }
}

/// Starts recording to `path` with default settings; see [`Builder`] for the others.
/// Dropping the returned guard writes every thread's events and closes the file.
pub fn init(path: impl AsRef<Path>) -> io::Result<Guard> {
    Builder::new(path).start()
}

/// The running session. Dropping it (or calling [`finish`](Guard::finish)) writes out the
/// buffers of every thread, including threads still running, and closes the file; events
/// recorded after that are not written.
#[derive(Debug)]
#[must_use = "the session ends when the guard is dropped"]
pub struct Guard {
    generation: u64,
    path: PathBuf,
}

impl Guard {
    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Ends the session and says what was written, or the first write error.
    pub fn finish(mut self) -> io::Result<Report> {
        session::end(std::mem::take(&mut self.generation))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.generation != 0 {
            let _ = session::end(self.generation);
        }
    }
}
