//! Per-thread event buffers.
//!
//! Each thread appends its events to its own buffer with no lock: plain stores into words
//! that only it writes, then a release store of how many bytes are complete. The session
//! (under its lock) can therefore read any thread's complete events at any time, which is
//! how dropping the guard flushes threads that are still running, such as a thread pool's
//! idle workers. A thread takes the session lock only to write out a full buffer, and when
//! it exits.
//!
//! Words are `AtomicU64` so that this sharing needs no `unsafe`: on x86-64 and AArch64 a
//! relaxed atomic store is an ordinary store. Buffers live for the whole process (a
//! thread's buffer goes back to a pool when it exits, for the next thread), so the hot path
//! holds a plain `&'static` in a destructor-free thread-local: reaching it costs one
//! thread-pointer-relative load, with no lazy-initialisation check and no reference count.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::*};

use spall_layout::{self as layout, event_type};

use crate::session::{self, GENERATION};
use crate::shared::{give_back, take_buffer, Shared};

/// A thread's writing end: copyable cells, so the thread-local needs no destructor.
struct Local {
    /// The session this buffer belongs to; 0 before the thread's first event.
    generation: Cell<u64>,
    shared: Cell<Option<&'static Shared>>,
    /// Bytes written, and the bytes of the last, partly filled word.
    pos: Cell<usize>,
    tail: Cell<u64>,
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            generation: Cell::new(0),
            shared: Cell::new(None),
            pos: Cell::new(0),
            tail: Cell::new(0),
        }
    };
    /// Touched when a thread first records; its destructor runs when the thread exits.
    static EXIT: Exit = const { Exit };
}

/// Hands an exiting thread's events to the session and its buffer to the pool.
struct Exit;

impl Drop for Exit {
    fn drop(&mut self) {
        let _ = LOCAL.try_with(|l| {
            let generation = l.generation.replace(0);
            if let Some(shared) = l.shared.take() {
                if generation != 0 && generation == GENERATION.load(Acquire) {
                    session::leave(generation, shared);
                }
                give_back(shared);
            }
        });
    }
}

/// An event: its type (an [`event_type`]), timestamp and texts, already cut to the
/// format's 255 bytes. Ends have no texts; names have no timestamp.
pub(crate) struct Event<'a> {
    pub(crate) ty: u8,
    pub(crate) ticks: u64,
    pub(crate) name: &'a [u8],
    pub(crate) args: &'a [u8],
}

impl Event<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        match self.ty {
            event_type::END => layout::END_LEN,
            event_type::NAME_PROCESS | event_type::NAME_THREAD => 2 + self.name.len(),
            _ => layout::BEGIN_LEN + self.name.len() + self.args.len(),
        }
    }

    /// Writes the event in the layout of `spall_layout`'s encoders, a word at a time.
    #[inline(always)]
    fn encode(&self, w: &mut Words<'_>) {
        let (ty, t) = (self.ty, self.ticks);
        match ty {
            event_type::END => w.word72(u128::from(ty) | u128::from(t) << 8),
            event_type::NAME_PROCESS | event_type::NAME_THREAD => {
                w.word(u64::from(ty) | (self.name.len() as u64) << 8, 2);
                w.bytes(self.name);
            }
            _ => {
                w.word72(u128::from(ty) | u128::from(t) << 8);
                // The lengths share a word with up to six bytes of the name.
                let (head, rest) = self.name.split_at(self.name.len().min(6));
                let lens = self.name.len() as u64 | (self.args.len() as u64) << 8;
                let head_bytes = if head.is_empty() { 0 } else { partial(head) };
                w.word(lens | head_bytes << 16, 2 + head.len());
                w.bytes(rest);
                w.bytes(self.args);
            }
        }
    }
}

/// Appends an event to this thread's buffer if session `generation` is still running.
/// Returns whether it was recorded.
#[inline(always)]
pub(crate) fn record(generation: u64, ev: &Event<'_>) -> bool {
    LOCAL
        .try_with(|l| {
            if l.generation.get() != generation && !join(l, generation) {
                return false;
            }
            append(l, ev)
        })
        .unwrap_or(false)
}

/// Whether this thread's buffer belongs to session `generation`.
#[cfg(feature = "tracing")]
pub(crate) fn joined(generation: u64) -> bool {
    LOCAL
        .try_with(|l| l.generation.get() == generation)
        .unwrap_or(false)
}

/// Registers this thread with session `generation`, discarding anything left from an
/// earlier session.
#[cold]
fn join(l: &Local, generation: u64) -> bool {
    if EXIT.try_with(|_| ()).is_err() {
        return false; // The thread is exiting.
    }
    let mine = l.shared.get();
    // Under the session's lock: an earlier session's bytes are forgotten before the new
    // session can read this buffer.
    let Some(shared) = session::register(generation, |bytes| match mine {
        Some(s) if s.capacity() == bytes => {
            s.published.store(0, Release);
            s
        }
        _ => {
            if let Some(old) = mine {
                give_back(old);
            }
            take_buffer(bytes)
        }
    }) else {
        return false;
    };
    l.generation.set(generation);
    l.shared.set(Some(shared));
    l.pos.set(0);
    l.tail.set(0);
    if let Some(name) = std::thread::current().name() {
        append(
            l,
            &Event {
                ty: event_type::NAME_THREAD,
                ticks: 0,
                name: layout::cut(name).as_bytes(),
                args: &[],
            },
        );
    }
    true
}

