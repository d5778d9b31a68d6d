//! The running session: its output file, the threads writing to it, and the number
//! (generation) every event checks. Threads register here and hand over full buffers;
//! [`Builder`](crate::Builder) opens a session and its [`Guard`](crate::Guard) ends it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Mutex, MutexGuard};

use spall_layout as layout;

use crate::clock::{self, Clock};
use crate::shared::Shared;

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

/// Creates the session's file, writes its header and makes it the running session.
/// Returns its generation. Fails if the file cannot be created or a session is running.
pub(crate) fn open(path: &Path, buffer_bytes: usize, clock: Clock) -> io::Result<u64> {
    let mut slot = lock();
    if slot.is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a spall-trace session is already running; drop its guard first",
        ));
    }
    let file = File::create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display())))?;
    let mut out = BufWriter::with_capacity(64 << 10, file);
    let ns_per_tick = clock::start(clock);
    out.write_all(&layout::file_header(ns_per_tick))?;
    let generation = NEXT_GENERATION.fetch_add(1, Relaxed);
    *slot = Some(Session {
        generation,
        out,
        pid: std::process::id(),
        buffer_bytes,
        threads: Vec::new(),
        scratch: Vec::new(),
        error: None,
        report: Report {
            bytes: layout::HEADER_LEN as u64,
            ..Report::default()
        },
    });
    GENERATION.store(generation, Release);
    Ok(generation)
}

/// Ends session `generation`: writes every thread's events and flushes the file.
pub(crate) fn end(generation: u64) -> io::Result<Report> {
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
