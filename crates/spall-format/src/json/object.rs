//! One Chrome trace event object, parsed field by field without building a DOM.

use std::borrow::Cow;

use super::scan::{scalar_end, skip_value, skip_ws, special_mask, string_end, Scan};
use super::text::{unescape, EscapeProblem};
use crate::diag::{Diagnostics, WarningKind};
use crate::event::{Args, Id2, Phase, RawEvent, RawId};
use crate::time::{micros_text_to_ns, NumberError};

/// Parses the event object starting at `s[i] == '{'` into `ev` (every field is reset).
/// Returns the index just after its closing brace. `base` is added to offsets in warnings
/// (for text that was copied).
pub(crate) fn parse_event<'a>(
    s: &'a str,
    i: usize,
    base: u64,
    d: &mut Diagnostics,
    ev: &mut RawEvent<'a>,
) -> Result<usize, Scan> {
    let b = s.as_bytes();
    *ev = RawEvent {
        offset: base + i as u64,
        ..RawEvent::default()
    };
    let mut p = skip_ws(b, i + 1);
    if b.get(p) == Some(&b'}') {
        return Ok(p + 1);
    }
    loop {
        if p >= b.len() {
            return Err(Scan::Eof);
        }
        if b[p] != b'"' {
            return Err(Scan::Bad(p));
        }
        let (key, kend) = key_at(s, p)?;
        p = skip_ws(b, kend + 1);
        match b.get(p) {
            Some(b':') => p = skip_ws(b, p + 1),
            Some(_) => return Err(Scan::Bad(p)),
            None => return Err(Scan::Eof),
        }
        if p >= b.len() {
            return Err(Scan::Eof);
        }
        let at = base + p as u64;
        p = match key.as_bytes() {
            b"name" => text_field(s, p, at, d, &mut ev.name)?,
            b"cat" => text_field(s, p, at, d, &mut ev.cat)?,
            b"ph" => {
                let mut t = Cow::Borrowed("");
                let e = text_field(s, p, at, d, &mut t)?;
                ev.ph = Phase(t.as_bytes().first().copied().unwrap_or(0));
                e
            }
            b"ts" => time_field(s, p, at, d, "ts", &mut ev.ts)?,
            b"dur" => opt_time_field(s, p, at, d, "dur", &mut ev.dur)?,
            b"tts" => opt_time_field(s, p, at, d, "tts", &mut ev.tts)?,
            b"tdur" => opt_time_field(s, p, at, d, "tdur", &mut ev.tdur)?,
            b"pid" => id_field(s, p, at, d, &mut ev.pid)?,
            b"tid" => id_field(s, p, at, d, &mut ev.tid)?,
            b"id" => opt_text_field(s, p, at, d, &mut ev.id)?,
            b"bind_id" => opt_text_field(s, p, at, d, &mut ev.bind_id)?,
            b"cname" => opt_text_field(s, p, at, d, &mut ev.cname)?,
            b"flow_in" => bool_field(s, p, at, d, &mut ev.flow_in)?,
            b"flow_out" => bool_field(s, p, at, d, &mut ev.flow_out)?,
            b"s" => char_field(s, p, at, d, &mut ev.scope)?,
            b"bp" => char_field(s, p, at, d, &mut ev.bp)?,
            b"id2" => id2_field(s, p, base, d, &mut ev.id2)?,
            b"args" => {
                let e = skip_value(b, p)?;
                ev.args = Args::Json(Cow::Borrowed(&s[p..e]));
                e
            }
            _ => skip_value(b, p)?,
        };
        p = skip_ws(b, p);
        match b.get(p) {
            Some(b',') => p = skip_ws(b, p + 1),
            Some(b'}') => return Ok(p + 1),
            Some(_) => return Err(Scan::Bad(p)),
            None => return Err(Scan::Eof),
        }
    }
}

/// The key whose opening quote is at `s[p]`, and the index of its closing quote. Keys of up
/// to seven plain bytes (all the fields we read) are found with one word-sized check.
#[inline(always)]
fn key_at(s: &str, p: usize) -> Result<(Cow<'_, str>, usize), Scan> {
    let b = s.as_bytes();
    if let Some(chunk) = b.get(p + 1..p + 9) {
        let m = special_mask(u64::from_le_bytes(chunk.try_into().unwrap()));
        if m != 0 {
            let j = p + 1 + (m.trailing_zeros() / 8) as usize;
            if b[j] == b'"' {
                return Ok((Cow::Borrowed(&s[p + 1..j]), j));
            }
        }
    }
    let (kend, kesc) = string_end(b, p + 1)?;
    Ok((unescape(&s[p + 1..kend], kesc).0, kend))
}

fn note_escape(d: &mut Diagnostics, at: u64, problem: Option<EscapeProblem>) {
    match problem {
        None => {}
        Some(EscapeProblem::BadSurrogate) => d.warn(WarningKind::InvalidUtf8, at, || {
            "a \\u escape is a lone UTF-16 surrogate; replaced with U+FFFD".into()
        }),
        Some(EscapeProblem::UnknownEscape) => d.warn(WarningKind::JsonBadEscape, at, || {
            "a backslash escape that JSON does not define; kept as written".into()
        }),
    }
}

