//! pprof's `profile.proto` (`perftools.profiles.Profile`, as Go's `runtime/pprof` and the
//! `pprof` tools write it; gzip is undone before detection, like any input).
//!
//! A profile is a table of strings, functions, locations (an address and the lines at it:
//! several when calls were inlined, the innermost first) and mappings, then samples, each
//! a list of location ids (innermost first), one value per sample type and labels. The
//! tables may come after the samples, so the file is read in two passes: the tables first,
//! then the samples, each stack looked up location by location.
//!
//! Every sample type becomes its own kind (its `type` name: `cpu`, `samples`,
//! `inuse_space`, ...) in its unit, on one thread (pid 0, tid 1, named after the main
//! binary where a mapping gives it). The kind `go tool pprof` shows is handed over first,
//! and announced with [`EventSink::sample_kind_default`]: `default_sample_type` if the file
//! sets it, else the last sample type. A sample whose value is 0 for a type is not a
//! sample of that type (pprof's reports leave such samples out too). Labels become the
//! sample's args (`{"key": "value"}`, numbers with their unit as `"12 bytes"`). Samples have
//! no time of their own; `time_nanos`, `duration_nanos` and `period` are handed over as a
//! `pprof` metadata event.

use std::borrow::Cow;

use super::pprof_read::{Reading, Stacks, Tree};
use super::pprof_tables::{Label, LineRef, Tables};
use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};
use crate::proto::wire::{Reader, Value};

/// Whether `b` looks like an uncompressed `Profile`: its first fields (up to 64) all have
/// the wire type `profile.proto` gives their number, among them a `sample_type` (field 1)
/// that holds only small varints, and some other field (a Perfetto trace is nothing but
/// field 1, `TracePacket`s, which are no `ValueType`). Go writes `period_type` and
/// `time_nanos` before the sample types, others after.
pub(crate) fn looks_like(b: &[u8]) -> bool {
    let mut r = Reader::new(b, 0);
    let (mut sample_type, mut other) = (false, false);
    for _ in 0..64 {
        let f = match r.next_field() {
            Some(Ok(f)) => f,
            Some(Err(_)) => return false,
            None => break,
        };
        match (f.num, f.value) {
            (1, Value::Bytes(vt)) if is_value_type(vt) => sample_type = true,
            (2..=6 | 11 | 13, Value::Bytes(_)) | (7..=10 | 12..=14, Value::Varint(_)) => {
                other = true
            }
            _ => return false,
        }
    }
    sample_type && other
}

/// Whether `b` is a `ValueType`: varint fields 1 and 2 (string indices) and nothing else.
fn is_value_type(b: &[u8]) -> bool {
    let small = |v: Value<'_>| matches!(v, Value::Varint(v) if v < 1 << 32);
    !b.is_empty()
        && Reader::new(b, 0)
            .all(|f| matches!(f, Ok(f) if (f.num == 1 || f.num == 2) && small(f.value)))
}

/// How a value of a sample type becomes a weight: its kind, unit and scale to that unit.
struct Kind<'a> {
    name: Cow<'a, str>,
    unit: SampleUnit,
    scale: i64,
    index: usize,
}

/// A pprof unit's name as the model's unit and the factor to it.
fn unit_of(name: &str) -> (SampleUnit, i64) {
    match name {
        "nanoseconds" | "ns" => (SampleUnit::Nanoseconds, 1),
        "microseconds" | "us" => (SampleUnit::Nanoseconds, 1_000),
        "milliseconds" | "ms" => (SampleUnit::Nanoseconds, 1_000_000),
        "seconds" | "s" => (SampleUnit::Nanoseconds, 1_000_000_000),
        "bytes" | "B" => (SampleUnit::Bytes, 1),
        "kilobytes" | "KB" => (SampleUnit::Bytes, 1 << 10),
        "megabytes" | "MB" => (SampleUnit::Bytes, 1 << 20),
        _ => (SampleUnit::Count, 1),
    }
}

/// Decodes a profile into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    let mut r = Reading::default();
    r.push_all(b, diags)?;
    hand_over(&r, sink, diags)
}

