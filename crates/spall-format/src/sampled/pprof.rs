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
use std::collections::HashMap;

use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};
use crate::proto::wire::{self, Reader, Value};

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

/// A function: name, file and start line, as string-table indices.
#[derive(Clone, Copy, Default)]
struct Function {
    name: u64,
    system_name: u64,
    file: u64,
}

/// The tables, read in the first pass.
#[derive(Default)]
struct Tables<'a> {
    strings: Vec<Cow<'a, str>>,
    sample_types: Vec<(u64, u64)>,
    default_type: Option<u64>,
    samples: Vec<(&'a [u8], u64)>,
    /// Per location (in file order): its frames, outermost (the caller) first.
    loc_frames: Vec<(u32, u32)>,
    /// Location id to index into `loc_frames`.
    loc_ids: Ids,
    /// (function id, line) per frame of every location; then the mapping or address for a
    /// location with no lines.
    lines: Vec<LineRef>,
    functions: Vec<Function>,
    fn_ids: Ids,
    /// (mapping id, file name index) in file order.
    mappings: Vec<(u64, u64)>,
    time_nanos: Option<i64>,
    duration_nanos: Option<i64>,
    period_type: Option<(u64, u64)>,
    period: Option<i64>,
}

/// One frame of a location: a line of a function, or an address alone.
#[derive(Clone, Copy)]
enum LineRef {
    Line { function: u64, line: i64 },
    Address { address: u64, mapping: u64 },
}

/// Ids to indices: a vector while the ids are small (Go numbers them 1, 2, 3...), else a
/// map.
#[derive(Default)]
struct Ids {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

impl Ids {
    const NONE: u32 = u32::MAX;

    fn insert(&mut self, id: u64, i: u32) {
        if id < (1 << 20).max(self.dense.len() as u64 * 2) {
            let id = id as usize;
            if id >= self.dense.len() {
                self.dense.resize(id + 1, Self::NONE);
            }
            self.dense[id] = i;
        } else {
            self.sparse.insert(id, i);
        }
    }

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&i) if i != Self::NONE => Some(i),
            _ => self.sparse.get(&id).copied(),
        }
    }
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
    let t = tables(b, diags)?;
    let s = |i: u64| {
        t.strings
            .get(i as usize)
            .cloned()
            .unwrap_or(Cow::Borrowed(""))
    };
    let kinds = kinds_of(&t, &s)?;
    sink.sample_kind_default(&kinds[0].name, kinds[0].unit);
    metadata(&t, &s, sink);
    let frames = location_frames(&t, &s, diags);
    let thread_name = main_binary(&t);
    let mut stack: Vec<RawFrame<'_>> = Vec::new();
    let mut values: Vec<i64> = Vec::new();
    let mut labels = String::new();
    let mut locs: Vec<u64> = Vec::new();
    let (mut bad_locs, mut n) = (0u64, 0u64);
    for &(sample, offset) in &t.samples {
        stack.clear();
        values.clear();
        labels.clear();
        locs.clear();
        for f in Reader::new(sample, offset) {
            let Ok(f) = f else {
                warn(diags, offset, || {
                    "a sample that does not parse; its rest left out".into()
                });
                break;
            };
            let r = match f.num {
                1 => wire::repeated(f.value, false, |id| locs.push(id)),
                2 => wire::repeated(f.value, false, |v| values.push(v as i64)),
                3 => {
                    if let Value::Bytes(l) = f.value {
                        label(l, &s, &mut labels);
                    }
                    Ok(())
                }
                _ => Ok(()),
            };
            if r.is_err() {
                warn(diags, f.offset, || {
                    "a packed field cut short; its rest left out".into()
                });
            }
        }
        for &id in locs.iter().rev() {
            match t.loc_ids.get(id) {
                Some(i) => {
                    let (a, z) = t.loc_frames[i as usize];
                    stack.extend_from_slice(&frames[a as usize..z as usize]);
                }
                None => bad_locs += 1,
            }
        }
        let args = if labels.is_empty() {
            Args::None
        } else {
            Args::Json(Cow::Owned(format!("{{{labels}}}")))
        };
        let mut same_stack = false;
        for k in &kinds {
            let Some(&v) = values.get(k.index) else {
                continue;
            };
            if v == 0 {
                continue;
            }
            sink.sample(&RawSample {
                pid: RawId::Num(0),
                tid: RawId::Num(1),
                thread_name: thread_name.clone(),
                kind: k.name.clone(),
                unit: k.unit,
                ts: None,
                weight: v.saturating_mul(k.scale),
                stack: &stack,
                args: args.clone(),
                same_stack,
                nodes: &[],
                offset,
                cpu: None,
            });
            same_stack = true;
        }
        if values.len() != t.sample_types.len() {
            warn(diags, offset, || {
                format!(
                    "a sample with {} values for {} sample types",
                    values.len(),
                    t.sample_types.len()
                )
            });
        }
        n += 1;
    }
    if bad_locs > 0 {
        diags.warn_n(crate::WarningKind::ProfileMalformed, bad_locs, 0, || {
            "sample locations that no location has the id of; left out".into()
        });
    }
    Ok(n)
}

