//! Typed values inside JSON argument text.
//!
//! JSON has one kind of number; Perfetto's args have three (`int`, `uint`, `pointer`), and
//! trace_processor answers with the type the protobuf said. The protobuf decoder writes an
//! unsigned value or a pointer as a one-key object whose key starts with NUL, a key no
//! trace uses: `{"\u0000u":5143}`, `{"\u0000p":20529981985736}`. Readers that want plain
//! JSON call [`untag`] (the model's `ArgsStore::json` does); the SQL `args` table reads the
//! type from the tag.
//!
//! ```
//! use spall_format::tagged::{read, untag, Tagged};
//!
//! let mut v: serde_json::Value =
//!     serde_json::from_str(r#"{"line":{"\u0000u":7},"ctx":{"\u0000p":255}}"#).unwrap();
//! assert_eq!(read(&v["line"]), Some(Tagged::Uint(7)));
//! untag(&mut v);
//! assert_eq!(v, serde_json::json!({"line": 7, "ctx": "0xff"}));
//! ```

/// The key of an unsigned integer's tag object.
pub const UINT: &str = "\u{0}u";
/// The key of a pointer's tag object.
pub const POINTER: &str = "\u{0}p";

/// The key of a thread reference's tag object.
pub const THREAD: &str = "\u{0}t";

/// A tagged value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tagged {
    /// An unsigned integer (trace_processor's `uint`).
    Uint(u64),
    /// A pointer (trace_processor's `pointer`), shown as `0x` and hex digits.
    Pointer(u64),
    /// A thread, by pid and tid (each as 32 bits, the pid's high): the writer of a
    /// protobuf event on a process or global track (`legacy_event.passthrough_utid`),
    /// which trace_processor gives as its `utid` and the SQL `args` table does too.
    Thread(u64),
}

impl Tagged {
    /// A thread's tag value.
    pub fn thread(pid: i64, tid: i64) -> u64 {
        (pid as u32 as u64) << 32 | tid as u32 as u64
    }

    /// The pid and tid a [`Tagged::Thread`] value names.
    pub fn thread_ids(x: u64) -> (i64, i64) {
        ((x >> 32) as u32 as i32 as i64, x as u32 as i32 as i64)
    }
}

/// The tagged value `v` stands for, if it is a tag object.
pub fn read(v: &serde_json::Value) -> Option<Tagged> {
    tag_of(v.as_object()?)
}

/// The tagged value the object `m` stands for, if it is a tag object (a value, not a
/// dictionary to merge or flatten).
pub fn tag_of(m: &serde_json::Map<String, serde_json::Value>) -> Option<Tagged> {
    if m.len() != 1 {
        return None;
    }
    let (k, x) = m.iter().next()?;
    let x = x.as_u64()?;
    match k.as_str() {
        UINT => Some(Tagged::Uint(x)),
        POINTER => Some(Tagged::Pointer(x)),
        THREAD => Some(Tagged::Thread(x)),
        _ => None,
    }
}

/// Whether `text` may hold a tag object (`false` means it certainly holds none).
pub fn may_hold_tags(text: &str) -> bool {
    text.contains("\\u0000")
}

/// Replaces every tag object in `v` by its plain JSON value: an unsigned integer by the
/// number, a pointer by its `"0x..."` text.
pub fn untag(v: &mut serde_json::Value) {
    use serde_json::Value;
    if let Some(t) = read(v) {
        *v = match t {
            Tagged::Uint(x) => Value::from(x),
            Tagged::Pointer(x) => Value::String(format!("0x{x:x}")),
            // Plain JSON has no thread references: the thread's tid stands for it.
            Tagged::Thread(x) => Value::from(Tagged::thread_ids(x).1),
        };
        return;
    }
    match v {
        Value::Object(m) => m.values_mut().for_each(untag),
        Value::Array(a) => a.iter_mut().for_each(untag),
        _ => {}
    }
}

/// Writes an unsigned integer's tag object.
pub(crate) fn write_uint(out: &mut String, x: u64) {
    out.push_str("{\"\\u0000u\":");
    push_u64(out, x);
    out.push('}');
}

/// Writes a thread reference's tag object.
pub(crate) fn write_thread(out: &mut String, pid: i64, tid: i64) {
    out.push_str("{\"\\u0000t\":");
    push_u64(out, Tagged::thread(pid, tid));
    out.push('}');
}