/// A string value, or the raw text of a non-string scalar (`"name": 42` reads as `"42"`).
/// Returns the text, whether it was quoted, and the index after the value.
#[inline]
fn value_text<'a>(
    s: &'a str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
) -> Result<(Cow<'a, str>, bool, usize), Scan> {
    let b = s.as_bytes();
    if b[p] == b'"' {
        let (e, esc) = string_end(b, p + 1)?;
        let (t, problem) = unescape(&s[p + 1..e], esc);
        note_escape(d, at, problem);
        Ok((t, true, e + 1))
    } else {
        let e = skip_value(b, p)?;
        Ok((Cow::Borrowed(&s[p..e]), false, e))
    }
}

fn text_field<'a>(
    s: &'a str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    out: &mut Cow<'a, str>,
) -> Result<usize, Scan> {
    let (t, quoted, e) = value_text(s, p, at, d)?;
    *out = if !quoted && t == "null" {
        Cow::Borrowed("")
    } else {
        t
    };
    Ok(e)
}

fn opt_text_field<'a>(
    s: &'a str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    out: &mut Option<Cow<'a, str>>,
) -> Result<usize, Scan> {
    let (t, quoted, e) = value_text(s, p, at, d)?;
    *out = if !quoted && t == "null" {
        None
    } else {
        Some(t)
    };
    Ok(e)
}

fn char_field(
    s: &str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    out: &mut Option<u8>,
) -> Result<usize, Scan> {
    let (t, _, e) = value_text(s, p, at, d)?;
    *out = t.as_bytes().first().copied();
    Ok(e)
}

/// `true` (or `"true"`, or a non-zero number) is true; anything else false.
fn bool_field(
    s: &str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    out: &mut bool,
) -> Result<usize, Scan> {
    let (t, _, e) = value_text(s, p, at, d)?;
    *out = t == "true" || t.parse::<f64>().is_ok_and(|v| v != 0.0);
    Ok(e)
}

/// A time in microseconds: a number, or a number in a string (`"5.1"`).
fn time_value(
    s: &str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    field: &str,
) -> Result<(Option<i64>, usize), Scan> {
    let b = s.as_bytes();
    if let Some((v, e)) = crate::time::micros_number_at(b, p) {
        return Ok((Some(v), e));
    }
    let (text, e) = if b[p] == b'"' {
        let (e, _) = string_end(b, p + 1)?;
        (s[p + 1..e].trim(), e + 1)
    } else {
        let e = scalar_end(b, p);
        if e == b.len() {
            return Err(Scan::Eof);
        }
        if e == p {
            // An object or array where a number belongs.
            let e = skip_value(b, p)?;
            (&s[p..e], e)
        } else {
            (&s[p..e], e)
        }
    };
    if text == "null" {
        return Ok((None, e));
    }
    match micros_text_to_ns(text.as_bytes()) {
        Ok(v) => Ok((Some(v), e)),
        Err(err) => {
            d.warn(WarningKind::BadNumber, at, || {
                let why = match err {
                    NumberError::Syntax => "is not a number",
                    NumberError::OutOfRange => "does not fit in 64-bit nanoseconds",
                };
                let shown: String = text.chars().take(40).collect();
                format!("\"{field}\": {shown} {why}; the field was ignored")
            });
            Ok((None, e))
        }
    }
}

fn time_field(
    s: &str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    field: &str,
    out: &mut i64,
) -> Result<usize, Scan> {
    let (v, e) = time_value(s, p, at, d, field)?;
    *out = v.unwrap_or(0);
    Ok(e)
}

fn opt_time_field(
    s: &str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    field: &str,
    out: &mut Option<i64>,
) -> Result<usize, Scan> {
    let (v, e) = time_value(s, p, at, d, field)?;
    *out = v;
    Ok(e)
}

/// A pid or tid: an integer, a decimal string, or any other string (kept distinct).
fn id_field<'a>(
    s: &'a str,
    p: usize,
    at: u64,
    d: &mut Diagnostics,
    out: &mut RawId<'a>,
) -> Result<usize, Scan> {
    let b = s.as_bytes();
    // Fast path: a plain non-negative integer.
    let mut q = p;
    let mut v: u64 = 0;
    while q < b.len() && b[q].is_ascii_digit() && q - p < 18 {
        v = v * 10 + (b[q] - b'0') as u64;
        q += 1;
    }
    if q > p && q < b.len() && matches!(b[q], b',' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
        *out = RawId::Num(v as i64);
        return Ok(q);
    }
    let (t, quoted, e) = value_text(s, p, at, d)?;
    *out = if !quoted && t == "null" {
        RawId::Num(0)
    } else {
        match parse_int_id(&t) {
            Some(n) => RawId::Num(n),
            None => RawId::Str(t),
        }
    };
    Ok(e)
}

