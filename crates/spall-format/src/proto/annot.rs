//! Debug annotations as JSON argument text, under Perfetto's keys.
//!
//! trace_processor files an annotation `NAME` under the arg key `debug.NAME`, a dictionary
//! entry under `debug.NAME.KEY` and an array element under `debug.NAME[i]`. The arguments
//! of a proto event are therefore written as one JSON object whose top-level keys are those
//! prefixes (`{"debug": {"NAME": ...}}`): flattening it the way the `args` table flattens
//! JSON gives Perfetto's keys.

use std::fmt::Write;

use super::base::general_only;
use super::hash::IdMap;
use super::wire::{bytes, var, Field, Reader, Value, WireError};
use crate::diag::{Diagnostics, WarningKind};
use crate::tagged::{self, write_f64};

/// Nesting deeper than this is cut (the rest of the value is written as `null`).
pub const MAX_DEPTH: usize = 32;

/// An interned annotation name, and its JSON string when it is UTF-8 (written as is on
/// each use; one that is not is escaped, and warned about, each time).
pub struct AnnName<'a> {
    pub bytes: &'a [u8],
    pub json: Option<Box<str>>,
}

impl<'a> AnnName<'a> {
    pub fn new(bytes: &'a [u8]) -> AnnName<'a> {
        let json = std::str::from_utf8(bytes).ok().map(|s| {
            let mut j = String::with_capacity(s.len() + 2);
            escape_into(&mut j, s);
            j.into_boxed_str()
        });
        AnnName { bytes, json }
    }
}

/// The sequence's interned annotation names and string values.
pub struct Interned<'s, 'a> {
    pub names: &'s IdMap<u64, AnnName<'a>>,
    pub strings: &'s IdMap<u64, &'a [u8]>,
}

/// Writes `s` as a JSON string.
pub fn escape_into(out: &mut String, s: &str) {
    out.push('"');
    // What JSON escapes is ASCII, so the text is scanned byte by byte and cut only at
    // those bytes, which are char boundaries.
    let b = s.as_bytes();
    // Most texts need no escape: one pass without an early exit, which the compiler
    // vectorizes, says so.
    let plain = b
        .iter()
        .fold(true, |ok, &c| ok & (c >= 0x20) & (c != b'"') & (c != b'\\'));
    if plain {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            c if c < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{:04x}", c);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes bytes that should be UTF-8 as a JSON string, counting invalid UTF-8.
pub fn escape_bytes(out: &mut String, b: &[u8], at: u64, d: &mut Diagnostics) {
    match std::str::from_utf8(b) {
        Ok(s) => escape_into(out, s),
        Err(_) => {
            d.warn(WarningKind::InvalidUtf8, at, || {
                "a protobuf string that is not UTF-8, decoded with U+FFFD replacements".into()
            });
            escape_into(out, &String::from_utf8_lossy(b));
        }
    }
}

/// A reader over an annotation message; wire errors are counted by the caller.
fn fields<'a>(b: &'a [u8], at: u64) -> impl Iterator<Item = Result<Field<'a>, WireError>> {
    Reader::new(b, at)
}

/// Writes the annotations `list` (each a `DebugAnnotation` message and its offset) as
/// `"debug":{...}`, or with `wrap` false as the bare entries (no braces around either). Returns the first wire error, if any: the caller
/// counts the event as malformed but keeps what was written.
pub fn write_debug(
    out: &mut String,
    list: &[(&[u8], u64)],
    it: &Interned<'_, '_>,
    wrap: bool,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    if wrap {
        out.push_str("\"debug\":{");
    }
    let mut first = true;
    let mut err = Ok(());
    for &(a, at) in list {
        let mark = out.len();
        if !first {
            out.push(',');
        }
        match annotation(out, a, at, it, 0, true, d) {
            Ok(true) => first = false,
            Ok(false) => out.truncate(mark),
            Err(e) => {
                first = false;
                err = err.and(Err(e));
            }
        }
    }
    if wrap {
        out.push('}');
    }
    err
}

/// One `DebugAnnotation`: `"name":value` when `named`, else the value. An annotation with
/// no value is not written (false), as trace_processor adds no arg for it (an array's
/// later elements keep their indices dense).
fn annotation(
    out: &mut String,
    a: &[u8],
    at: u64,
    it: &Interned<'_, '_>,
    depth: usize,
    named: bool,
    d: &mut Diagnostics,
) -> Result<bool, WireError> {
    if named && depth < MAX_DEPTH && !general_only() {
        if let Some(written) = simple(out, a, it) {
            return Ok(written);
        }
    }
    let mut name: Option<(&[u8], u64, Option<&str>)> = None;
    let mut value: Option<Field<'_>> = None;
    let (mut dict, mut array) = (false, false);
    let mut err = None;
    for f in fields(a, at) {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                err = Some(e);
                break;
            }
        };
        match (f.num, f.value) {
            (10, Value::Bytes(b)) => name = Some((b, f.offset, None)),
            (1, v) => match v.uint().and_then(|i| it.names.get(&i)) {
                Some(n) => name = Some((n.bytes, f.offset, n.json.as_deref())),
                None => undefined(d, f.offset, "debug annotation name"),
            },
            (11, Value::Bytes(_)) => dict = true,
            (12, Value::Bytes(_)) => array = true,
            (2..=9 | 13 | 14 | 16 | 17, _) => value = Some(f),
            _ => {}
        }
    }
    if err.is_none() && !dict && !array && value.is_none() {
        return Ok(false);
    }
    if named {
        match name {
            Some((_, _, Some(json))) => out.push_str(json),
            Some((b, o, None)) => escape_bytes(out, b, o, d),
            None => out.push_str("\"\""),
        }
        out.push(':');
    }
    if depth >= MAX_DEPTH {
        deep(d, at);
        out.push_str("null");
    } else if dict || array {
        let (open, close, num) = if dict { ('{', '}', 11) } else { ('[', ']', 12) };
        out.push(open);
        let mut first = true;
        for f in fields(a, at).map_while(Result::ok) {
            if let (n, Value::Bytes(b)) = (f.num, f.value) {
                if n == num {
                    let mark = out.len();
                    if !first {
                        out.push(',');
                    }
                    if annotation(out, b, offset_in(a, at, b), it, depth + 1, dict, d)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
            }
        }
        out.push(close);
    } else {
        match value {
            Some(f) => scalar(out, f, it, depth, d)?,
            None => out.push_str("null"),
        }
    }
    match err {
        Some(e) => Err(e),
        None => Ok(true),
    }
}

