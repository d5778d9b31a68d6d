//! A `compact_sched` block's intern table and packed columns, read: the half of a block's
//! work that needs nothing but its bytes, done in place ([`ftrace`](super::ftrace)) or
//! ahead on another thread ([`ahead`](super::ahead)).

use std::borrow::Cow;

use super::base::text;
use super::wire::{repeated, varint, Reader, Value, WireErrorKind};
use crate::diag::{Diagnostics, WarningKind};

fn warn(d: &mut Diagnostics, at: u64, what: impl FnOnce() -> String) {
    d.warn(WarningKind::FtraceMalformed, at, what);
}

/// The intern table and columns of the `compact_sched` block `b` at byte `at`, times
/// made absolute; the switches and wakings they hold, or `None` where the block breaks.
pub(super) fn read_columns<'b>(
    b: &'b [u8],
    at: u64,
    cols: &mut [Vec<u64>; 12],
    interned: &mut Vec<Cow<'b, str>>,
    d: &mut Diagnostics,
) -> Option<(usize, usize)> {
    for c in cols.iter_mut() {
        c.clear();
    }
    let mut r = Reader::new(b, at);
    while let Some(fl) = r.next_field() {
        let Ok(fl) = fl else {
            warn(d, at, || {
                "a compact_sched block that breaks; skipped".into()
            });
            return None;
        };
        match fl.num {
            5 => interned.push(text(fl.value.bytes().unwrap_or(b""), fl.offset, d)),
            n @ 1..=12 => {
                let col = &mut cols[n as usize - 1];
                if packed(fl.value, col).is_err() {
                    warn(d, fl.offset, || {
                        "a compact_sched column that breaks; cut there".into()
                    });
                }
            }
            _ => {}
        }
    }
    // Switches: timestamp, prev_state, next_pid, next_prio, next_comm_index. Wakings:
    // timestamp, pid, target_cpu, prio, comm_index, common_flags (optional).
    let switches = short_columns(&[0, 1, 2, 3, 5].map(|k| &cols[k]), at, d);
    let wakings = short_columns(&[6, 7, 8, 9, 10].map(|k| &cols[k]), at, d);
    // Deltas to times, each chain its own.
    for k in [0, 6] {
        let mut ts = 0u64;
        for x in &mut cols[k] {
            ts = ts.wrapping_add(*x);
            *x = ts;
        }
    }
    Some((switches, wakings))
}

/// A column's values appended to `col`: packed varints, most of one byte (priorities,
/// states, comm indices), read without a call each; or a value not packed.
fn packed(v: Value<'_>, col: &mut Vec<u64>) -> Result<(), WireErrorKind> {
    let Value::Bytes(mut b) = v else {
        return repeated(v, false, |x| col.push(x));
    };
    col.reserve(b.len());
    while let Some(&byte) = b.first() {
        if byte < 0x80 {
            col.push(byte as u64);
            b = &b[1..];
            continue;
        }
        let (x, n) = varint(b)?;
        col.push(x);
        b = &b[n..];
    }
    Ok(())
}

/// How many records columns of these lengths make: the shortest (a column cut short drops
/// the records past it, counted).
fn short_columns(cols: &[&Vec<u64>; 5], at: u64, d: &mut Diagnostics) -> usize {
    let most = cols.iter().map(|c| c.len()).max().unwrap_or(0);
    let least = cols.iter().map(|c| c.len()).min().unwrap_or(0);
    if least < most {
        warn(d, at, || {
            format!("compact_sched columns of different lengths ({least} to {most}); the records past {least} were skipped")
        });
    }
    least
}