/// A decimal integer id. Values above `i64::MAX` (unsigned 64-bit thread ids) wrap, so the
/// same id written signed or unsigned decodes alike.
fn parse_int_id(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let (neg, digits) = match b[0] {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if neg {
        t.parse::<i64>().ok()
    } else {
        t.parse::<u64>().ok().map(|v| v as i64)
    }
}

/// `"id2": {"local": "0x1"}` or `{"global": ...}`.
fn id2_field<'a>(
    s: &'a str,
    p: usize,
    base: u64,
    d: &mut Diagnostics,
    out: &mut Option<Id2<'a>>,
) -> Result<usize, Scan> {
    let b = s.as_bytes();
    let end = skip_value(b, p)?;
    if b[p] != b'{' {
        return Ok(end);
    }
    let mut q = skip_ws(b, p + 1);
    while q < end && b[q] == b'"' {
        let (kend, _) = string_end(b, q + 1)?;
        let key = &s[q + 1..kend];
        q = skip_ws(b, kend + 1);
        if b.get(q) != Some(&b':') {
            return Err(Scan::Bad(q));
        }
        q = skip_ws(b, q + 1);
        let (t, _, e) = value_text(s, q, base + q as u64, d)?;
        match key {
            "local" => *out = Some(Id2::Local(t)),
            "global" => *out = Some(Id2::Global(t)),
            _ => {}
        }
        q = skip_ws(b, e);
        if b.get(q) == Some(&b',') {
            q = skip_ws(b, q + 1);
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> (RawEvent<'_>, Diagnostics) {
        let mut d = Diagnostics::default();
        let mut ev = RawEvent::default();
        let end = parse_event(s, 0, 0, &mut d, &mut ev).unwrap();
        assert_eq!(end, s.len());
        (ev, d)
    }

    fn parse_err(s: &str) -> Scan {
        let mut d = Diagnostics::default();
        parse_event(s, 0, 0, &mut d, &mut RawEvent::default()).unwrap_err()
    }

    #[test]
    fn all_fields() {
        let (ev, d) = parse(
            r#"{"name":"a\"b","cat":"c","ph":"X","ts":1712195495519689.047,"dur":"5.1","tts":1,"tdur":2,
               "pid":"Spans","tid":7,"id":"0x10","id2":{"local":"0x2"},"bind_id":12,"s":"g","bp":"e",
               "cname":"good","flow_out":true,"flow_in":false,"args":{"x":[1,{"y":"}"}]},"unknown":[1,2,3]}"#,
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(ev.name, "a\"b");
        assert_eq!(ev.cat, "c");
        assert_eq!(ev.ph, Phase::COMPLETE);
        assert_eq!(ev.ts, 1712195495519689047);
        assert_eq!(ev.dur, Some(5100));
        assert_eq!((ev.tts, ev.tdur), (Some(1000), Some(2000)));
        assert_eq!(ev.pid, RawId::Str("Spans".into()));
        assert_eq!(ev.tid, RawId::Num(7));
        assert_eq!(ev.id.as_deref(), Some("0x10"));
        assert_eq!(ev.id2, Some(Id2::Local("0x2".into())));
        assert_eq!(ev.bind_id.as_deref(), Some("12"));
        assert_eq!((ev.scope, ev.bp), (Some(b'g'), Some(b'e')));
        assert_eq!(ev.cname.as_deref(), Some("good"));
        assert!(ev.flow_out && !ev.flow_in);
        assert_eq!(ev.args.raw(), Some(r#"{"x":[1,{"y":"}"}]}"#));
    }

    #[test]
    fn ids() {
        assert_eq!(parse(r#"{"pid":"123","tid":-1}"#).0.pid, RawId::Num(123));
        assert_eq!(parse(r#"{"tid":-1}"#).0.tid, RawId::Num(-1));
        assert_eq!(
            parse(r#"{"tid":18446744073709551615}"#).0.tid,
            RawId::Num(-1)
        );
        assert_eq!(parse(r#"{"pid":""}"#).0.pid, RawId::Str("".into()));
        assert_eq!(parse(r#"{"pid":1.5}"#).0.pid, RawId::Str("1.5".into()));
    }

    #[test]
    fn bad_numbers_are_counted_not_fatal() {
        let (ev, d) = parse(r#"{"ph":"B","ts":"soon","dur":1e999}"#);
        assert_eq!(ev.ts, 0);
        assert_eq!(ev.dur, None);
        assert_eq!(d.count(WarningKind::BadNumber), 2);
    }

    #[test]
    fn errors() {
        assert_eq!(parse_err(r#"{"ph":"B","#), Scan::Eof);
        assert_eq!(parse_err(r#"{"ph":"B""#), Scan::Eof);
        assert_eq!(parse_err(r#"{"ph" "B"}"#), Scan::Bad(6));
        assert_eq!(parse_err(r#"{"ts":12"#), Scan::Eof);
        assert_eq!(parse_err(r#"{"tid":12"#), Scan::Eof);
        assert_eq!(parse_err(r#"{ph:1}"#), Scan::Bad(1));
    }
}