/// A profile read to its end: its samples into `sink`, in file order; their number.
pub(super) fn hand_over<S: EventSink>(
    r: &Reading,
    sink: &mut S,
    diags: &mut Diagnostics,
) -> Result<u64, Error> {
    let t = &r.t;
    let s = |i: u64| Cow::Borrowed(t.strings.get(i as usize).map_or("", |x| x.as_str()));
    let kinds = kinds_of(t, &s)?;
    sink.sample_kind_default(&kinds[0].name, kinds[0].unit);
    metadata(t, &s, sink);
    let frames = location_frames(t, &s, diags);
    let tree = Tree::new(r);
    let mut stacks = Stacks::new(&tree, &frames);
    let thread_name = main_binary(t);
    let mut labels = String::new();
    let mut bad_locs = 0u64;
    let (mut values_at, mut last_labels) = (0, 0);
    for i in 0..r.samples.len() {
        let k = r.samples.get(i);
        let values = &r.values[values_at..k.values_end as usize];
        values_at = k.values_end as usize;
        let (stack, nodes) = stacks.get(k.stack);
        bad_locs += tree.unknown[k.stack as usize] as u64;
        // Samples often repeat their labels: their text is made again only when they change.
        if k.labels != last_labels {
            labels.clear();
            if k.labels != 0 {
                labels.push('{');
                for l in r.labels(k.labels) {
                    label_json(&l, &s, &mut labels);
                }
                labels.push('}');
            }
            last_labels = k.labels;
        }
        let args = if labels.is_empty() {
            Args::None
        } else {
            Args::Json(Cow::Borrowed(&labels))
        };
        let mut same_stack = false;
        for kind in &kinds {
            let Some(&v) = values.get(kind.index) else {
                continue;
            };
            if v == 0 {
                continue;
            }
            sink.sample(&RawSample {
                pid: RawId::Num(0),
                tid: RawId::Num(1),
                thread_name: thread_name.clone(),
                kind: kind.name.clone(),
                unit: kind.unit,
                ts: None,
                weight: v.saturating_mul(kind.scale),
                stack,
                args: args.clone(),
                same_stack,
                same_outer: 0,
                nodes,
                offset: k.offset,
                cpu: None,
            });
            same_stack = true;
        }
        if values.len() != t.sample_types.len() {
            warn(diags, k.offset, || {
                format!(
                    "a sample with {} values for {} sample types",
                    values.len(),
                    t.sample_types.len()
                )
            });
        }
    }
    if bad_locs > 0 {
        diags.warn_n(crate::WarningKind::ProfileMalformed, bad_locs, 0, || {
            "sample locations that no location has the id of; left out".into()
        });
    }
    Ok(r.samples.len() as u64)
}

/// The profile's kinds of samples, the one `go tool pprof` shows first
/// (`default_sample_type`, else the last).
fn kinds_of<'a>(t: &'a Tables, s: &impl Fn(u64) -> Cow<'a, str>) -> Result<Vec<Kind<'a>>, Error> {
    let mut kinds: Vec<Kind<'_>> = (t.sample_types.iter().enumerate())
        .map(|(index, &(ty, unit))| {
            let (u, scale) = unit_of(&s(unit));
            let name = s(ty);
            let name = if name.is_empty() {
                Cow::Borrowed("samples")
            } else {
                name
            };
            Kind {
                name,
                unit: u,
                scale,
                index,
            }
        })
        .collect();
    if kinds.is_empty() {
        return Err(bad("a pprof profile with no sample types", 0));
    }
    let default = (t.default_type)
        .and_then(|d| kinds.iter().position(|k| t.sample_types[k.index].0 == d))
        .unwrap_or(kinds.len() - 1);
    let first = kinds.remove(default);
    kinds.insert(0, first);
    Ok(kinds)
}

/// Every location's frames, in the order of `t.lines`.
fn location_frames<'a>(
    t: &'a Tables,
    s: &impl Fn(u64) -> Cow<'a, str>,
    diags: &mut Diagnostics,
) -> Vec<RawFrame<'a>> {
    let mut missing = 0u64;
    let frames = (t.lines.iter())
        .map(|l| match *l {
            LineRef::Line { function, line } => {
                let Some(f) = t.fn_ids.get(function).map(|i| t.functions[i as usize]) else {
                    missing += 1;
                    return RawFrame::named(format!("(function {function})"));
                };
                let mut name = s(f.name);
                if name.is_empty() {
                    name = s(f.system_name);
                }
                let file = s(f.file);
                RawFrame {
                    name,
                    file: (!file.is_empty()).then_some(file),
                    line: u32::try_from(line).ok().filter(|&l| l > 0),
                }
            }
            LineRef::Address { address, mapping } => {
                let file = (t.mappings.iter().find(|m| m.0 == mapping))
                    .map(|m| s(m.1))
                    .filter(|f| !f.is_empty());
                RawFrame {
                    name: Cow::Owned(format!("0x{address:x}")),
                    file,
                    line: None,
                }
            }
        })
        .collect();
    if missing > 0 {
        diags.warn_n(crate::WarningKind::ProfileMalformed, missing, 0, || {
            "location lines whose function id no function has; named by the id".into()
        });
    }
    frames
}

