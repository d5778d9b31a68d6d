//! JSON string contents: borrowed when plain, unescaped when not.

use std::borrow::Cow;

/// A problem found while unescaping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EscapeProblem {
    /// `\u` escapes that do not form valid UTF-16 (lone surrogates); replaced with U+FFFD.
    BadSurrogate,
    /// A backslash followed by something JSON does not define; kept literally.
    UnknownEscape,
}

/// The text of a string whose raw contents (between the quotes) are `raw`.
#[inline(always)]
pub(crate) fn unescape<'a>(raw: &'a str, escaped: bool) -> (Cow<'a, str>, Option<EscapeProblem>) {
    if !escaped {
        return (Cow::Borrowed(raw), None);
    }
    unescape_slow(raw)
}

#[cold]
fn unescape_slow(raw: &str) -> (Cow<'_, str>, Option<EscapeProblem>) {
    let mut out = String::with_capacity(raw.len());
    let mut problem = None;
    let b = raw.as_bytes();
    let mut i = 0;
    let mut lit = 0; // start of the pending literal run
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&raw[lit..i]);
        let Some(&e) = b.get(i + 1) else {
            out.push('\\');
            problem = Some(EscapeProblem::UnknownEscape);
            i += 1;
            lit = i;
            break;
        };
        i += 2;
        match e {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => match hex4(b, i) {
                Some(hi) => {
                    i += 4;
                    let c = if (0xD800..0xDC00).contains(&hi) {
                        match (b.get(i), b.get(i + 1), hex4(b, i + 2)) {
                            (Some(b'\\'), Some(b'u'), Some(lo))
                                if (0xDC00..0xE000).contains(&lo) =>
                            {
                                i += 6;
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            }
                            _ => None,
                        }
                    } else {
                        char::from_u32(hi)
                    };
                    out.push(c.unwrap_or_else(|| {
                        problem = Some(EscapeProblem::BadSurrogate);
                        '\u{FFFD}'
                    }));
                }
                None => {
                    out.push_str("\\u");
                    problem = Some(EscapeProblem::UnknownEscape);
                }
            },
            _ => {
                // Keep the backslash and let the next character start a new literal run.
                out.push('\\');
                i -= 1;
                problem = Some(EscapeProblem::UnknownEscape);
            }
        }
        lit = i;
    }
    out.push_str(&raw[lit.min(raw.len())..]);
    (Cow::Owned(out), problem)
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i..i + 4)?;
    let mut v = 0u32;
    for &c in s {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn un(s: &str) -> (String, Option<EscapeProblem>) {
        let (c, p) = unescape(s, true);
        (c.into_owned(), p)
    }

    #[test]
    fn escapes() {
        assert_eq!(un(r#"a\"b\\c\/d\n\t"#).0, "a\"b\\c/d\n\t");
        assert_eq!(un(r"\u00e9t\u00E9").0, "été");
        assert_eq!(un(r"\ud83d\ude00!").0, "😀!");
        assert_eq!(un(r"x\ud83d").1, Some(EscapeProblem::BadSurrogate));
        assert_eq!(un(r"x\ud83d").0, "x\u{FFFD}");
        assert_eq!(un(r"\ude00y").0, "\u{FFFD}y");
        assert_eq!(
            un(r"a\qb"),
            ("a\\qb".into(), Some(EscapeProblem::UnknownEscape))
        );
        assert_eq!(
            un(r"a\u12"),
            ("a\\u12".into(), Some(EscapeProblem::UnknownEscape))
        );
        assert_eq!(un("é\\n"), ("é\n".into(), None));
        assert!(matches!(unescape("plain", false).0, Cow::Borrowed("plain")));
    }
}
