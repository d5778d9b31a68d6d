//! Collapsed ("folded") stacks, as `flamegraph.pl`, inferno and `perf script | stackcollapse`
//! write them: one stack a line, frames outermost first separated by `;`, then a space and
//! the stack's weight (`main;parse;read 12`). Blank lines and `#` comments are skipped; a
//! line with no weight is counted as malformed and skipped. The samples have no time and no
//! thread: they all go to one thread (pid 0, tid 0) as samples counted in [`SampleUnit::Count`].

use std::borrow::Cow;

use super::text::{lines, utf8};
use super::{warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{EventSink, RawId};

/// Whether the first line that is not blank or a comment is `stack weight`.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let Some((_, line)) = lines(head).find(|(_, l)| {
        let t = l.trim_ascii();
        !t.is_empty() && !t.starts_with(b"#")
    }) else {
        return false;
    };
    split(line).is_some_and(|(stack, _)| !stack.is_empty())
}

/// A line's stack text and weight; `None` if it does not end in ` <integer>`.
fn split(line: &[u8]) -> Option<(&[u8], i64)> {
    let line = line.trim_ascii_end();
    let sp = line.iter().rposition(|&c| c == b' ' || c == b'\t')?;
    let digits = &line[sp + 1..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) || digits.len() > 18 {
        return None;
    }
    let w = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some((line[..sp].trim_ascii_end(), w))
}

/// Decodes every line into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    Ok(decode_run(b, 0, b.len() as u64, sink, diags))
}

/// Decodes `b`, whole lines that start at the file's offset `base` (of `total` bytes),
/// into `sink`; the number of samples.
pub(crate) fn decode_run<S: EventSink>(
    b: &[u8],
    base: u64,
    total: u64,
    sink: &mut S,
    diags: &mut Diagnostics,
) -> u64 {
    let mut frames: Vec<RawFrame<'_>> = Vec::new();
    let mut n = 0;
    for (at, line) in lines(b) {
        let t = line.trim_ascii();
        if t.is_empty() || t.starts_with(b"#") {
            continue;
        }
        let Some((stack, weight)) = split(t) else {
            warn(diags, base + at as u64, || {
                format!(
                    "a collapsed-stack line with no weight: {:?}; skipped",
                    utf8(&t[..t.len().min(80)])
                )
            });
            continue;
        };
        frames.clear();
        frames.extend(
            stack
                .split(|&c| c == b';')
                .filter(|f| !f.is_empty())
                .map(|f| RawFrame::named(utf8(f))),
        );
        sink.sample(&RawSample {
            pid: RawId::Num(0),
            tid: RawId::Num(0),
            thread_name: None,
            kind: Cow::Borrowed("samples"),
            unit: SampleUnit::Count,
            ts: None,
            weight,
            stack: &frames,
            args: crate::event::Args::None,
            same_stack: false,
            same_outer: 0,
            nodes: &[],
            cpu: None,
            offset: base + at as u64,
        });
        n += 1;
        if n % 65536 == 0 {
            sink.progress(base + at as u64, total);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampled::tests::Samples;

    #[test]
    fn reads_stacks_and_weights() {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        let text = b"# comment\r\nmain;a;b 12\r\n\r\nmain;c 3\nmain;we ird 4 \n";
        assert_eq!(decode(text, &mut s, &mut d).unwrap(), 3);
        assert_eq!(
            s.stacks(),
            vec![
                ("main;a;b".into(), 12),
                ("main;c".into(), 3),
                ("main;we ird".into(), 4)
            ]
        );
        assert!(s
            .0
            .iter()
            .all(|x| x.ts.is_none() && x.unit == SampleUnit::Count));
        assert_eq!(d.total(), 0);
    }

    #[test]
    fn hostile_lines_are_counted_not_fatal() {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        let text = b"a;b 1\nno weight here\na;b 99999999999999999999999\n;;; 5\n\xff\xfe;x 2\na;b";
        assert_eq!(decode(text, &mut s, &mut d).unwrap(), 3);
        assert_eq!(d.total(), 3);
        // An empty stack is kept (weight with no frames), invalid UTF-8 replaced.
        assert_eq!(s.stacks()[1], (String::new(), 5));
        assert_eq!(s.stacks()[2], ("\u{FFFD}\u{FFFD};x".into(), 2));
    }

    #[test]
    fn detection() {
        assert!(looks_like(b"\n# c\nmain;a 1\n"));
        assert!(!looks_like(b"main;a\n"));
        assert!(!looks_like(b" 12\n"));
        assert!(!looks_like(b""));
    }
}
