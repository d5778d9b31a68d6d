//! The tracing session: the output file, the threads writing to it, and the guard that
//! ends it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Mutex, MutexGuard};

use spall_layout as layout;

use crate::buffer::{self, Event, Shared};
use crate::clock::{self, Clock};

/// The running session's number, read by every event; 0 when none runs.
pub(crate) static GENERATION: AtomicU64 = AtomicU64::new(0);
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);
/// Thread ids in the file: small numbers in order of each thread's first event.
static NEXT_TID: AtomicU32 = AtomicU32::new(1);
static SESSION: Mutex<Option<Session>> = Mutex::new(None);

#[derive(Debug)]
struct Session {
    generation: u64,
    out: BufWriter<File>,
    pid: u32,
    buffer_bytes: usize,
    /// Every thread that has recorded and not exited.
    threads: Vec<&'static Shared>,
    scratch: Vec<u8>,
    error: Option<io::Error>,
    report: Report,
}

impl Session {
    fn write(&mut self, shared: &Shared) {
        let n = shared.drain_into(self.pid, &mut self.scratch);
        if n == 0 || self.error.is_some() {
            return;
        }
        match self.out.write_all(&self.scratch[..n]) {
            Ok(()) => {
                self.report.buffers += 1;
                self.report.bytes += n as u64;
            }
            Err(e) => self.error = Some(e),
        }
    }
}

fn lock() -> MutexGuard<'static, Option<Session>> {
    // A panic while holding the lock leaves the session usable: its state is whole after
    // every statement that can panic.
    SESSION.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a session wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Threads that recorded at least one event.
    pub threads: u64,
    /// `.spall` buffers written.
    pub buffers: u64,
    /// Bytes written, the file header included.
    pub bytes: u64,
}

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
        let mut slot = lock();
        if slot.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a spall-trace session is already running; drop its guard first",
            ));
        }
        let file = File::create(&self.path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create {}: {e}", self.path.display()),
            )
        })?;
        let mut out = BufWriter::with_capacity(64 << 10, file);
        let ns_per_tick = clock::start(self.clock);
        out.write_all(&layout::file_header(ns_per_tick))?;
        let generation = NEXT_GENERATION.fetch_add(1, Relaxed);
        *slot = Some(Session {
            generation,
            out,
            pid: std::process::id(),
            buffer_bytes: self.buffer_size,
            threads: Vec::new(),
            scratch: Vec::new(),
            error: None,
            report: Report {
                bytes: layout::HEADER_LEN as u64,
                ..Report::default()
            },
        });
        GENERATION.store(generation, Release);
        drop(slot);
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
        end(std::mem::take(&mut self.generation))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.generation != 0 {
            let _ = end(self.generation);
        }
    }
}

fn end(generation: u64) -> io::Result<Report> {
    let _ = GENERATION.compare_exchange(generation, 0, AcqRel, Relaxed);
    let mut slot = lock();
    let Some(mut s) = slot.take_if(|s| s.generation == generation) else {
        return Err(io::Error::other("the session has already ended"));
    };
    drop(slot);
    for t in std::mem::take(&mut s.threads) {
        s.write(t);
    }
    s.out.flush()?;
    match s.error {
        Some(e) => Err(e),
        None => Ok(s.report),
    }
}

/// Adds the calling thread to session `generation` with the buffer `take` returns for the
/// session's buffer size, and gives it the next thread id.
pub(crate) fn register(
    generation: u64,
    take: impl FnOnce(usize) -> &'static Shared,
) -> Option<&'static Shared> {
    let mut slot = lock();
    let s = slot.as_mut().filter(|s| s.generation == generation)?;
    let shared = take(s.buffer_bytes);
    shared.set_tid(NEXT_TID.fetch_add(1, Relaxed));
    s.threads.push(shared);
    s.report.threads += 1;
    Some(shared)
}

/// Writes a thread's full buffer. Returns false if session `generation` has ended.
pub(crate) fn write_buffer(generation: u64, shared: &Shared) -> bool {
    let mut slot = lock();
    match slot.as_mut().filter(|s| s.generation == generation) {
        Some(s) => {
            s.write(shared);
            true
        }
        None => false,
    }
}

/// Writes an exiting thread's events and forgets the thread.
pub(crate) fn leave(generation: u64, shared: &'static Shared) {
    let mut slot = lock();
    if let Some(s) = slot.as_mut().filter(|s| s.generation == generation) {
        s.write(shared);
        s.threads.retain(|t| !std::ptr::eq(*t, shared));
    }
}
