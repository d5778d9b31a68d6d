//! The part of a thread's buffer that the session reads, and the pool of buffers that
//! exited threads leave for new ones. Below both the session and the recording threads,
//! which each hold `&'static Shared`.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Mutex;

use spall_layout as layout;

/// The part of a thread's buffer the session reads.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) words: Box<[AtomicU64]>,
    /// Bytes of complete events, stored after them with `Release`.
    pub(crate) published: AtomicUsize,
    /// The first event's timestamp, for the buffer header.
    pub(crate) first_ts: AtomicU64,
    /// The thread's id in the file (buffers are reused by later threads).
    tid: AtomicU32,
}

impl Shared {
    pub(crate) fn capacity(&self) -> usize {
        (self.words.len() - 2) * 8
    }

    pub(crate) fn set_tid(&self, tid: u32) {
        // Read under the session lock, which orders it.
        self.tid.store(tid, Relaxed);
    }

    /// Writes the complete events into `out` as one `.spall` buffer, returning its length
    /// (0 when there are none), and empties this one. `out` only grows, so a buffer is not
    /// zeroed for every write. Called with the session lock held, which is what makes the
    /// reset safe: the owning thread resets only under the same lock.
    pub(crate) fn drain_into(&self, pid: u32, out: &mut Vec<u8>) -> usize {
        let len = self.published.load(Acquire);
        if len == 0 {
            return 0;
        }
        let h = layout::BUFFER_HEADER_LEN;
        let need = h + len.div_ceil(8) * 8;
        if out.len() < need {
            out.resize(need, 0);
        }
        let (ts, tid) = (self.first_ts.load(Relaxed), self.tid.load(Relaxed));
        out[..h].copy_from_slice(&layout::buffer_header(len as u32, pid, tid, ts));
        for (to, w) in out[h..need].chunks_exact_mut(8).zip(&self.words[..]) {
            to.copy_from_slice(&w.load(Relaxed).to_le_bytes());
        }
        self.published.store(0, Release);
        h + len
    }
}

/// Buffers of threads that have exited, for threads yet to start.
static POOL: Mutex<Vec<&'static Shared>> = Mutex::new(Vec::new());

/// A buffer of `bytes` bytes: one from the pool, or a new one that lives as long as the
/// process.
pub(crate) fn take_buffer(bytes: usize) -> &'static Shared {
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = pool.iter().position(|s| s.capacity() == bytes) {
        return pool.swap_remove(i);
    }
    drop(pool);
    Box::leak(Box::new(Shared {
        // Two words of slack: `Words::word` stores one word past the last byte.
        words: (0..bytes.div_ceil(8) + 2)
            .map(|_| AtomicU64::new(0))
            .collect(),
        published: AtomicUsize::new(0),
        first_ts: AtomicU64::new(0),
        tid: AtomicU32::new(0),
    }))
}

pub(crate) fn give_back(shared: &'static Shared) {
    shared.published.store(0, Release);
    POOL.lock().unwrap_or_else(|e| e.into_inner()).push(shared);
}
