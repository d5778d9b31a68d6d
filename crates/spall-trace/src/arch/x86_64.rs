//! The x86-64 time-stamp counter.

/// The time-stamp counter. Every x86-64 CPU has one.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn ticks() -> Option<u64> {
    // SAFETY: RDTSC exists on every x86-64 CPU and reads a register; it touches no memory.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

/// Whether the counter ticks at a constant rate, through sleep states, so it measures time:
/// Linux reports this as the `constant_tsc` and `nonstop_tsc` CPU flags. Elsewhere the
/// counter is not trusted and `Instant` is used.
pub(crate) fn invariant_tsc() -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return false;
        };
        info.lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|flags| {
                let has = |f: &str| flags.split_whitespace().any(|w| w == f);
                has("constant_tsc") && has("nonstop_tsc")
            })
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}
