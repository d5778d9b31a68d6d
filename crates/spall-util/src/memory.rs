//! How much memory a load may use: the user's `--max-memory`, or what the machine has free.

use std::fmt;

use crate::size::parse_size;

/// The ceiling a load is checked against before anything big is allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemoryLimit {
    /// What the system has available now (Linux: `MemAvailable`, and the cgroup's
    /// `memory.max` less its usage, whichever is smaller). No check where neither is known.
    #[default]
    Available,
    /// At most this many bytes.
    Bytes(u64),
    /// No check.
    Unlimited,
}

/// Where a limit came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// `--max-memory` (or the library caller).
    Given,
    /// `MemAvailable` in `/proc/meminfo`.
    MemAvailable,
    /// The control group's `memory.max` less `memory.current` (containers, CI runners).
    Cgroup,
    /// WebAssembly (wasm32): the 4 GiB a module can address, less what it already uses.
    AddressSpace,
}

impl fmt::Display for LimitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LimitSource::Given => "the limit given with --max-memory",
            LimitSource::MemAvailable => "the memory available (MemAvailable in /proc/meminfo)",
            LimitSource::Cgroup => "what this container may still use (its cgroup's memory.max)",
            LimitSource::AddressSpace => "what is left of the 4 GiB a WebAssembly page can address",
        })
    }
}

impl MemoryLimit {
    /// The limit in bytes and where it came from, or `None` for no check.
    pub fn resolve(self) -> Option<(u64, LimitSource)> {
        match self {
            MemoryLimit::Bytes(n) => Some((n, LimitSource::Given)),
            MemoryLimit::Unlimited => None,
            MemoryLimit::Available => available(),
        }
    }
}

/// The memory this process can still take, where the system says.
#[cfg(target_os = "linux")]
pub fn available() -> Option<(u64, LimitSource)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let mem = meminfo
        .as_deref()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("MemAvailable:")))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|kb| (kb * 1024, LimitSource::MemAvailable));
    let cgroup = cgroup_left().map(|b| (b, LimitSource::Cgroup));
    match (mem, cgroup) {
        (Some(m), Some(c)) => Some(if c.0 < m.0 { c } else { m }),
        (m, c) => m.or(c),
    }
}

/// The memory this process can still take: in WebAssembly, what is left of 4 GiB.
#[cfg(target_arch = "wasm32")]
pub fn available() -> Option<(u64, LimitSource)> {
    let used = core::arch::wasm32::memory_size(0) as u64 * 65536;
    Some(((4u64 << 30).saturating_sub(used), LimitSource::AddressSpace))
}

#[cfg(not(any(target_os = "linux", target_arch = "wasm32")))]
pub fn available() -> Option<(u64, LimitSource)> {
    None
}

/// cgroup v2: the group's `memory.max` less its `memory.current`, when it has a limit.
#[cfg(target_os = "linux")]
fn cgroup_left() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max": no limit
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// Parses `--max-memory`: a size, `auto` (what the system has available) or `off`.
pub fn parse_memory_limit(s: &str) -> Result<MemoryLimit, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(MemoryLimit::Available),
        "off" | "none" | "unlimited" => Ok(MemoryLimit::Unlimited),
        _ => parse_size(s)
            .map(MemoryLimit::Bytes)
            .map_err(|e| format!("{e}; or `auto` (the memory available) or `off` (no check)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_text() {
        assert_eq!(parse_memory_limit("off"), Ok(MemoryLimit::Unlimited));
        assert_eq!(parse_memory_limit(" Auto "), Ok(MemoryLimit::Available));
        assert_eq!(parse_memory_limit("2G"), Ok(MemoryLimit::Bytes(2 << 30)));
        assert!(parse_memory_limit("lots").unwrap_err().contains("`auto`"));
    }

    #[test]
    fn given_limits_resolve_to_themselves() {
        assert_eq!(
            MemoryLimit::Bytes(5).resolve(),
            Some((5, LimitSource::Given))
        );
        assert_eq!(MemoryLimit::Unlimited.resolve(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_reports_some_memory() {
        let (n, _) = MemoryLimit::Available.resolve().expect("/proc/meminfo");
        assert!(n > 0);
    }
}
