//! Sampling profiles: stacks with a weight, rather than spans with a start and an end.
//!
//! Each reader turns one file format into [`RawSample`]s, handed to
//! [`EventSink::sample`] one at a time in file order:
//! [`collapsed`] stacks (`a;b;c 12`), `perf script` text ([`perf`]), V8's `.cpuprofile`
//! ([`cpuprofile`]), speedscope's file format ([`speedscope`]), pprof's `profile.proto`
//! ([`pprof`]) and Firefox's Gecko profiles ([`gecko`]). A sample names its
//! thread, its stack (outermost frame first), its weight and the weight's unit, and its
//! time where the format has one (collapsed stacks have none; the model lays untimed
//! samples out itself).
//!
//! The format is detected from content ([`sniff`]): JSON whose first key is one a
//! `.cpuprofile` or a speedscope file starts with, else text whose first record is a
//! `perf script` header followed by a frame line, or a `stack weight` line. A pprof file
//! is protobuf, told from a Perfetto trace by [`sniff_binary`], before Perfetto's check.
//!
//! All but the older `.cpuprofile` are also decoded as their bytes arrive
//! ([`ProfileStream`]; the JSON ones through `walk`, pprof through `pprof_read`, which
//! its whole-file decode uses too). A speedscope file is walked natively as well.

use crate::diag::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorKind};
use crate::event::EventSink;
pub use crate::event::{RawFrame, RawSample, SampleUnit};

pub mod collapsed;
pub mod cpuprofile;
pub mod gecko;
mod gecko_doc;
mod gecko_markers;
mod gecko_stream;
mod gecko_table;
pub mod perf;
mod perf_tree;
pub mod pprof;
mod pprof_read;
mod pprof_tables;
pub mod speedscope;
mod stream;
mod text;
mod walk;

pub use stream::ProfileStream;

pub use text::utf16_to_utf8;

/// Which sampling-profile format some bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProfileFormat {
    /// `perf script` text.
    Perf,
    /// Collapsed (folded) stacks: `a;b;c 12` a line.
    Collapsed,
    /// V8's `.cpuprofile` JSON (Node, Chrome DevTools).
    CpuProfile,
    /// speedscope's JSON file format.
    Speedscope,
    /// pprof's `profile.proto` (Go's `runtime/pprof`, the `pprof` tools).
    Pprof,
    /// Firefox's Gecko profile JSON: raw, processed, or in a DevTools recording.
    Gecko,
}

/// How far into the input detection looks.
const SNIFF_BYTES: usize = 64 << 10;

