//! The module's heap, grown in large steps.
//!
//! The standard allocator (dlmalloc) grows the WebAssembly memory by what each allocation
//! lacks, rounded to 64 KiB: a load of millions of spans grows it thousands of times, and
//! each `memory.grow` costs the engine a millisecond or more (V8 replaces the memory's
//! `ArrayBuffer` and collects garbage) whatever its size. So whenever an allocation has
//! grown the memory, a block of a quarter of the memory (at least 16 MiB) is allocated and
//! freed at once: the allocator keeps it as free space at the end of its heap and serves the
//! next allocations from it, and the memory grows a few dozen times in a load instead of
//! thousands. The block is only address space until used (the engine's pages are zero and
//! untouched); where it cannot be had (near the 4 GiB a module can address) nothing is
//! reserved and allocations grow the memory as they need, as before.
//!
//! ```ignore
//! #[global_allocator]
//! static HEAP: heap::Heap = heap::Heap;
//! ```
#![allow(unsafe_code)] // A global allocator is unsafe by signature.

use std::alloc::{GlobalAlloc, Layout, System};
use std::arch::wasm32;

/// WebAssembly's page size.
const PAGE: usize = 64 << 10;
/// The least reserved at once.
const MIN_STEP: usize = 16 << 20;

/// [`System`], with the memory grown in steps of a quarter of itself.
#[derive(Debug)]
pub struct Heap;

impl Heap {
    /// After an allocation that grew the memory: room for the next ones at once.
    #[cold]
    #[inline(never)]
    fn reserve(&self) {
        let step = (wasm32::memory_size(0) * PAGE / 4).max(MIN_STEP);
        // SAFETY: a plain allocation of a valid layout, freed with the same layout.
        unsafe {
            let layout = Layout::from_size_align_unchecked(step, 8);
            let p = System.alloc(layout);
            if !p.is_null() {
                System.dealloc(p, layout);
            }
        }
    }

    /// `f`, then [`reserve`](Self::reserve) if it grew the memory.
    #[inline]
    fn watch(&self, f: impl FnOnce() -> *mut u8) -> *mut u8 {
        let before = wasm32::memory_size(0);
        let p = f();
        if wasm32::memory_size(0) != before {
            self.reserve();
        }
        p
    }
}

// SAFETY: every call is passed on to `System` unchanged; `reserve` only allocates and frees.
unsafe impl GlobalAlloc for Heap {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.watch(|| System.alloc(layout))
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.watch(|| System.alloc_zeroed(layout))
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.watch(|| System.realloc(ptr, layout, new_size))
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

/// Memory made ready ahead of a model the page expects from its load worker: allocated
/// at once (address space), then its pages written a slice at a time while the worker is
/// still building and packing, and freed just before the page takes the model, whose
/// columns the allocator then serves from it. Writing a fresh page of the module's memory
/// makes the system commit it (a page fault each 4 KiB); done here, on a thread that waits
/// for the worker anyway, the page's copies of the columns find their memory ready. Where
/// the block cannot be had, nothing is made ready.
#[cfg(feature = "page")]
pub mod ahead {
    use std::alloc::{alloc, dealloc, Layout};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The block (0: none), its length and how much of it was written.
    static AT: AtomicUsize = AtomicUsize::new(0);
    static LEN: AtomicUsize = AtomicUsize::new(0);
    static DONE: AtomicUsize = AtomicUsize::new(0);

    /// The system's page, the stride of the writes.
    const OS_PAGE: usize = 4 << 10;
    /// The most made ready: the worker's figures are its own heap's (capacities, not
    /// lengths), and memory a module has grown is never returned, so a large model takes
    /// the rest as it goes.
    const MOST: usize = 1 << 30;

    /// Makes `bytes` more ready (on top of any block already held, which is freed first),
    /// up to [`MOST`] in all.
    pub fn reserve(bytes: usize) {
        let want = LEN.load(Ordering::Relaxed).saturating_add(bytes).min(MOST);
        release();
        let Ok(layout) = Layout::from_size_align(want.max(1), 8) else {
            return;
        };
        // SAFETY: a valid layout of nonzero size; freed with it in `release`.
        let p = unsafe { alloc(layout) };
        if !p.is_null() {
            AT.store(p as usize, Ordering::Relaxed);
            LEN.store(want, Ordering::Relaxed);
        }
    }

    /// Writes up to `bytes` more of the block's pages; true while some are left.
    pub fn touch(bytes: usize) -> bool {
        let (at, len) = (AT.load(Ordering::Relaxed), LEN.load(Ordering::Relaxed));
        let from = DONE.load(Ordering::Relaxed);
        if at == 0 || from >= len {
            return false;
        }
        let to = len.min(from.saturating_add(bytes));
        let mut i = from;
        while i < to {
            // SAFETY: inside the block `reserve` allocated, which nothing else uses.
            unsafe { std::ptr::write_volatile((at + i) as *mut u8, 0) };
            i += OS_PAGE;
        }
        DONE.store(i.min(len), Ordering::Relaxed);
        i < len
    }

    /// Frees the block, so the next allocations are served from it.
    pub fn release() {
        let at = AT.swap(0, Ordering::Relaxed);
        let len = LEN.swap(0, Ordering::Relaxed);
        DONE.store(0, Ordering::Relaxed);
        if at != 0 {
            // SAFETY: the pointer and layout `reserve` allocated with.
            unsafe {
                dealloc(
                    at as *mut u8,
                    Layout::from_size_align_unchecked(len.max(1), 8),
                )
            };
        }
    }
}
