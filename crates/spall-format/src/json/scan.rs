//! Byte-level JSON scanning: whitespace, strings, and skipping whole values.
//!
//! Every scan is iterative (no recursion), so nesting depth never threatens the stack, and
//! every scan reports running off the end of the input as [`Scan::Eof`], never a panic.

use memchr::memchr2;

/// Why a scan stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The input ended inside the value.
    Eof,
    /// A byte that cannot appear here.
    Bad(usize),
}

#[inline]
pub(crate) fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

#[inline]
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// `i` is just after an opening quote. Returns the index of the closing quote and whether
/// the string holds any backslash escape.
///
/// Most strings in traces are short keys and names, so the first bytes are checked eight at
/// a time inline (SWAR), and only long strings pay for a `memchr2` call.
#[inline]
pub(crate) fn string_end(b: &[u8], mut i: usize) -> Result<(usize, bool), Scan> {
    let mut escaped = false;
    loop {
        // Up to 32 bytes, a word at a time.
        let mut k = 0;
        while k < 4 {
            let Some(chunk) = b.get(i..i + 8) else { break };
            let w = u64::from_le_bytes(chunk.try_into().unwrap());
            let m = special_mask(w);
            if m != 0 {
                let j = i + (m.trailing_zeros() / 8) as usize;
                if b[j] == b'"' {
                    return Ok((j, escaped));
                }
                escaped = true;
                i = j + 2;
                k = 0;
                continue;
            }
            i += 8;
            k += 1;
        }
        match memchr2(b'"', b'\\', b.get(i..).unwrap_or(&[])) {
            Some(k) => {
                let j = i + k;
                if b[j] == b'"' {
                    return Ok((j, escaped));
                }
                escaped = true;
                i = j + 2;
            }
            None => return Err(Scan::Eof),
        }
    }
}

/// A word with the high bit set in each byte of `w` that is `"` or `\\`.
#[inline(always)]
pub(crate) fn special_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    has_zero(w ^ (ONES * b'"' as u64)) | has_zero(w ^ (ONES * b'\\' as u64))
}

/// Skips one JSON value starting at `b[i]` (no leading whitespace). Returns the index just
/// after it. Containers are matched by counting brackets outside strings.
pub(crate) fn skip_value(b: &[u8], i: usize) -> Result<usize, Scan> {
    let Some(&c) = b.get(i) else {
        return Err(Scan::Eof);
    };
    match c {
        b'"' => string_end(b, i + 1).map(|(j, _)| j + 1),
        b'{' | b'[' => skip_container(b, i),
        b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' => {
            let end = scalar_end(b, i);
            if end == b.len() {
                Err(Scan::Eof)
            } else {
                Ok(end)
            }
        }
        _ => Err(Scan::Bad(i)),
    }
}

/// Whether the object starting at `b[i]` (a `{`) has the member `key` at its top level,
/// and where the scan stopped: at the key, or at the first byte that ends the search (the
/// object's end, a malformed byte, the end of `b`).
pub(crate) fn object_has_key(b: &[u8], i: usize, key: &[u8]) -> (bool, usize) {
    let mut j = i + 1;
    loop {
        j = skip_ws(b, j);
        if b.get(j) != Some(&b'"') {
            return (false, j);
        }
        let Ok((end, _)) = string_end(b, j + 1) else {
            return (false, b.len());
        };
        if &b[j + 1..end] == key {
            return (true, end);
        }
        j = skip_ws(b, end + 1);
        if b.get(j) != Some(&b':') {
            return (false, j);
        }
        let Ok(after) = skip_value(b, skip_ws(b, j + 1)) else {
            return (false, b.len());
        };
        j = skip_ws(b, after);
        if b.get(j) != Some(&b',') {
            return (false, j);
        }
        j += 1;
    }
}

/// The end of a bare token (number or literal): the first delimiter after `i`.
#[inline]
pub(crate) fn scalar_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len()
        && !matches!(
            b[i],
            b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' | b':'
        )
    {
        i += 1;
    }
    i
}