/// A scalar value of the usual annotation ([`simple`]).
enum Scalar<'a> {
    Bool(u64),
    Uint(u64),
    Int(u64),
    Double(u64),
    Str(&'a str),
    Pointer(u64),
}

/// The usual annotation, an interned name and a scalar value, written as [`annotation`]
/// writes it, without its general walk: `None`, with nothing written, for any other
/// (another field or wire type, an iid not defined, text that is not UTF-8, a broken
/// field), which the walk then reads and warns about. The last name and value win, as
/// there.
#[inline]
fn simple(out: &mut String, a: &[u8], it: &Interned<'_, '_>) -> Option<bool> {
    let (mut name, mut value) = (None, None);
    let mut i = 0;
    while i < a.len() {
        let t = var(a, &mut i)?;
        value = match t {
            0x08 => {
                name = Some(it.names.get(&var(a, &mut i)?)?.json.as_deref()?);
                continue;
            }
            0x10 => Some(Scalar::Bool(var(a, &mut i)?)),
            0x18 => Some(Scalar::Uint(var(a, &mut i)?)),
            0x20 => Some(Scalar::Int(var(a, &mut i)?)),
            0x38 => Some(Scalar::Pointer(var(a, &mut i)?)),
            0x29 => {
                let b = a.get(i..i + 8)?;
                i += 8;
                Some(Scalar::Double(u64::from_le_bytes(b.try_into().ok()?)))
            }
            0x32 => Some(Scalar::Str(std::str::from_utf8(bytes(a, &mut i)?).ok()?)),
            // string_value_iid (17).
            0x88 => {
                let s = it.strings.get(&var(a, &mut i)?)?;
                Some(Scalar::Str(std::str::from_utf8(s).ok()?))
            }
            _ => return None,
        };
    }
    let Some(v) = value else {
        return Some(false);
    };
    out.push_str(name.unwrap_or("\"\""));
    out.push(':');
    match v {
        Scalar::Bool(b) => out.push_str(if b != 0 { "true" } else { "false" }),
        Scalar::Uint(u) => tagged::write_uint(out, u),
        Scalar::Int(u) => tagged::push_i64(out, u as i64),
        Scalar::Double(bits) => write_f64(out, f64::from_bits(bits)),
        Scalar::Str(s) => escape_into(out, s),
        Scalar::Pointer(p) => tagged::write_pointer(out, p),
    }
    Some(true)
}

