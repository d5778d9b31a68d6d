//! A task's state as trace_processor reads the kernel's `prev_state` bits, whose meaning
//! above 0x20 changed with kernel 4.14 (and the preemption bit with 4.8).

use std::fmt;

/// A thread's state: running, runnable, or the kernel's blocked states, as flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskState(pub u16);

const S: u16 = 0x1;
const D: u16 = 0x2;
const T: u16 = 0x4;
const TRACED: u16 = 0x8;
const X: u16 = 0x10;
const Z: u16 = 0x20;
const PARKED: u16 = 0x40;
const DEAD: u16 = 0x80;
const WAKEKILL: u16 = 0x100;
const WAKING: u16 = 0x200;
const NOLOAD: u16 = 0x400;
const IDLE: u16 = 0x800;
const PREEMPTED: u16 = 0x1000;

impl TaskState {
    /// Runnable (`R`): waiting for a CPU.
    pub const RUNNABLE: TaskState = TaskState(0);
    /// Runnable after being preempted (`R+`).
    pub const PREEMPTED: TaskState = TaskState(PREEMPTED);
    /// Running on a CPU.
    pub const RUNNING: TaskState = TaskState(0x4000);
    /// Bits no kernel defines, or no state yet (a slice still running).
    pub const UNKNOWN: TaskState = TaskState(0x8000);

    /// `prev_state` bits of a kernel of this version (major * 1000 + minor; 4.4 where the
    /// trace does not say), as trace_processor reads them (taken as 16 bits, as it does).
    pub fn from_raw(raw: i64, version: Option<i64>) -> TaskState {
        let raw = raw as u16;
        let version = version.unwrap_or(4004);
        let mut p = raw & (0x40 - 1);
        if version >= 4014 {
            if raw & 0x40 != 0 {
                p |= PARKED;
            }
            if raw & 0x80 != 0 {
                p |= IDLE;
            }
            if raw & 0x100 != 0 {
                p |= PREEMPTED;
            }
            if raw & 0xfe00 != 0 {
                return TaskState::UNKNOWN;
            }
            return TaskState(p);
        }
        for (bit, flag) in [
            (0x40, DEAD),
            (0x80, WAKEKILL),
            (0x100, WAKING),
            (0x200, PARKED),
            (0x400, NOLOAD),
        ] {
            if raw & bit != 0 {
                p |= flag;
            }
        }
        if p == D | NOLOAD {
            p = IDLE;
        }
        let preempt = if version >= 4008 { 0x1000 } else { 0x800 };
        if raw & preempt != 0 {
            p |= PREEMPTED;
        }
        TaskState(p)
    }

    /// Whether it is `R` or `R+`.
    pub fn is_runnable(self) -> bool {
        self.0 & !PREEMPTED == 0
    }

    /// trace_processor's text: `Running`, `R`, `R+`, `S`, `D`, `DK`, `I`...; `None` for
    /// [`UNKNOWN`](Self::UNKNOWN).
    pub fn text(self) -> Option<String> {
        match self {
            TaskState::RUNNING => return Some("Running".into()),
            TaskState::UNKNOWN => return None,
            _ => {}
        }
        if self.is_runnable() {
            return Some(if self.0 & PREEMPTED != 0 { "R+" } else { "R" }.into());
        }
        let mut s = String::new();
        for (flag, c) in [
            (S, 'S'),
            (D, 'D'),
            (T, 'T'),
            (TRACED, 't'),
            (X, 'X'),
            (Z, 'Z'),
            (PARKED, 'P'),
            (DEAD, 'x'),
            (WAKEKILL, 'K'),
            (WAKING, 'W'),
            (NOLOAD, 'N'),
            (IDLE, 'I'),
        ] {
            if self.0 & flag != 0 {
                s.push(c);
            }
        }
        Some(s)
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_deref().unwrap_or("?"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(raw: i64, v: Option<i64>) -> String {
        TaskState::from_raw(raw, v).to_string()
    }

    #[test]
    fn bits_read_by_kernel_version() {
        assert_eq!(t(0, None), "R");
        assert_eq!(t(1, None), "S");
        assert_eq!(t(0x800, None), "R+");
        assert_eq!(t(0x402, None), "I");
        assert_eq!(t(0x82, None), "DK");
        assert_eq!(t(0x1000, Some(4009)), "R+");
        assert_eq!(t(0x100, Some(6001)), "R+");
        assert_eq!(t(0x80, Some(6001)), "I");
        assert_eq!(t(0x40, Some(6001)), "P");
        assert_eq!(t(0xfe00, Some(6001)), "?");
        assert_eq!(TaskState::RUNNING.to_string(), "Running");
    }
}
