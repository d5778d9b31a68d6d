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