/// The offset of `sub`, a slice of `msg` (found at `msg_at`), in the decoded input.
pub fn offset_in(msg: &[u8], msg_at: u64, sub: &[u8]) -> u64 {
    msg_at + (sub.as_ptr() as usize - msg.as_ptr() as usize) as u64
}

fn scalar(
    out: &mut String,
    f: Field<'_>,
    it: &Interned<'_, '_>,
    depth: usize,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    let v = f.value;
    match (f.num, v) {
        (2, _) => out.push_str(if v.uint().unwrap_or(0) != 0 {
            "true"
        } else {
            "false"
        }),
        (3, _) => tagged::write_uint(out, v.uint().unwrap_or(0)),
        (4, _) => {
            tagged::push_i64(out, v.int().unwrap_or(0));
        }
        (5, _) => write_f64(out, v.double().unwrap_or(f64::NAN)),
        (6, Value::Bytes(b)) => escape_bytes(out, b, f.offset, d),
        (17, _) => match v.uint().and_then(|i| it.strings.get(&i)) {
            Some(b) => escape_bytes(out, b, f.offset, d),
            None => {
                undefined(d, f.offset, "debug annotation string");
                out.push_str("null");
            }
        },
        (7, _) => tagged::write_pointer(out, v.uint().unwrap_or(0)),
        (8, Value::Bytes(b)) => nested(out, b, f.offset, depth, d)?,
        (9, Value::Bytes(b)) => {
            if serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok() {
                out.push_str(std::str::from_utf8(b).unwrap_or("null"));
            } else {
                escape_bytes(out, b, f.offset, d);
            }
        }
        // A proto-typed value: its schema is not in the trace.
        (13 | 14 | 16, _) => out.push_str("\"<proto>\""),
        _ => {
            wrong_type(d, f.offset);
            out.push_str("null");
        }
    }
    Ok(())
}

/// The older `NestedValue`: dictionaries as parallel key and value lists.
fn nested(
    out: &mut String,
    b: &[u8],
    at: u64,
    depth: usize,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    if depth >= MAX_DEPTH {
        deep(d, at);
        out.push_str("null");
        return Ok(());
    }
    let mut kind = 0;
    let mut scalar: Option<Field<'_>> = None;
    for f in fields(b, at) {
        let f = f?;
        match f.num {
            1 => kind = f.value.uint().unwrap_or(0),
            5..=8 => scalar = Some(f),
            _ => {}
        }
    }
    let only = |n: u32| {
        fields(b, at)
            .map_while(Result::ok)
            .filter(move |f| f.num == n)
            .filter_map(move |f| f.value.bytes().map(|v| (v, offset_in(b, at, v))))
    };
    match kind {
        1 => {
            out.push('{');
            for (i, ((k, ko), (v, vo))) in only(2).zip(only(3)).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                escape_bytes(out, k, ko, d);
                out.push(':');
                nested(out, v, vo, depth + 1, d)?;
            }
            out.push('}');
        }
        2 => {
            out.push('[');
            for (i, (v, vo)) in only(4).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                nested(out, v, vo, depth + 1, d)?;
            }
            out.push(']');
        }
        _ => match scalar {
            Some(f) => match (f.num, f.value) {
                (5, v) => {
                    tagged::push_i64(out, v.int().unwrap_or(0));
                }
                (6, v) => write_f64(out, v.double().unwrap_or(f64::NAN)),
                (7, v) => out.push_str(if v.uint().unwrap_or(0) != 0 {
                    "true"
                } else {
                    "false"
                }),
                (8, Value::Bytes(s)) => escape_bytes(out, s, f.offset, d),
                _ => {
                    wrong_type(d, f.offset);
                    out.push_str("null");
                }
            },
            None => out.push_str("null"),
        },
    }
    Ok(())
}

/// An interned source location: its bytes, and its JSON object (as
/// [`write_location`] writes an interned one) when writing it warns of nothing, written as
/// is on each use; one with text that is not UTF-8 is written, and warned about, each time.
pub struct Location<'a> {
    pub bytes: &'a [u8],
    pub json: Option<Box<str>>,
}

