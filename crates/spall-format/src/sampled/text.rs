//! Text helpers shared by the line-based profile readers: lines with their offsets, and
//! UTF-16 input turned into UTF-8.

/// The lines of `b`, each without its `\n` or `\r\n`, with the offset where it starts.
pub(crate) fn lines(b: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= b.len() {
            return None;
        }
        let start = at;
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        at = end + 1;
        let line = &b[start..end];
        Some((start, line.strip_suffix(b"\r").unwrap_or(line)))
    })
}

/// UTF-16 text with a byte-order mark (`FF FE` little-endian, `FE FF` big-endian) as UTF-8,
/// unpaired surrogates replaced by U+FFFD; `None` if `b` has no such mark.
pub fn utf16_to_utf8(b: &[u8]) -> Option<Vec<u8>> {
    let le = match b {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let units = b[2..].chunks_exact(2).map(|c| {
        let pair = [c[0], c[1]];
        if le {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    let mut out = String::with_capacity(b.len() / 2);
    out.extend(char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)));
    if b.len() % 2 == 1 {
        out.push(char::REPLACEMENT_CHARACTER);
    }
    Some(out.into_bytes())
}

/// `s` as text, invalid UTF-8 replaced (borrowed when it is valid).
pub(crate) fn utf8(s: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(s) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_strip_crlf_and_keep_offsets() {
        let v: Vec<_> = lines(b"a 1\r\nbb 2\n\nc").collect();
        assert_eq!(
            v,
            vec![
                (0, &b"a 1"[..]),
                (5, &b"bb 2"[..]),
                (10, &b""[..]),
                (11, &b"c"[..])
            ]
        );
    }

    #[test]
    fn utf16_both_byte_orders() {
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("a;é 3".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(utf16_to_utf8(&le).unwrap(), "a;é 3".as_bytes());
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("x 1".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(utf16_to_utf8(&be).unwrap(), b"x 1");
        // A lone surrogate and an odd last byte are replaced, not fatal.
        let bad = [0xFF, 0xFE, 0x00, 0xD8, 0x41];
        assert_eq!(
            String::from_utf8(utf16_to_utf8(&bad).unwrap()).unwrap(),
            "\u{FFFD}\u{FFFD}"
        );
        assert_eq!(utf16_to_utf8(b"plain"), None);
    }
}