#[inline(always)]
fn append(l: &Local, ev: &Event<'_>) -> bool {
    let Some(shared) = l.shared.get() else {
        return false;
    };
    let mut pos = l.pos.get();
    if pos + ev.len() > shared.capacity() {
        if !write_out(l, shared) {
            return false;
        }
        pos = 0;
    }
    if pos == 0 {
        shared.first_ts.store(ev.ticks, Relaxed);
    }
    let mut w = Words {
        words: &shared.words,
        pos,
        tail: l.tail.get(),
    };
    ev.encode(&mut w);
    l.pos.set(w.pos);
    l.tail.set(w.tail);
    shared.published.store(w.pos, Release);
    true
}

/// Writes the full buffer to the session's file and starts an empty one.
#[cold]
fn write_out(l: &Local, shared: &Shared) -> bool {
    let ok = session::write_buffer(l.generation.get(), shared);
    l.pos.set(0);
    l.tail.set(0);
    if !ok {
        // The session ended: later events go nowhere until the next one.
        l.generation.set(0);
    }
    ok
}

/// A byte stream over words: `pos` bytes written, the last `pos % 8` of them held in
/// `tail` (and already stored in their word).
struct Words<'a> {
    words: &'a [AtomicU64],
    pos: usize,
    tail: u64,
}

impl Words<'_> {
    /// Appends the low `n` (1 to 8) bytes of `v`, whose other bytes are zero. Stores two
    /// words unconditionally, rather than branching on whether a word filled up: the second
    /// lies past the end of the stream and is rewritten when the stream reaches it.
    #[inline(always)]
    fn word(&mut self, v: u64, n: usize) {
        let i = self.pos / 8;
        let merged = u128::from(self.tail) | u128::from(v) << ((self.pos % 8) * 8);
        let (lo, hi) = (merged as u64, (merged >> 64) as u64);
        self.words[i].store(lo, Relaxed);
        self.words[i + 1].store(hi, Relaxed);
        self.pos += n;
        self.tail = if self.pos / 8 > i { hi } else { lo };
    }

    /// Appends 9 bytes (a type byte and a timestamp): at most 56 bits of tail plus 72
    /// fit in the 128 of two words.
    #[inline(always)]
    fn word72(&mut self, v: u128) {
        let i = self.pos / 8;
        let merged = u128::from(self.tail) | v << ((self.pos % 8) * 8);
        let (lo, hi) = (merged as u64, (merged >> 64) as u64);
        self.words[i].store(lo, Relaxed);
        self.words[i + 1].store(hi, Relaxed);
        self.pos += 9;
        // Nine bytes complete one word, or two when the tail was full but for one byte.
        self.tail = if self.pos / 8 == i + 1 { hi } else { 0 };
    }

    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")), 8);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            self.word(partial(rest), rest.len());
        }
    }
}

/// 1 to 7 bytes as the low bytes of a word, without a loop: two overlapping reads.
#[inline(always)]
fn partial(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
        let hi = u32::from_le_bytes(b[n - 4..].try_into().expect("4 bytes"));
        u64::from(lo) | u64::from(hi) << ((n - 4) * 8)
    } else {
        u64::from(b[0]) | u64::from(b[n / 2]) << (n / 2 * 8) | u64::from(b[n - 1]) << ((n - 1) * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(events: &[Event<'_>], offset: usize) -> Vec<u8> {
        let words: Vec<AtomicU64> = (0..200).map(|_| AtomicU64::new(0)).collect();
        let mut w = Words {
            words: &words,
            pos: 0,
            tail: 0,
        };
        // Start misaligned by `offset` bytes of padding.
        for _ in 0..offset {
            w.word(0xEE, 1);
        }
        for ev in events {
            ev.encode(&mut w);
        }
        let bytes: Vec<u8> = words
            .iter()
            .flat_map(|x| x.load(Relaxed).to_le_bytes())
            .collect();
        bytes[offset..w.pos].to_vec()
    }

    #[test]
    fn words_match_the_layout_encoders_at_every_alignment() {
        let names: [&[u8]; 5] = [
            b"",
            b"a",
            b"abc",
            b"frame",
            b"a longer name, 30 bytes long..",
        ];
        for offset in 0..8 {
            for name in names {
                for args in names {
                    let t = 0x0102_0304_0506_0708u64 + offset as u64;
                    let mut expected =
                        layout::begin_header(t, name.len() as u8, args.len() as u8).to_vec();
                    expected.extend_from_slice(name);
                    expected.extend_from_slice(args);
                    expected.extend_from_slice(&layout::end(t + 1));
                    expected.extend_from_slice(&layout::name_header(
                        event_type::NAME_THREAD,
                        name.len() as u8,
                    ));
                    expected.extend_from_slice(name);
                    let got = stream(
                        &[
                            Event {
                                ty: event_type::BEGIN,
                                ticks: t,
                                name,
                                args,
                            },
                            Event {
                                ty: event_type::END,
                                ticks: t + 1,
                                name: &[],
                                args: &[],
                            },
                            Event {
                                ty: event_type::NAME_THREAD,
                                ticks: 0,
                                name,
                                args: &[],
                            },
                        ],
                        offset,
                    );
                    assert_eq!(
                        got, expected,
                        "offset {offset}, name {name:?}, args {args:?}"
                    );
                }
            }
        }
    }
}