/// The profile's kinds of samples, the one `go tool pprof` shows first
/// (`default_sample_type`, else the last).
fn kinds_of<'a>(t: &Tables<'a>, s: &impl Fn(u64) -> Cow<'a, str>) -> Result<Vec<Kind<'a>>, Error> {
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

/// The first pass: every table, and where each sample is.
fn tables<'a>(b: &'a [u8], diags: &mut Diagnostics) -> Result<Tables<'a>, Error> {
    let mut t = Tables::default();
    let mut fn_offsets = Vec::new();
    for f in Reader::new(b, 0) {
        let f = match f {
            Ok(f) => f,
            Err(e) if t.samples.is_empty() && t.strings.is_empty() => {
                return Err(bad(format!("not a pprof profile: {e}"), e.offset))
            }
            Err(e) => {
                warn(diags, e.offset, || {
                    format!("the profile is cut short ({e}); its rest left out")
                });
                break;
            }
        };
        let (num, v) = (f.num, f.value);
        match (num, v) {
            (1, Value::Bytes(m)) => t.sample_types.push(value_type(m)),
            (2, Value::Bytes(m)) => t.samples.push((m, f.offset)),
            (3, Value::Bytes(m)) => {
                let mut id = 0;
                let mut file = 0;
                for g in Reader::new(m, f.offset).flatten() {
                    match (g.num, g.value) {
                        (1, Value::Varint(x)) => id = x,
                        (5, Value::Varint(x)) => file = x,
                        _ => {}
                    }
                }
                t.mappings.push((id, file));
            }
            (4, Value::Bytes(m)) => location(&mut t, m, f.offset, diags),
            (5, Value::Bytes(m)) => {
                let mut id = 0;
                let mut func = Function::default();
                for g in Reader::new(m, f.offset).flatten() {
                    match (g.num, g.value) {
                        (1, Value::Varint(x)) => id = x,
                        (2, Value::Varint(x)) => func.name = x,
                        (3, Value::Varint(x)) => func.system_name = x,
                        (4, Value::Varint(x)) => func.file = x,
                        _ => {}
                    }
                }
                t.fn_ids.insert(id, t.functions.len() as u32);
                t.functions.push(func);
                fn_offsets.push(f.offset);
            }
            (6, Value::Bytes(s)) => t.strings.push(super::text::utf8(s)),
            (9, Value::Varint(x)) => t.time_nanos = Some(x as i64),
            (10, Value::Varint(x)) => t.duration_nanos = Some(x as i64),
            (11, Value::Bytes(m)) => t.period_type = Some(value_type(m)),
            (12, Value::Varint(x)) => t.period = Some(x as i64),
            (14, Value::Varint(x)) => t.default_type = Some(x),
            _ => {}
        }
    }
    if t.strings.first().is_some_and(|s| !s.is_empty()) {
        warn(diags, 0, || {
            "the string table's first entry is not empty".into()
        });
    }
    Ok(t)
}