/// Skips a balanced `{...}` or `[...]` starting at `b[i]`: the vector kernel where the
/// build has one (`crate::arch`), else the scalar reference.
#[inline]
fn skip_container(b: &[u8], i: usize) -> Result<usize, Scan> {
    // An empty `{}` or `[]` (most events' `args`) is not worth the kernel's 64-byte block:
    // `}` and `]` are two past `{` and `[`.
    if b.get(i + 1) == Some(&(b[i] + 2)) {
        return Ok(i + 2);
    }
    match crate::arch::skip_container(b, i) {
        Some(end) => end.ok_or(Scan::Eof),
        None => skip_container_scalar(b, i),
    }
}

/// [`skip_container`] a byte at a time: the reference the vector kernels agree with.
pub(crate) fn skip_container_scalar(b: &[u8], i: usize) -> Result<usize, Scan> {
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b'"' => j = string_end(b, j + 1)?.0,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    Err(Scan::Eof)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_values() {
        let s = br#"{"a":[1,{"b":"x}]\"y"}],"c":null} tail"#;
        assert_eq!(skip_value(s, 0), Ok(s.len() - 5));
        assert_eq!(skip_value(b"\"ab\\\"c\",", 0), Ok(7));
        assert_eq!(skip_value(b"123,", 0), Ok(3));
        assert_eq!(skip_value(b"{},", 0), Ok(2));
        assert_eq!(skip_value(b"[]", 0), Ok(2));
        assert_eq!(skip_value(b"[ ]", 0), Ok(3));
        assert_eq!(skip_value(b"{", 0), Err(Scan::Eof));
        assert_eq!(skip_value(b"123", 0), Err(Scan::Eof));
        assert_eq!(skip_value(b"{\"a\":[1,2", 0), Err(Scan::Eof));
        assert_eq!(skip_value(b"\"abc\\", 0), Err(Scan::Eof));
        assert_eq!(skip_value(b"}", 0), Err(Scan::Bad(0)));
        // Long strings, escapes at every position relative to the 8-byte words.
        for n in 0..80 {
            let body = "x".repeat(n);
            let s = format!("\"{body}\\\"{body}\"!");
            assert_eq!(string_end(s.as_bytes(), 1), Ok((s.len() - 2, true)), "{n}");
            let s = format!("\"{body}\"!");
            assert_eq!(string_end(s.as_bytes(), 1), Ok((s.len() - 2, false)), "{n}");
            assert_eq!(
                string_end(&s.as_bytes()[..s.len() - 2], 1),
                Err(Scan::Eof),
                "{n}"
            );
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let mut s = vec![b'['; 1_000_000];
        s.extend(vec![b']'; 1_000_000]);
        assert_eq!(skip_value(&s, 0), Ok(s.len()));
    }

    /// Every start of every prefix of pseudo-random JSON-like bytes: the vector kernel
    /// gives the scalar code's answer (positions, and where it runs off the end).
    #[test]
    fn kernel_agrees_with_scalar() {
        const ALPHABET: &[u8] = br#"{}[]"\\\"ab :,{"x":[1,"y\\"]}"#;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let len = (next() % 300) as usize + 1;
            let mut b: Vec<u8> = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect();
            b[0] = if next() % 2 == 0 { b'{' } else { b'[' };
            for end in 1..=b.len() {
                let s = &b[..end];
                assert_eq!(
                    skip_container(s, 0),
                    skip_container_scalar(s, 0),
                    "{:?}",
                    String::from_utf8_lossy(s)
                );
            }
        }
    }

    #[test]
    fn long_args() {
        let mut s = br#"{"a":["#.to_vec();
        for i in 0..200 {
            s.extend_from_slice(format!(r#"{{"id_ref":"0x{i:x}\\\"{{"}},"#).as_bytes());
        }
        s.extend_from_slice(br#"1]} tail"#);
        assert_eq!(skip_container(&s, 0), Ok(s.len() - 5));
        assert_eq!(skip_container_scalar(&s, 0), Ok(s.len() - 5));
    }
}
