//! Heap settings for the binaries, made for a load: a few hundred megabytes written once,
//! in blocks of a few hundred kilobytes, while earlier stages free theirs.

/// Tunes glibc's allocator for loading (elsewhere it does nothing). By default glibc
/// gives each block from 128 KiB up (a threshold it raises as blocks are freed) a mapping
/// of its own and returns it to the kernel when it is freed, so the memory one stage frees is faulted in and zeroed again, page by
/// page, by the next. Here blocks up to 32 MiB come from the heap, which grows 64 MiB at a
/// time and keeps up to 512 MiB of freed memory for reuse. Call it first thing in `main`,
/// before any thread starts.
pub fn tune_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt changes thresholds for later allocations only, and no other thread
    // is allocating yet.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Gives the heap's free pages back to the kernel (glibc; elsewhere it does nothing): for
/// a stage that frees a large input piece by piece while its output, in blocks of their
/// own mappings, grows, so the two are not both held.
pub fn release_free() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; it is safe to call at any time.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Asks the CPU for the cache line of `items[i]`, read soon (a hint that changes no
/// result; nothing where `i` is past the end or the target has no prefetch instruction):
/// for a walk over several long arrays at once, whose lines the hardware does not fetch
/// ahead across pages.
#[inline(always)]
pub fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = items.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86_64 CPU; a prefetch reads nothing the program
        // sees and cannot fault, and the address is in `items`.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(x).cast())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}
