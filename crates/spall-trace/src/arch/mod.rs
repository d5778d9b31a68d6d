//! CPU-specific clocks, each behind a check that the CPU has them.

#[cfg(target_arch = "x86_64")]
mod x86_64;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::{invariant_tsc, ticks};

/// No counter on this CPU: the `Instant` clock is used.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(crate) fn ticks() -> Option<u64> {
    None
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn invariant_tsc() -> bool {
    false
}