/// The sampling-profile format of `b` (UTF-8, not gzip), if it is one.
pub fn sniff(b: &[u8]) -> Option<ProfileFormat> {
    let head = &b[..b.len().min(SNIFF_BYTES)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head.iter().position(|c| !c.is_ascii_whitespace())?;
    match head[start] {
        b'{' => json_kind(&head[start + 1..]),
        b'[' => None,
        _ => {
            if perf::looks_like(head) {
                Some(ProfileFormat::Perf)
            } else if collapsed::looks_like(head) {
                Some(ProfileFormat::Collapsed)
            } else {
                None
            }
        }
    }
}

/// The binary sampling-profile format of `b` (not gzip), if it is one: checked before
/// Perfetto's protobuf, which a pprof file would otherwise pass for.
pub fn sniff_binary(b: &[u8]) -> Option<ProfileFormat> {
    pprof::looks_like(b).then_some(ProfileFormat::Pprof)
}

/// A JSON object's kind from its first key (the object's text after `{`).
fn json_kind(after_brace: &[u8]) -> Option<ProfileFormat> {
    let s = after_brace.trim_ascii_start();
    let key = s.strip_prefix(b"\"")?;
    let end = key.iter().position(|&c| c == b'"')?;
    match &key[..end] {
        b"meta" | b"libs" | b"profile" | b"threads" | b"processes" | b"version" | b"systemHost"
        | b"duration" | b"label" | b"configuration"
            if gecko::looks_like(after_brace) =>
        {
            Some(ProfileFormat::Gecko)
        }
        b"nodes" | b"head" | b"startTime" | b"endTime" | b"timeDeltas" | b"title"
            if cpuprofile::looks_like(after_brace) =>
        {
            Some(ProfileFormat::CpuProfile)
        }
        b"$schema" | b"shared" | b"profiles" | b"exporter" | b"activeProfileIndex" | b"name"
            if speedscope::looks_like(after_brace) =>
        {
            Some(ProfileFormat::Speedscope)
        }
        _ => None,
    }
}

/// Decodes a sampling profile of `format` into `sink`; the number of samples.
pub fn decode<S: EventSink>(
    b: &[u8],
    format: ProfileFormat,
    sink: &mut S,
    diags: &mut Diagnostics,
) -> Result<u64, Error> {
    let n = match format {
        ProfileFormat::Perf => perf::decode(b, sink, diags)?,
        ProfileFormat::Collapsed => collapsed::decode(b, sink, diags)?,
        ProfileFormat::CpuProfile => cpuprofile::decode(b, sink, diags)?,
        ProfileFormat::Speedscope => speedscope::decode(b, sink, diags)?,
        ProfileFormat::Pprof => pprof::decode(b, sink, diags)?,
        ProfileFormat::Gecko => gecko::decode(b, sink, diags)?,
    };
    sink.progress(b.len() as u64, b.len() as u64);
    Ok(n)
}

/// A speedscope file read by the walk its stream uses, in one push: a sink per profile,
/// and the file's document never held (parsed whole it takes 15 times the file's bytes).
/// `None` where the walk gives up: the file is then decoded whole.
pub(crate) fn walked_speedscope<S: EventSink>(
    b: &[u8],
    mut diags: Diagnostics,
    new_sink: &dyn Fn() -> S,
) -> Option<(crate::Summary, Vec<S>)> {
    use walk::Walked;
    let mut st = speedscope::Stream::default();
    let mut sinks = Vec::new();
    let ok = st.push(false, b, &mut sinks, new_sink, &mut diags)
        && st.push(true, &[], &mut sinks, new_sink, &mut diags);
    let len = b.len() as u64;
    let summary = crate::Summary {
        format: crate::Format::Profile(ProfileFormat::Speedscope),
        gzip: false,
        input_bytes: len,
        decoded_bytes: len,
        parsed_bytes: len,
        events: st.n,
        diagnostics: diags,
        spall: None,
        json: None,
    };
    ok.then_some((summary, sinks))
}

/// Whether a file's first bytes `head`, cut off, decode to any of its samples: not for the
/// JSON profiles whose parts refer to each other (`.cpuprofile`, speedscope, Gecko), plain
/// or gzipped, whose decode fails at the cut after reading up to it (a `.cpuprofile` three
/// times: the streamed reader, then serde twice). The memory guard's sample skips them.
pub fn cut_decodes(head: &[u8]) -> bool {
    let inner;
    let b = if crate::detect(head) == crate::Detected::Gzip {
        let mut out = Vec::new();
        let dec = flate2::read::MultiGzDecoder::new(head);
        // A head cut off by its length ends early: what came out is enough.
        let _ =
            std::io::Read::read_to_end(&mut std::io::Read::take(dec, SNIFF_BYTES as u64), &mut out);
        inner = out;
        &inner[..]
    } else {
        head
    };
    !matches!(
        crate::detect(b),
        crate::Detected::Profile(
            ProfileFormat::CpuProfile | ProfileFormat::Speedscope | ProfileFormat::Gecko
        )
    )
}

/// A fatal error: the input is not the profile it looked like.
pub(crate) fn bad(what: impl Into<String>, offset: u64) -> Error {
    Error::new(ErrorKind::Profile(what.into()), offset)
}

/// Counts a record that does not parse.
pub(crate) fn warn(diags: &mut Diagnostics, offset: u64, what: impl FnOnce() -> String) {
    diags.warn(WarningKind::ProfileMalformed, offset, what);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::event::RawId;

    /// A sample with its text copied out.
    #[derive(Clone, Debug, PartialEq)]
    pub(crate) struct Owned {
        pub pid: RawId<'static>,
        pub tid: RawId<'static>,
        pub thread_name: Option<String>,
        pub kind: String,
        pub unit: SampleUnit,
        pub ts: Option<i64>,
        pub weight: i64,
        /// Outermost first: (name, file, line).
        pub stack: Vec<(String, Option<String>, Option<u32>)>,
        /// The args' text, or "".
        pub args: String,
    }

    /// A sink that keeps every sample.
    #[derive(Default)]
    pub(crate) struct Samples(pub Vec<Owned>);

    impl EventSink for Samples {
        fn event(&mut self, _: &crate::RawEvent<'_>) {}
        fn sample(&mut self, s: &RawSample<'_>) {
            self.0.push(Owned {
                pid: s.pid.clone().into_owned(),
                tid: s.tid.clone().into_owned(),
                thread_name: s.thread_name.as_ref().map(|n| n.to_string()),
                kind: s.kind.to_string(),
                unit: s.unit,
                ts: s.ts,
                weight: s.weight,
                stack: (s.stack.iter())
                    .map(|f| {
                        let file = f.file.as_ref().map(|x| x.to_string());
                        (f.name.to_string(), file, f.line)
                    })
                    .collect(),
                args: s.args.raw().unwrap_or("").to_string(),
            });
        }
    }

    impl Samples {
        /// `text` through a reader's `decode`, which must succeed: its samples and warnings.
        pub(crate) fn read(
            decode: fn(&[u8], &mut Samples, &mut Diagnostics) -> Result<u64, crate::Error>,
            text: &str,
        ) -> (Samples, Diagnostics) {
            let mut s = Samples::default();
            let mut d = Diagnostics::default();
            decode(text.as_bytes(), &mut s, &mut d).unwrap();
            (s, d)
        }

        /// Each sample as `a;b;c` (outermost first) and its weight.
        pub(crate) fn stacks(&self) -> Vec<(String, i64)> {
            (self.0.iter())
                .map(|s| {
                    let names: Vec<&str> = s.stack.iter().map(|f| f.0.as_str()).collect();
                    (names.join(";"), s.weight)
                })
                .collect()
        }
    }

    #[test]
    fn utf16_collapsed_stacks_decode_through_detection() {
        let text = "main;a 3\r\nmain;b 4\r\n";
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let mut s = Samples::default();
        let summary = crate::decode(&utf16, &mut s).unwrap();
        assert_eq!(
            summary.format,
            crate::Format::Profile(ProfileFormat::Collapsed)
        );
        assert_eq!(s.stacks(), vec![("main;a".into(), 3), ("main;b".into(), 4)]);
        // Cut anywhere (an odd byte, half a line), it still decodes without a panic.
        for cut in 0..utf16.len() {
            let _ = crate::decode(&utf16[..cut], &mut Samples::default());
        }
    }

    #[test]
    fn sniffs_each_format_and_leaves_traces_alone() {
        let cases: [(&[u8], Option<ProfileFormat>); 9] = [
            (b"main;a 1\n", Some(ProfileFormat::Collapsed)),
            (
                b"perf 12 [000] 1.5: cycles:\n\tffff a (b)\n",
                Some(ProfileFormat::Perf),
            ),
            (
                b"{\"nodes\":[{\"id\":1,\"callFrame\":{}}],\"samples\":[]}",
                Some(ProfileFormat::CpuProfile),
            ),
            (
                b"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"}",
                Some(ProfileFormat::Speedscope),
            ),
            (b"{\"traceEvents\":[]}", None),
            (b"[{\"ph\":\"X\"}]", None),
            (b"{\"nodes\":1}", None),
            (b"hello\n", None),
            (b"", None),
        ];
        for (b, want) in cases {
            assert_eq!(sniff(b), want, "{:?}", String::from_utf8_lossy(b));
        }
    }

    /// The memory guard's first bytes: a cut `.cpuprofile`, speedscope or Gecko file
    /// decodes to nothing (so it is not read), plain or gzipped; a cut `perf script`, JSON
    /// trace or pprof does (the complete records before the cut).
    #[test]
    fn only_cut_json_profiles_decode_to_nothing() {
        let cpu = spall_test_support::fixture_bytes("real/profiles/work.cpuprofile");
        let gecko = spall_test_support::fixture_bytes("real/profiles/firefox_page.json.gz");
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gecko[..]), &mut plain)
            .unwrap();
        let gecko = plain;
        let perf = spall_test_support::fixture_bytes("real/profiles/spin.perf");
        let pprof = spall_test_support::fixture_bytes("real/profiles/go_cpu.pb.gz");
        let samples = vec!["[0,1]"; 500].join(",");
        let ss = format!(
            r#"{{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{{"frames":[{{"name":"a"}},{{"name":"b"}}]}},"profiles":[{{"type":"sampled","name":"p","unit":"none","startValue":0,"endValue":500,"samples":[{samples}],"weights":[{}]}}]}}"#,
            vec!["1"; 500].join(",")
        );
        let ss = ss.as_bytes();
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, b).unwrap();
            e.finish().unwrap()
        };
        for (name, b) in [
            ("cpuprofile", &cpu[..]),
            ("gecko", &gecko[..]),
            ("speedscope", ss),
        ] {
            let cut = &b[..b.len() / 2];
            assert!(!cut_decodes(cut), "{name}");
            assert!(!cut_decodes(&gz(cut)), "{name}, gzipped");
            let mut s = Samples::default();
            let _ = crate::decode(cut, &mut s);
            assert!(
                s.0.is_empty(),
                "{name}: {} samples from half the file",
                s.0.len()
            );
        }
        for (name, b) in [("perf", &perf[..]), ("pprof", &pprof[..])] {
            assert!(cut_decodes(&b[..b.len() / 2]), "{name}");
        }
        let mut s = Samples::default();
        let _ = crate::decode(&perf[..perf.len() / 2], &mut s);
        assert!(
            s.0.len() > 10,
            "perf: {} samples from half the file",
            s.0.len()
        );
        assert!(cut_decodes(br#"{"traceEvents":[{"ph":"X","#));
    }
}