impl<'a> Location<'a> {
    pub fn new(bytes: &'a [u8]) -> Location<'a> {
        let (mut json, mut d) = (String::new(), Diagnostics::default());
        location_object(&mut json, bytes, true, 0, &mut d);
        Location {
            bytes,
            json: d.is_empty().then(|| json.into_boxed_str()),
        }
    }
}

/// A `SourceLocation` under `key` as trace_processor files it: an interned one (the event's
/// `source_location_iid` under `source`, a task's `posted_from` under `task`) every field
/// written, paths with `/` separators; an inline one (`source_location`) the fields it has.
pub fn write_location(
    out: &mut String,
    key: &str,
    l: &[u8],
    interned: bool,
    at: u64,
    d: &mut Diagnostics,
) {
    key_of(out, key);
    location_object(out, l, interned, at, d);
}

/// An interned location as [`write_location`] writes it, its object kept from the first.
pub fn write_interned_location(
    out: &mut String,
    key: &str,
    l: &Location<'_>,
    at: u64,
    d: &mut Diagnostics,
) {
    match &l.json {
        Some(json) => {
            key_of(out, key);
            out.push_str(json);
        }
        None => write_location(out, key, l.bytes, true, at, d),
    }
}

/// `"key":`, for a plain key.
fn key_of(out: &mut String, key: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
}

/// The `{...}` of [`write_location`].
fn location_object(out: &mut String, l: &[u8], interned: bool, at: u64, d: &mut Diagnostics) {
    let (mut file, mut function, mut line) = (None, None, None);
    for f in fields(l, at).map_while(Result::ok) {
        match (f.num, f.value) {
            (2, Value::Bytes(s)) => file = Some(s),
            (3, Value::Bytes(s)) => function = Some(s),
            (4, v) => line = v.uint().map(|n| n as u32),
            _ => {}
        }
    }
    out.push('{');
    let mut sep = "";
    if let Some(b) = file.or(interned.then_some(b"")) {
        out.push_str("\"file_name\":");
        if interned && b.contains(&b'\\') {
            let b: Vec<u8> = b
                .iter()
                .map(|&c| if c == b'\\' { b'/' } else { c })
                .collect();
            escape_bytes(out, &b, at, d);
        } else {
            escape_bytes(out, b, at, d);
        }
        sep = ",";
    }
    if let Some(b) = function.or(interned.then_some(b"")) {
        out.push_str(sep);
        out.push_str("\"function_name\":");
        escape_bytes(out, b, at, d);
        sep = ",";
    }
    if let Some(n) = line.or(interned.then_some(0)) {
        out.push_str(sep);
        out.push_str("\"line_number\":");
        tagged::write_uint(out, n.into());
    }
    out.push('}');
}

pub fn undefined(d: &mut Diagnostics, at: u64, what: &str) {
    d.warn(WarningKind::ProtoUndefinedIid, at, || {
        format!("an interned {what} id its sequence never defined; left empty")
    });
}

pub fn wrong_type(d: &mut Diagnostics, at: u64) {
    d.warn(WarningKind::ProtoWrongWireType, at, || {
        "a field with a wire type its definition does not allow; ignored".into()
    });
}

pub fn deep(d: &mut Diagnostics, at: u64) {
    d.warn(WarningKind::ProtoDeepNesting, at, || {
        format!("a debug annotation nested more than {MAX_DEPTH} levels deep; cut there")
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape_quotes_backslashes_and_control_bytes() {
        let cases = [
            ("base/task.cc", r#""base/task.cc""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("line\nnext\ttab\rret", r#""line\nnext\ttab\rret""#),
            ("bell\u{7}é→", r#""bell\u0007é→""#),
            ("", r#""""#),
        ];
        for (text, json) in cases {
            let mut out = String::from("x");
            escape_into(&mut out, text);
            assert_eq!(&out[1..], json);
            assert_eq!(serde_json::from_str::<String>(json).unwrap(), text);
        }
        // An interned name keeps its JSON string only when it is UTF-8.
        assert_eq!(AnnName::new(b"n\"").json.as_deref(), Some(r#""n\"""#));
        assert_eq!(AnnName::new(b"\xff").json, None);
    }
}
