//! Timestamps: the CPU's time-stamp counter where it is invariant and calibrated, else
//! `std::time::Instant` in nanoseconds since the session began.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::arch;

/// Which clock timestamps come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The time-stamp counter when the CPU says it is invariant (x86-64 with `constant_tsc`
    /// and `nonstop_tsc`), else [`Clock::Instant`].
    #[default]
    Auto,
    /// The time-stamp counter, calibrated against `Instant` when the session starts; falls
    /// back to [`Clock::Instant`] where there is none.
    Tsc,
    /// `std::time::Instant` (the OS's monotonic clock), in nanoseconds.
    Instant,
}

const INSTANT: u8 = 0;
const TSC: u8 = 1;

/// The clock of the running session, read on every event.
static ACTIVE: AtomicU8 = AtomicU8::new(INSTANT);
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// The current time in ticks of the active clock.
#[inline]
pub(crate) fn now() -> u64 {
    if ACTIVE.load(Relaxed) == TSC {
        if let Some(t) = arch::ticks() {
            return t;
        }
    }
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Selects the clock for a new session; returns nanoseconds per tick for the file header.
pub(crate) fn start(clock: Clock) -> f64 {
    EPOCH.get_or_init(Instant::now);
    let tsc = match clock {
        Clock::Instant => false,
        Clock::Tsc => arch::ticks().is_some(),
        Clock::Auto => arch::invariant_tsc(),
    };
    if tsc {
        ACTIVE.store(TSC, Relaxed);
        calibrate()
    } else {
        ACTIVE.store(INSTANT, Relaxed);
        1.0
    }
}

/// Nanoseconds per counter tick, measured against `Instant` over a few milliseconds (the
/// relative error is the clock's resolution over the interval, about 1e-6).
fn calibrate() -> f64 {
    let (t0, c0) = (Instant::now(), arch::ticks().unwrap_or(0));
    std::thread::sleep(Duration::from_millis(5));
    let (t1, c1) = (Instant::now(), arch::ticks().unwrap_or(0));
    let ns = (t1 - t0).as_nanos() as f64;
    let ticks = c1.wrapping_sub(c0) as f64;
    if ticks > 0.0 && ns > 0.0 {
        ns / ticks
    } else {
        ACTIVE.store(INSTANT, Relaxed);
        1.0
    }
}
