//! Memory-mapped files that survive being truncated while mapped.
//!
//! Reading a mapped page past the end of a file that shrank raises `SIGBUS`, which kills the
//! process: a trace being rewritten by its producer, or truncated by a user, would crash the
//! viewer. While a [`MappedFile`] lives, its address range is registered with a `SIGBUS`
//! handler; a fault inside a registered range maps zero pages over the rest of it (so the
//! reading code carries on, seeing zeros) and marks it faulted. The decoder checks
//! [`MappedFile::faulted`] when it is done and reports an error instead of whatever the
//! zeros decoded to. Faults anywhere else keep their default action.

#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A read-only map of a whole file.
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
    slot: Option<usize>,
}

impl MappedFile {
    pub(crate) fn new(map: memmap2::Mmap) -> MappedFile {
        let slot = guard::register(map.as_ptr() as usize, map.len());
        MappedFile { map, slot }
    }

    /// Whether a read fell past the end of the file, because it shrank after it was
    /// mapped: the bytes read there were zeros, not the file's.
    pub fn faulted(&self) -> bool {
        self.slot.is_some_and(guard::faulted)
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn map(&self) -> &memmap2::Mmap {
        &self.map
    }
}

impl std::ops::Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            guard::unregister(s);
        }
    }
}

/// Maps live at once that the handler covers; further maps are still read, unguarded.
#[cfg(target_os = "linux")]
const SLOTS: usize = 64;

#[cfg(target_os = "linux")]
struct Slot {
    /// 0 when free.
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

#[cfg(target_os = "linux")]
#[allow(clippy::declare_interior_mutable_const)] // Only to initialise the array.
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};
#[cfg(target_os = "linux")]
static REGISTRY: [Slot; SLOTS] = [FREE; SLOTS];

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod guard {
    use super::*;
    use std::sync::Once;

    static INSTALL: Once = Once::new();
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    /// The handler that was there before ours (`sigaction` as bytes would be awkward to
    /// share: a static written once, before the handler can run).
    static mut PREVIOUS: Option<libc::sigaction> = None;

    pub(super) fn register(start: usize, len: usize) -> Option<usize> {
        if len == 0 {
            return None;
        }
        INSTALL.call_once(install);
        for (i, s) in REGISTRY.iter().enumerate() {
            if s.start
                .compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                s.faulted.store(false, Ordering::Relaxed);
                s.end.store(start + len, Ordering::Release);
                return Some(i);
            }
        }
        None
    }

    pub(super) fn unregister(i: usize) {
        REGISTRY[i].end.store(0, Ordering::Release);
        REGISTRY[i].start.store(0, Ordering::Release);
    }

    pub(super) fn faulted(i: usize) -> bool {
        REGISTRY[i].faulted.load(Ordering::Acquire)
    }

    fn install() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
        // has the SA_SIGINFO signature; PREVIOUS is written here only, before any SIGBUS
        // can reach `on_sigbus`, which only reads it.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &sa, &mut old) == 0 {
                PREVIOUS = Some(old);
            }
        }
    }

    /// Async-signal-safe: atomics, `mmap` and `sigaction` only.
    extern "C" fn on_sigbus(
        _sig: libc::c_int,
        info: *mut libc::siginfo_t,
        _ctx: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for s in REGISTRY.iter() {
            let (start, end) = (
                s.start.load(Ordering::Acquire),
                s.end.load(Ordering::Acquire),
            );
            if start == 0 || addr < start || addr >= end {
                continue;
            }
            // The file ends before `addr`: zero pages from there to the end of the map.
            let from = addr & !(page - 1);
            // SAFETY: [from, end) lies inside a live read-only map that this process owns;
            // replacing its pages with anonymous zero pages changes no other memory.
            let p = unsafe {
                libc::mmap(
                    from as *mut libc::c_void,
                    end - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                s.faulted.store(true, Ordering::Release);
                return;
            }
        }
        // Not ours: restore the previous action and return, so the fault happens again
        // and is handled as it would have been without us.
        // SAFETY: PREVIOUS was written before the handler was installed.
        unsafe {
            #[allow(static_mut_refs)]
            match &PREVIOUS {
                Some(old) => libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut()),
                None => libc::signal(libc::SIGBUS, libc::SIG_DFL) as libc::c_int,
            };
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod guard {
    // Elsewhere the map is unguarded (Windows refuses to truncate a mapped file).
    pub(super) fn register(_start: usize, _len: usize) -> Option<usize> {
        None
    }
    pub(super) fn unregister(_i: usize) {}
    pub(super) fn faulted(_i: usize) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reading_a_truncated_map_sees_zeros_and_says_so() {
        let p = std::env::temp_dir().join(format!("spall-sigbus-{}", std::process::id()));
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        // SAFETY: read-only; the truncation below is what this test is about.
        #[allow(unsafe_code)]
        let m = MappedFile::new(unsafe { memmap2::Mmap::map(&f) }.unwrap());
        assert!(!m.faulted());
        assert_eq!(m[100_000], 7);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let sum: u64 = m.iter().map(|&b| b as u64).sum();
        assert!(m.faulted());
        assert_eq!(m[10], 7, "the pages still in the file are unchanged");
        assert!(sum < 7 << 20);
        drop(m);
        std::fs::remove_file(&p).unwrap();
    }
}
