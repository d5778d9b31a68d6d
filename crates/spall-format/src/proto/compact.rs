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

/// A column's values appended to `col`: packed varints ([`packed_bytes`]); or a value not
/// packed.
fn packed(v: Value<'_>, col: &mut Vec<u64>) -> Result<(), WireErrorKind> {
    match v {
        Value::Bytes(b) => packed_bytes(b, col),
        _ => repeated(v, false, |x| col.push(x)),
    }
}

/// Continuation bits of eight bytes.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Packed varints appended to `col`, up to one that breaks. Most of a column's values are
/// one byte (priorities, states, comm indices) or two (pids, time deltas), so eight bytes
/// are read at once: where none continues, eight values; else the one-byte values before
/// the first that does, then that value, whose end the same word shows. The last bytes go
/// the scalar way ([`packed_scalar`]), and a value longer than the word holds as it does.
fn packed_bytes(b: &[u8], col: &mut Vec<u64>) -> Result<(), WireErrorKind> {
    // At most one value a byte.
    col.reserve(b.len());
    let mut i = 0;
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap());
        let ones = ((w & HIGH).trailing_zeros() / 8) as usize;
        if ones > 0 {
            // Eight written, the ones that are values kept (all eight when none continues).
            let mut eight = [0u64; 8];
            for (d, x) in eight.iter_mut().zip(w.to_le_bytes()) {
                *d = x as u64;
            }
            col.extend_from_slice(&eight);
            col.truncate(col.len() - 8 + ones);
            i += ones;
            continue;
        }
        // A value of two bytes or more starts at `i`: it ends at the first byte that does not
        // continue.
        let ends = !w & HIGH;
        if ends == 0 {
            let (x, n) = varint(&b[i..])?;
            col.push(x);
            i += n;
            continue;
        }
        let n = (ends.trailing_zeros() / 8) as usize + 1;
        col.push(match n {
            2 => (w & 0x7f) | (w >> 1 & 0x3f80),
            3 => (w & 0x7f) | (w >> 1 & 0x3f80) | (w >> 2 & 0x1f_c000),
            _ => (0..n).fold(0, |x, j| x | (w >> (8 * j) & 0x7f) << (7 * j)),
        });
        i += n;
    }
    packed_scalar(&b[i..], col)
}

/// Packed varints appended to `col` one at a time, up to one that breaks: the reference
/// [`packed_bytes`] must agree with, and its last bytes.
fn packed_scalar(mut b: &[u8], col: &mut Vec<u64>) -> Result<(), WireErrorKind> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Varints of every length, at every place in a word, and cut at every byte: the word-at-a-time read gives the scalar one's values and
    /// error.
    #[test]
    fn packed_bytes_reads_as_the_scalar_reference() {
        let mut values: Vec<u64> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for i in 0..3000u64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Lengths 1 to 10, one- and two-byte values most often, as in real columns; and
            // a run of one-byte values (a column of priorities).
            let bits = [7, 7, 7, 14, 14, 21, 28, 35, 49, 56, 63, 64][(seed % 12) as usize];
            let bits = if (1000..1100).contains(&i) { 7 } else { bits };
            values.push(match bits {
                64 => seed | 1 << 63,
                _ => (seed >> 3) & ((1u64 << bits) - 1) | (i % 2) << (bits - 1),
            });
        }
        let mut bytes = Vec::new();
        for &v in &values {
            let mut v = v;
            while v >= 0x80 {
                bytes.push(v as u8 | 0x80);
                v >>= 7;
            }
            bytes.push(v as u8);
        }
        let (mut fast, mut slow) = (vec![7], vec![7]);
        assert_eq!(packed_bytes(&bytes, &mut fast), Ok(()));
        assert_eq!(fast[1..], values[..]);
        for cut in (0..200).chain(bytes.len() - 40..bytes.len()) {
            let (mut fast, mut slow2) = (vec![7], vec![7]);
            let a = packed_bytes(&bytes[..cut], &mut fast);
            let b = packed_scalar(&bytes[..cut], &mut slow2);
            assert_eq!((a, &fast), (b, &slow2), "cut at {cut}");
        }
        // A varint past ten bytes breaks both alike, mid-column.
        let mut long = bytes[..50].to_vec();
        long.extend([0xff; 11]);
        long.extend(&bytes[..50]);
        let (mut fast, mut slow2) = (Vec::new(), Vec::new());
        let a = packed_bytes(&long, &mut fast);
        assert_eq!((a, &fast), (packed_scalar(&long, &mut slow2), &slow2));
        assert!(packed_scalar(&bytes, &mut slow).is_ok());
    }
}