/// Writes a pointer's tag object.
pub(crate) fn write_pointer(out: &mut String, x: u64) {
    out.push_str("{\"\\u0000p\":");
    push_u64(out, x);
    out.push('}');
}

/// Formats `v` in decimal into `buf`, without allocating (`write!` costs several times
/// more, and the protobuf decoder writes a number or two per event).
pub(crate) fn dec(buf: &mut [u8; 20], v: u64) -> &str {
    let i = digits(buf, v);
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// Writes `v` in decimal: digits pushed as chars, which needs no UTF-8 check of them.
pub(crate) fn push_u64(out: &mut String, v: u64) {
    let mut buf = [0u8; 20];
    let i = digits(&mut buf, v);
    out.reserve(buf.len() - i);
    for &b in &buf[i..] {
        out.push(char::from(b));
    }
}

/// `v`'s decimal digits at the end of `buf`; where they start. Two digits a step: flow ids
/// run to 20.
#[inline(always)]
fn digits(buf: &mut [u8; 20], mut v: u64) -> usize {
    // "00", "01", ... "99".
    const PAIRS: [u8; 200] = {
        let mut t = [0u8; 200];
        let mut k = 0;
        while k < 100 {
            (t[2 * k], t[2 * k + 1]) = (b'0' + (k / 10) as u8, b'0' + (k % 10) as u8);
            k += 1;
        }
        t
    };
    let mut i = buf.len();
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

/// Writes `v` as a JSON number; NaN and the infinities, which JSON lacks, as text
/// (`"NaN"`, `"inf"`, `"-inf"`).
pub(crate) fn write_f64(out: &mut String, v: f64) {
    match serde_json::Number::from_f64(v) {
        Some(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        None => {
            out.push('"');
            out.push_str(&v.to_string());
            out.push('"');
        }
    }
}

/// Writes `v` in decimal, with its sign.
pub(crate) fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u64(out, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        let some = [0, 7, 9, 10, 11, 99, 100, 101, 999, 4096, 65_535, 1 << 40];
        let all_lengths = (0..20)
            .map(|k| 10u64.pow(k))
            .chain((1..20).map(|k| 10u64.pow(k) - 1));
        let ends = [i64::MAX as u64, u64::MAX, u64::MAX - 1];
        for v in some.into_iter().chain(all_lengths).chain(ends) {
            let (mut a, mut b) = (String::from("x"), String::new());
            push_u64(&mut a, v);
            push_i64(&mut b, -(v as i128).clamp(0, i64::MAX as i128) as i64);
            assert_eq!(a, format!("x{v}"));
            assert_eq!(b, format!("{}", -(v as i128).clamp(0, i64::MAX as i128)));
            assert_eq!(dec(&mut [0; 20], v), v.to_string());
        }
        let mut c = String::new();
        push_i64(&mut c, i64::MIN);
        assert_eq!(c, i64::MIN.to_string());
    }

    #[test]
    fn written_tags_read_back() {
        let mut s = String::from("[");
        write_uint(&mut s, u64::MAX);
        s.push(',');
        write_pointer(&mut s, 0x7f00);
        s.push(']');
        assert!(may_hold_tags(&s));
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(read(&v[0]), Some(Tagged::Uint(u64::MAX)));
        assert_eq!(read(&v[1]), Some(Tagged::Pointer(0x7f00)));
        untag(&mut v);
        assert_eq!(v, serde_json::json!([u64::MAX, "0x7f00"]));
    }

    #[test]
    fn doubles_are_json_and_non_finite_ones_text() {
        for (v, json) in [
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (f64::NAN, r#""NaN""#),
            (f64::INFINITY, r#""inf""#),
            (f64::NEG_INFINITY, r#""-inf""#),
        ] {
            let mut s = String::new();
            write_f64(&mut s, v);
            assert_eq!(s, json);
            assert!(serde_json::from_str::<serde_json::Value>(&s).is_ok(), "{s}");
        }
    }

    #[test]
    fn other_objects_are_not_tags() {
        for s in [r#"{"u":1}"#, r#"{"\u0000u":"1"}"#, r#"{"\u0000u":-1}"#] {
            let v: serde_json::Value = serde_json::from_str(s).unwrap();
            assert_eq!(read(&v), None, "{s}");
        }
        let two: serde_json::Value = serde_json::from_str(r#"{"\u0000u":1,"\u0000p":2}"#).unwrap();
        assert_eq!(read(&two), None);
    }
}