/// The main binary's file name (the first mapping's), for the thread's name.
fn main_binary(t: &Tables) -> Option<Cow<'_, str>> {
    let file = t.strings.get(t.mappings.first()?.1 as usize)?;
    let base = file.rsplit('/').next().unwrap_or("");
    (!base.is_empty()).then_some(Cow::Borrowed(base))
}

/// A label appended to the JSON object's text `out` (its `{` written) as a member:
/// `"key":"value"`, or `"key":"12 unit"`.
fn label_json<'a>(l: &Label, s: &impl Fn(u64) -> Cow<'a, str>, out: &mut String) {
    let value = match (l.text, l.num) {
        (Some(t), _) => s(t).into_owned(),
        (None, Some(n)) if l.unit != 0 => format!("{n} {}", s(l.unit)),
        (None, Some(n)) => n.to_string(),
        (None, None) => String::new(),
    };
    if out.len() > 1 {
        out.push(',');
    }
    let json = |x: &str| serde_json::Value::String(x.to_string()).to_string();
    out.push_str(&json(&s(l.key)));
    out.push(':');
    out.push_str(&json(&value));
}

/// The profile's own fields (time, duration, period, sample types) as a `pprof` metadata
/// event of process 0.
fn metadata<'a, S: EventSink>(t: &'a Tables, s: &impl Fn(u64) -> Cow<'a, str>, sink: &mut S) {
    let mut m = serde_json::Map::new();
    let types: Vec<String> = (t.sample_types.iter())
        .map(|&(ty, u)| format!("{}/{}", s(ty), s(u)))
        .collect();
    m.insert("sample_types".into(), types.into());
    if let Some(x) = t.time_nanos {
        m.insert("time_nanos".into(), x.into());
    }
    if let Some(x) = t.duration_nanos {
        m.insert("duration_nanos".into(), x.into());
    }
    if let (Some((ty, u)), Some(p)) = (t.period_type, t.period) {
        m.insert("period".into(), format!("{p} {}/{}", s(ty), s(u)).into());
    }
    sink.event(&RawEvent {
        ph: Phase::METADATA,
        name: Cow::Borrowed("pprof"),
        pid: RawId::Num(0),
        tid: RawId::Num(1),
        ts: t.time_nanos.unwrap_or(0),
        args: Args::Json(Cow::Owned(serde_json::Value::Object(m).to_string())),
        ..RawEvent::default()
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampled::tests::Samples;
    use crate::ProfileFormat;

    /// A protobuf writer for hand-made profiles.
    #[derive(Default)]
    struct Pb(Vec<u8>);

    impl Pb {
        fn varint(&mut self, mut v: u64) -> &mut Self {
            while v >= 0x80 {
                self.0.push(v as u8 | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
            self
        }
        fn int(&mut self, field: u64, v: u64) -> &mut Self {
            self.varint(field << 3).varint(v)
        }
        fn bytes(&mut self, field: u64, b: &[u8]) -> &mut Self {
            self.varint(field << 3 | 2).varint(b.len() as u64);
            self.0.extend_from_slice(b);
            self
        }
        fn msg(&mut self, field: u64, f: impl FnOnce(&mut Pb)) -> &mut Self {
            let mut m = Pb::default();
            f(&mut m);
            self.bytes(field, &m.0)
        }
    }

    /// Strings: 0 "", 1 samples, 2 count, 3 cpu, 4 nanoseconds, 5 main, 6 f, 7 g (inlined
    /// into f), 8 m.go, 9 thread, 10 io, 11 size, 12 bytes, 13 /bin/prog.
    const STRINGS: [&str; 14] = [
        "",
        "samples",
        "count",
        "cpu",
        "nanoseconds",
        "main",
        "f",
        "g",
        "m.go",
        "thread",
        "io",
        "size",
        "bytes",
        "/bin/prog",
    ];

    /// A profile whose samples come before its tables, with sparse ids, an inlined call, a
    /// location with no lines, labels, and `default_sample_type` naming the first type.
    fn profile(default_first: bool) -> Vec<u8> {
        let mut p = Pb::default();
        p.msg(1, |v| {
            v.int(1, 1).int(2, 2);
        });
        p.msg(1, |v| {
            v.int(1, 3).int(2, 4);
        });
        // main -> f (with g inlined): 2 samples, 20 ms; with labels.
        p.msg(2, |s| {
            s.msg(1, |l| {
                l.varint(700).varint(100);
            });
            s.msg(2, |v| {
                v.varint(2).varint(20_000_000);
            });
            s.msg(3, |l| {
                l.int(1, 9).int(2, 10);
            });
            s.msg(3, |l| {
                l.int(1, 11).int(3, 4096).int(4, 12);
            });
        });
        // main -> an address with no lines; unpacked fields; value 0 for cpu.
        p.msg(2, |s| {
            s.int(1, 900).int(1, 100).int(2, 1).int(2, 0);
        });
        // An unknown location: left out, counted.
        p.msg(2, |s| {
            s.int(1, 12345).int(1, 100).int(2, 1).int(2, 5);
        });
        p.msg(3, |m| {
            m.int(1, 1).int(5, 13);
        });
        p.msg(4, |l| {
            l.int(1, 100).int(2, 1).msg(4, |ln| {
                ln.int(1, 5000).int(2, 3);
            });
        });
        p.msg(4, |l| {
            l.int(1, 700).msg(4, |ln| {
                ln.int(1, 7000).int(2, 12);
            });
            l.msg(4, |ln| {
                ln.int(1, 6000).int(2, 7);
            });
        });
        p.msg(4, |l| {
            l.int(1, 900).int(2, 1).int(3, 0xabc);
        });
        for (id, name) in [(5000, 5), (6000, 6), (7000, 7)] {
            p.msg(5, |f| {
                f.int(1, id).int(2, name).int(4, 8);
            });
        }
        for s in STRINGS {
            p.bytes(6, s.as_bytes());
        }
        p.int(9, 1_700_000_000_000_000_000).int(10, 1_000_000_000);
        if default_first {
            p.int(14, 1);
        }
        p.0
    }

    #[test]
    fn every_sample_type_with_the_default_first() {
        let b = profile(false);
        assert_eq!(crate::sampled::sniff_binary(&b), Some(ProfileFormat::Pprof));
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        assert_eq!(decode(&b, &mut s, &mut d).unwrap(), 3);
        let got: Vec<_> = (s.0.iter())
            .map(|x| (x.kind.as_str(), x.unit, x.weight, x.ts))
            .collect();
        // The last type (cpu) by default, then the others; a 0 is no sample.
        assert_eq!(
            got,
            vec![
                ("cpu", SampleUnit::Nanoseconds, 20_000_000, None),
                ("samples", SampleUnit::Count, 2, None),
                ("samples", SampleUnit::Count, 1, None),
                ("cpu", SampleUnit::Nanoseconds, 5, None),
                ("samples", SampleUnit::Count, 1, None),
            ]
        );
        assert_eq!(
            s.stacks()[..3].to_vec(),
            vec![
                ("main;f;g".into(), 20_000_000),
                ("main;f;g".into(), 2),
                ("main;0xabc".into(), 1)
            ]
        );
        // The inlined g has its own line; the address has the mapping's file.
        let g = &s.0[0].stack[2];
        assert_eq!((g.1.as_deref(), g.2), (Some("m.go"), Some(12)));
        assert_eq!(s.0[2].stack[1].1.as_deref(), Some("/bin/prog"));
        assert_eq!(s.0[0].thread_name.as_deref(), Some("prog"));
        assert_eq!(s.0[0].args, r#"{"thread":"io","size":"4096 bytes"}"#);
        // The unknown location.
        assert_eq!(d.total(), 1, "{d:?}");

        let mut s = Samples::default();
        decode(&profile(true), &mut s, &mut d).unwrap();
        assert_eq!(s.0[0].kind, "samples");
    }

    /// A decode's samples and warnings as text to compare.
    fn text(r: Result<crate::Summary, Error>, s: &Samples) -> String {
        match r {
            Ok(sum) => format!("{sum:?} {:?}", s.0),
            Err(e) => format!("error {e}"),
        }
    }

    fn whole(b: &[u8]) -> String {
        let mut s = Samples::default();
        text(crate::decode(b, &mut s), &s)
    }

    /// `b` streamed in two pieces cut at `cut`, then in pieces of `piece` bytes.
    fn streamed(b: &[u8], cut: usize, piece: usize) -> String {
        let mut s = crate::TraceStream::with_target(b, 1, Samples::default).expect("streamed");
        let pieces = std::iter::once(&b[..cut]).chain(b[cut..].chunks(piece.max(1)));
        for p in pieces {
            if let Err(e) = s.push(p) {
                return format!("error {e}");
            }
        }
        match s.finish() {
            Ok(Some((sum, sinks))) => {
                let all = Samples(sinks.into_iter().flat_map(|s| s.0).collect());
                text(Ok(sum), &all)
            }
            Ok(None) => "decode again".into(),
            Err(e) => format!("error {e}"),
        }
    }

    /// Real Go profiles, gzipped, and the hand-made one, plain and gzipped: streamed with
    /// the file (or its gzip stream) cut at every byte, they give the whole decode's
    /// samples and warnings; so do hostile ones (bytes flipped), cut anywhere.
    #[test]
    fn streamed_profiles_are_the_whole_decode_at_every_cut() {
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, b).unwrap();
            e.finish().unwrap()
        };
        let mut files = vec![
            spall_test_support::fixture_bytes("real/profiles/go_cpu.pb.gz"),
            spall_test_support::fixture_bytes("real/profiles/go_heap.pb.gz"),
            profile(false),
        ];
        files.push(gz(&files[2]));
        for b in &files {
            let want = whole(b);
            assert!(
                want.contains("Pprof") && !want.contains("events: 0,"),
                "{want}"
            );
            for cut in 0..=b.len() {
                let got = streamed(b, cut, b.len());
                assert!(got == want, "cut at {cut}\n{got}\n{want}");
            }
            assert!(streamed(b, 0, 1) == want, "pieces of 1");
        }
        // Read as it arrives: once its fields are complete, no byte is held.
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&files[0][..]), &mut plain)
            .unwrap();
        let mut s = crate::TraceStream::with_target(&plain, 1, Samples::default).unwrap();
        for p in plain.chunks(100) {
            s.push(p).unwrap();
        }
        assert_eq!(s.progress(), (plain.len() as u64, plain.len() as u64));
        let b = profile(true);
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0xff;
            if crate::detect(&c) != crate::Detected::Profile(ProfileFormat::Pprof) {
                continue;
            }
            let want = whole(&c);
            for cut in [0, i, i + 1, c.len() / 2] {
                let got = streamed(&c, cut.min(c.len()), 3);
                assert!(got == want, "{i} at {cut}\n{got}\n{want}");
            }
        }
    }

    #[test]
    fn perfetto_traces_are_not_pprof() {
        // A TracePacket holding a timestamp (field 8) and a sequence id (field 10).
        let mut p = Pb::default();
        for _ in 0..3 {
            p.msg(1, |t| {
                t.int(8, 1000).int(10, 1);
            });
        }
        assert_eq!(crate::sampled::sniff_binary(&p.0), None);
        assert!(crate::proto::looks_like(&p.0));
        // A sample type alone, and nothing after it, is not enough to tell.
        let mut v = Pb::default();
        v.msg(1, |v| {
            v.int(1, 1).int(2, 2);
        });
        assert_eq!(crate::sampled::sniff_binary(&v.0), None);
    }

    #[test]
    fn hostile_profiles_never_panic() {
        let b = profile(false);
        // Cut anywhere: an error or fewer samples, never a panic.
        for cut in 0..b.len() {
            let mut d = Diagnostics::default();
            let _ = decode(&b[..cut], &mut Samples::default(), &mut d);
        }
        // Every byte flipped in turn.
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0xff;
            let _ = decode(&c, &mut Samples::default(), &mut Diagnostics::default());
        }
        // No sample types; string indices past the table; a huge location id.
        let mut p = Pb::default();
        p.msg(2, |s| {
            s.int(1, u64::MAX).int(2, 1);
        });
        p.bytes(6, b"");
        let mut d = Diagnostics::default();
        assert!(decode(&p.0, &mut Samples::default(), &mut d).is_err());
        let mut p = Pb::default();
        p.msg(1, |v| {
            v.int(1, 99).int(2, 98);
        });
        p.msg(2, |s| {
            s.int(1, u64::MAX).int(2, 1);
        });
        p.msg(4, |l| {
            l.int(1, u64::MAX - 1).msg(4, |ln| {
                ln.int(1, 77);
            });
        });
        let mut s = Samples::default();
        decode(&p.0, &mut s, &mut d).unwrap();
        assert_eq!(s.stacks(), vec![(String::new(), 1)]);
        assert_eq!(s.0[0].kind, "samples");
    }
}