/// A `ValueType`'s (type, unit) string indices.
fn value_type(m: &[u8]) -> (u64, u64) {
    let (mut ty, mut unit) = (0, 0);
    for g in Reader::new(m, 0).flatten() {
        match (g.num, g.value) {
            (1, Value::Varint(x)) => ty = x,
            (2, Value::Varint(x)) => unit = x,
            _ => {}
        }
    }
    (ty, unit)
}

/// A `Location`: its lines (outermost first) appended to `t.lines`.
fn location(t: &mut Tables<'_>, m: &[u8], offset: u64, diags: &mut Diagnostics) {
    let (mut id, mut address, mut mapping) = (0, 0, 0);
    let start = t.lines.len();
    for g in Reader::new(m, offset) {
        let Ok(g) = g else {
            warn(diags, offset, || {
                "a location that does not parse; its rest left out".into()
            });
            break;
        };
        match (g.num, g.value) {
            (1, Value::Varint(x)) => id = x,
            (2, Value::Varint(x)) => mapping = x,
            (3, Value::Varint(x)) => address = x,
            (4, Value::Bytes(l)) => {
                let (mut function, mut line) = (0, 0);
                for h in Reader::new(l, g.offset).flatten() {
                    match (h.num, h.value) {
                        (1, Value::Varint(x)) => function = x,
                        (2, Value::Varint(x)) => line = x as i64,
                        _ => {}
                    }
                }
                t.lines.push(LineRef::Line { function, line });
            }
            _ => {}
        }
    }
    // The innermost (inlined) line comes first in the file; stacks are outermost first.
    t.lines[start..].reverse();
    if t.lines.len() == start {
        t.lines.push(LineRef::Address { address, mapping });
    }
    t.loc_ids.insert(id, t.loc_frames.len() as u32);
    t.loc_frames.push((start as u32, t.lines.len() as u32));
}

/// Every location's frames, in the order of `t.lines`.
fn location_frames<'a>(
    t: &Tables<'a>,
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
fn main_binary<'t>(t: &'t Tables<'_>) -> Option<Cow<'t, str>> {
    let file = t.strings.get(t.mappings.first()?.1 as usize)?;
    let base = file.rsplit('/').next().unwrap_or("");
    (!base.is_empty()).then_some(Cow::Borrowed(base))
}

/// A `Label` appended to `out` as a JSON member: `"key":"value"`, or `"key":"12 unit"`.
fn label<'a>(l: &[u8], s: &impl Fn(u64) -> Cow<'a, str>, out: &mut String) {
    let (mut key, mut text, mut num, mut unit) = (0, None, None, 0);
    for g in Reader::new(l, 0).flatten() {
        match (g.num, g.value) {
            (1, Value::Varint(x)) => key = x,
            (2, Value::Varint(x)) => text = Some(x),
            (3, Value::Varint(x)) => num = Some(x as i64),
            (4, Value::Varint(x)) => unit = x,
            _ => {}
        }
    }
    let value = match (text, num) {
        (Some(t), _) => s(t).into_owned(),
        (None, Some(n)) if unit != 0 => format!("{n} {}", s(unit)),
        (None, Some(n)) => n.to_string(),
        (None, None) => String::new(),
    };
    if !out.is_empty() {
        out.push(',');
    }
    let json = |x: &str| serde_json::Value::String(x.to_string()).to_string();
    out.push_str(&json(&s(key)));
    out.push(':');
    out.push_str(&json(&value));
}

/// The profile's own fields (time, duration, period, sample types) as a `pprof` metadata
/// event of process 0.
fn metadata<'a, S: EventSink>(t: &Tables<'a>, s: &impl Fn(u64) -> Cow<'a, str>, sink: &mut S) {
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
