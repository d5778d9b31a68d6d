//! Firefox (Gecko) profiles: the raw format the Gecko profiler writes, the processed
//! format the Firefox Profiler saves, and either inside a Firefox DevTools recording.
//!
//! - Raw: `{meta: {interval, startTime, version}, threads: [...], processes: [nested
//!   profiles]}`; each thread's `samples`, `stackTable` and `frameTable` are
//!   `{schema: {column: index}, data: [[...]]}` tables (read through their schema), its
//!   `stringTable` an array. A subprocess's times count from its own `meta.startTime`,
//!   moved here onto the root's. Threads or subprocesses given as JSON text are parsed.
//! - Processed (`meta.preprocessedProfileVersion`): tables as columns
//!   (`{frame: [...], prefix: [...], length}`), frames naming functions in a `funcTable`,
//!   strings in `shared.stringArray` (or, in older versions, each thread's `stringArray`),
//!   sample times as `time` or `timeDeltas`, all from the root's start.
//! - A DevTools recording keeps either under `profile`.
//!
//! A stack is a chain of (prefix, frame) rows. A sample weighs its `weight` column where
//! there is one (`weightType` `samples`, `tracing-ms`, `bytes`), else 1 (a count), and is
//! timed (ms as ns, from the root's `meta.startTime`). Each thread is its own (pid, tid),
//! named by its `name`; its process by `processName`. A raw frame's location
//! `func (file:line:col)` (with, in newer profiles, a source index `[n]` after it) is
//! split into the function and its file and line, as the Firefox Profiler shows it. A
//! thread's markers are events on it (`gecko_markers`).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::gecko_markers::{self, Place};
use super::gecko_table::Table;
use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// How deep nested `processes` are followed.
const MAX_NESTING: u32 = 16;

/// Whether a JSON object (its text after `{`) looks like a Gecko profile: a `meta` with
/// an `interval`, and a profiler's own keys.
pub(crate) fn looks_like(after_brace: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(after_brace, k).is_some();
    has(b"\"meta\"")
        && has(b"\"interval\"")
        && (has(b"\"preprocessedProfileVersion\"")
            || has(b"\"stackwalk\"")
            || has(b"\"stackTable\"")
            || has(b"\"threads\""))
}

/// Decodes every thread's samples into `sink`; the number of samples.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    let v: Value = serde_json::from_slice(b)
        .map_err(|e| bad(format!("a Gecko profile that is not valid JSON: {e}"), 0))?;
    let root = match v.get("profile") {
        Some(p) if p.get("meta").is_some() => p,
        _ => &v,
    };
    let meta = (root.get("meta").and_then(Value::as_object))
        .ok_or_else(|| bad("a Gecko profile with no meta", 0))?;
    let mut cx = Cx::new(meta, root.get("shared"), sink, diags);
    cx.profile(root, 0)?;
    Ok(cx.n)
}

pub(super) struct Cx<'s, 'v, S> {
    pub(super) sink: &'s mut S,
    pub(super) diags: &'s mut Diagnostics,
    /// The root's `meta.startTime` (ms).
    start: f64,
    processed: bool,
    shared: Option<&'v Vec<Value>>,
    /// The root's `meta.categories`, which markers name by index.
    categories: Option<&'v Vec<Value>>,
    /// Samples and markers handed over.
    pub(super) n: u64,
    /// The first call-tree node ([`RawSample::nodes`]) of the next thread's stack table:
    /// each thread's rows are numbered after the previous ones', so a node names one row
    /// of one thread for the whole decode.
    pub(super) nodes: u64,
}

impl<'s, 'v, S: EventSink> Cx<'s, 'v, S> {
    /// The root's context: its `meta` (an object) and `shared`.
    pub(super) fn new(
        meta: &'v Map<String, Value>,
        shared: Option<&'v Value>,
        sink: &'s mut S,
        diags: &'s mut Diagnostics,
    ) -> Self {
        Cx {
            sink,
            diags,
            start: meta.get("startTime").and_then(Value::as_f64).unwrap_or(0.0),
            processed: meta.get("preprocessedProfileVersion").is_some(),
            shared: shared
                .and_then(|s| s.get("stringArray"))
                .and_then(Value::as_array),
            categories: meta.get("categories").and_then(Value::as_array),
            n: 0,
            nodes: 0,
        }
    }
}

impl<'v, S: EventSink> Cx<'_, 'v, S> {
    /// One (sub)profile: its threads, then its subprocesses.
    fn profile(&mut self, p: &'v Value, depth: u32) -> Result<(), Error> {
        let own_start = p.pointer("/meta/startTime").and_then(Value::as_f64);
        // Raw subprocess times count from their own start.
        let shift = if self.processed {
            0.0
        } else {
            own_start.map_or(0.0, |s| s - self.start)
        };
        let threads = p.get("threads").and_then(Value::as_array);
        if threads.is_none() && depth == 0 {
            return Err(bad("a Gecko profile with no threads", 0));
        }
        for t in threads.into_iter().flatten() {
            self.thread_value(t, shift);
        }
        for sub in p
            .get("processes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if depth >= MAX_NESTING {
                self.skip("processes nested too deep");
                break;
            }
            match sub {
                Value::String(_) => self.subprocess_owned(sub, depth + 1)?,
                v => self.profile(v, depth + 1)?,
            }
        }
        Ok(())
    }

    /// One of `threads`.
    pub(super) fn thread_value(&mut self, t: &Value, shift: f64) {
        match t {
            Value::Object(o) => self.thread(o, shift),
            // Old profiles embed some threads as JSON text.
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(o)) => self.thread(&o, shift),
                _ => self.skip("a thread given as text that is not a JSON object"),
            },
            _ => self.skip("a thread that is not an object"),
        }
    }

    /// One of `processes` at `depth`, which does not live as long as the root.
    pub(super) fn subprocess_owned(&mut self, sub: &Value, depth: u32) -> Result<(), Error> {
        match sub {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v) => self.profile_owned(&v, depth),
                Err(_) => {
                    self.skip("a subprocess given as text that is not JSON");
                    Ok(())
                }
            },
            v => self.profile_owned(v, depth),
        }
    }

    /// A subprocess parsed from text here: its strings live only for the call.
    fn profile_owned(&mut self, v: &Value, depth: u32) -> Result<(), Error> {
        let mut cx = Cx {
            sink: &mut *self.sink,
            diags: &mut *self.diags,
            start: self.start,
            processed: self.processed,
            shared: self.shared,
            categories: self.categories,
            n: 0,
            nodes: self.nodes,
        };
        cx.profile(v, depth)?;
        self.n += cx.n;
        self.nodes = cx.nodes;
        Ok(())
    }

    fn skip(&mut self, what: &str) {
        warn(self.diags, 0, || format!("{what}; skipped"));
    }

    /// One thread's samples, then its markers.
    fn thread(&mut self, t: &Map<String, Value>, shift: f64) {
        let strings = (t.get("stringTable").and_then(Value::as_array))
            .or_else(|| t.get("stringArray").and_then(Value::as_array))
            .or(self.shared);
        let empty = Vec::new();
        let strings = strings.unwrap_or(&empty);
        let pid = id_of(t.get("pid"));
        let tid = id_of(t.get("tid"));
        let meta = |key: &str, name: &str| RawEvent {
            ph: Phase::METADATA,
            name: Cow::Owned(key.to_string()),
            pid: pid.clone(),
            tid: tid.clone(),
            args: Args::Json(Cow::Owned(serde_json::json!({ "name": name }).to_string())),
            ..RawEvent::default()
        };
        if let Some(p) = t.get("processName").and_then(Value::as_str) {
            self.sink.event(&meta("process_name", p));
        }
        let last = self.samples(t, strings, (&pid, &tid), shift);
        // A thread of markers alone: its name, which samples would have given.
        if let (None, Some(name)) = (last, t.get("name").and_then(Value::as_str)) {
            self.sink.event(&meta("thread_name", name));
        }
        let at = Place {
            strings,
            categories: self.categories,
            pid: &pid,
            tid: &tid,
            shift,
            last: last.unwrap_or(f64::MIN),
        };
        self.n += gecko_markers::emit(t, &at, self.sink, self.diags);
    }

    /// One thread's samples, each with its stack; the last sample's time (ms), if any.
    fn samples(
        &mut self,
        t: &Map<String, Value>,
        strings: &[Value],
        (pid, tid): (&RawId<'static>, &RawId<'static>),
        shift: f64,
    ) -> Option<f64> {
        let (Some(samples), Some(stacks), Some(frames)) = (
            Table::of(t.get("samples")),
            Table::of(t.get("stackTable")),
            Table::of(t.get("frameTable")),
        ) else {
            if t.get("markers").is_none() {
                self.skip("a thread with no samples, stackTable or frameTable");
            }
            return None;
        };
        let funcs = Table::of(t.get("funcTable"));
        let frames = frame_list(&frames, funcs.as_ref(), strings);
        let name = t.get("name").and_then(Value::as_str);
        let weight_type = (t.get("samples").and_then(|s| s.get("weightType")))
            .and_then(Value::as_str)
            .unwrap_or("samples");
        let (unit, scale) = match weight_type {
            "tracing-ms" => (SampleUnit::Nanoseconds, 1e6),
            "bytes" => (SampleUnit::Bytes, 1.0),
            _ => (SampleUnit::Count, 1.0),
        };
        let (stack_col, frame_col, prefix_col) = (
            samples.col("stack"),
            stacks.col("frame"),
            stacks.col("prefix"),
        );
        let (time_col, delta_col, weight_col) = (
            samples.col("time"),
            samples.col("timeDeltas"),
            samples.col("weight"),
        );
        let mut stack: Vec<RawFrame<'_>> = Vec::new();
        // A row's stack is its chain of prefixes, the same in every sample (cut at the same
        // row): the row is a node of the thread's call tree, so the model takes a sample's
        // stack from the rows it has seen rather than look at every frame again.
        let base = self.nodes;
        self.nodes += stacks.len() as u64;
        let tree = self.nodes <= u64::from(u32::MAX);
        let mut nodes: Vec<u32> = Vec::new();
        let (mut clock, mut broken) = (0.0, 0u64);
        let mut last: Option<f64> = None;
        for i in 0..samples.len() {
            let ms = match (time_col.get(i), delta_col.get(i)) {
                (Some(t), _) => t.as_f64(),
                (None, Some(d)) => d.as_f64().map(|d| {
                    clock += d;
                    clock
                }),
                _ => None,
            };
            if let Some(ms) = ms {
                last = Some(last.map_or(ms, |l: f64| l.max(ms)));
            }
            let w = weight_col.get(i).and_then(Value::as_f64).unwrap_or(1.0);
            stack.clear();
            nodes.clear();
            let mut s = stack_col.get(i).and_then(Value::as_u64);
            // Each row's prefix comes before it: a chain that does not is cut.
            let mut below = u64::MAX;
            while let Some(row) = s.filter(|&r| r < below) {
                below = row;
                let f = frame_col.get(row as usize).and_then(Value::as_u64);
                match f.and_then(|f| frames.get(f as usize)) {
                    Some(fr) => {
                        stack.push(fr.clone());
                        if tree {
                            nodes.push((base + row) as u32);
                        }
                    }
                    None => broken += 1,
                }
                s = prefix_col.get(row as usize).and_then(Value::as_u64);
            }
            if s.is_some() {
                broken += 1;
            }
            stack.reverse();
            nodes.reverse();
            self.sink.sample(&RawSample {
                pid: pid.clone(),
                tid: tid.clone(),
                thread_name: name.map(Cow::Borrowed),
                kind: Cow::Borrowed("samples"),
                unit,
                ts: ms.map(|ms| ((ms + shift) * 1e6) as i64),
                weight: (w * scale) as i64,
                stack: &stack,
                args: Args::None,
                same_stack: false,
                nodes: &nodes,
                cpu: None,
                offset: 0,
            });
            self.n += 1;
        }
        if broken > 0 {
            self.diags
                .warn_n(crate::WarningKind::ProfileMalformed, broken, 0, || {
                    "stacks whose frame or prefix is not a row before them; cut there".into()
                });
        }
        last
    }
}

/// A thread's id: a number, or a string of digits as a number.
fn id_of(v: Option<&Value>) -> RawId<'static> {
    match v {
        Some(Value::Number(n)) => RawId::Num(n.as_i64().unwrap_or(0)),
        Some(Value::String(s)) => match s.parse() {
            Ok(n) => RawId::Num(n),
            Err(_) => RawId::Str(Cow::Owned(s.clone())),
        },
        _ => RawId::Num(0),
    }
}

/// Every frame of a thread, by index: from a raw frame's `location` string, or a
/// processed frame's function (`funcTable` name, file, line).
fn frame_list<'v>(
    frames: &Table<'v>,
    funcs: Option<&Table<'v>>,
    strings: &'v [Value],
) -> Vec<RawFrame<'v>> {
    let string =
        |v: Option<&'v Value>| -> Option<&'v str> { strings.get(v?.as_u64()? as usize)?.as_str() };
    let line_of = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok())
    };
    let (location, func, line) = (
        frames.col("location"),
        frames.col("func"),
        frames.col("line"),
    );
    (0..frames.len())
        .map(|i| {
            let line = line_of(line.get(i));
            if let Some(loc) = string(location.get(i)) {
                return split_location(loc, line);
            }
            let f = func.get(i).and_then(Value::as_u64).map(|f| f as usize);
            let Some((f, funcs)) = f.zip(funcs) else {
                return RawFrame::named(format!("(frame {i})"));
            };
            let name = string(funcs.col("name").get(f)).unwrap_or("(unnamed)");
            RawFrame {
                name: Cow::Borrowed(name),
                file: string(funcs.col("fileName").get(f)).map(Cow::Borrowed),
                line: line.or_else(|| line_of(funcs.col("lineNumber").get(f))),
            }
        })
        .collect()
}

/// A raw location `func (file:line:col)` (JavaScript) as its function, file and line; any
/// other location (a label, a native symbol or address) is the name alone.
fn split_location(loc: &str, line: Option<u32>) -> RawFrame<'_> {
    // Newer profiles end a JavaScript location with its source's index: `[3]`.
    let js = (loc.strip_suffix(']'))
        .and_then(|l| l.rsplit_once('['))
        .filter(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .map_or(loc, |(l, _)| l);
    let split = (js.strip_suffix(')'))
        .and_then(|l| l.rsplit_once(" ("))
        .and_then(|(name, place)| {
            let (rest, _col) = place.rsplit_once(':')?;
            let (file, l) = rest.rsplit_once(':')?;
            Some((name, file, l.parse::<u32>().ok()?))
        });
    match split {
        Some((name, file, l)) => RawFrame {
            name: Cow::Borrowed(name),
            file: Some(Cow::Borrowed(file)),
            line: line.or(Some(l)),
        },
        None => RawFrame {
            name: Cow::Borrowed(loc),
            file: None,
            line,
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sampled::tests::Samples;
    use crate::sampled::{sniff, ProfileFormat};

    /// A raw profile: a main thread (main -> a JS function) and, nested as JSON text, a
    /// subprocess that started 1000 ms later.
    pub(crate) const RAW: &str = r#"{"meta":{"version":27,"interval":1,"startTime":5000,"stackwalk":1},
      "threads":[{"name":"GeckoMain","processName":"Parent","pid":"10","tid":11,
        "samples":{"schema":{"stack":0,"time":1},"data":[[1,2.5],[0,3.5],[null,4]]},
        "stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1]]},
        "frameTable":{"schema":{"location":0,"line":1},"data":[[0],[1,null]]},
        "stringTable":["main","run (file:///p.js:7:3)[2]"]}],
      "processes":["{\"meta\":{\"interval\":1,\"startTime\":6000},\"threads\":[{\"name\":\"W\",\"pid\":20,\"tid\":21,\"samples\":{\"schema\":{\"stack\":0,\"time\":1},\"data\":[[0,1]]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[[null,0]]},\"frameTable\":{\"schema\":{\"location\":0},\"data\":[[0]]},\"stringTable\":[\"sub\"]}]}"]}"#;

    /// The processed format: columns, functions, shared strings, time deltas, weights.
    pub(crate) const PROCESSED: &str = r#"{"meta":{"interval":1,"startTime":0,"preprocessedProfileVersion":50},
      "shared":{"stringArray":["main","f","m.js"]},
      "threads":[{"name":"GeckoMain","pid":"1","tid":2,"processName":"Web Content",
        "samples":{"stack":[0,1,1],"timeDeltas":[1,1,2],"weight":[1,2,3],"weightType":"tracing-ms","length":3},
        "stackTable":{"frame":[0,1],"prefix":[null,0],"length":2},
        "frameTable":{"func":[0,1],"line":[null,9],"length":2},
        "funcTable":{"name":[0,1],"fileName":[null,2],"lineNumber":[1,8],"length":2}}]}"#;

    fn read(text: &str) -> (Samples, Diagnostics) {
        Samples::read(decode, text)
    }

    #[test]
    fn raw_profiles_with_nested_processes() {
        assert_eq!(sniff(RAW.as_bytes()), Some(ProfileFormat::Gecko));
        let (s, d) = read(RAW);
        assert_eq!(
            s.stacks(),
            vec![
                ("main;run".into(), 1),
                ("main".into(), 1),
                (String::new(), 1),
                ("sub".into(), 1)
            ]
        );
        let ts: Vec<_> = s.0.iter().map(|x| x.ts).collect();
        // The subprocess's 1 ms is 1001 ms on the parent's clock.
        assert_eq!(
            ts,
            vec![
                Some(2_500_000),
                Some(3_500_000),
                Some(4_000_000),
                Some(1_001_000_000)
            ]
        );
        assert_eq!(
            s.0[0].stack[1],
            ("run".into(), Some("file:///p.js".into()), Some(7))
        );
        assert_eq!(
            (s.0[0].pid.clone(), s.0[0].tid.clone()),
            (RawId::Num(10), RawId::Num(11))
        );
        assert_eq!(s.0[3].thread_name.as_deref(), Some("W"));
        assert_eq!(d.total(), 0);
        // Inside a DevTools recording.
        let wrapped = format!(r#"{{"version":3,"profile":{RAW}}}"#);
        assert_eq!(sniff(wrapped.as_bytes()), Some(ProfileFormat::Gecko));
        assert_eq!(read(&wrapped).0.stacks(), s.stacks());
    }

    #[test]
    fn processed_profiles_with_functions_and_weights() {
        assert_eq!(sniff(PROCESSED.as_bytes()), Some(ProfileFormat::Gecko));
        let (s, _) = read(PROCESSED);
        let got: Vec<_> = (s.0.iter()).map(|x| (x.ts, x.weight, x.unit)).collect();
        let ns = SampleUnit::Nanoseconds;
        assert_eq!(
            got,
            vec![
                (Some(1_000_000), 1_000_000, ns),
                (Some(2_000_000), 2_000_000, ns),
                (Some(4_000_000), 3_000_000, ns)
            ]
        );
        assert_eq!(
            s.0[1].stack,
            vec![
                ("main".into(), None, Some(1)),
                ("f".into(), Some("m.js".into()), Some(9))
            ]
        );
        // Older versions: strings per thread, absolute times.
        let old = PROCESSED
            .replace(r#""shared":{"stringArray":["main","f","m.js"]},"#, "")
            .replace(r#""timeDeltas":[1,1,2]"#, r#""time":[1,2,4]"#)
            .replace(
                r#""processName""#,
                r#""stringArray":["main","f","m.js"],"processName""#,
            );
        let (o, _) = read(&old);
        assert_eq!(o.0, s.0);
    }

    #[test]
    fn hostile_profiles() {
        for bad in [
            &b"{\"meta\":"[..],
            b"{\"meta\":{}}",
            b"{\"meta\":1,\"threads\":[]}",
            b"[]",
        ] {
            let mut d = Diagnostics::default();
            assert!(decode(bad, &mut Samples::default(), &mut d).is_err());
        }
        // A prefix that is not before its row (a cycle), a frame out of range, a length
        // far past the columns, a thread that is not an object, a subprocess that is not
        // JSON: cut, skipped and counted, never a hang.
        let odd = r#"{"meta":{"interval":1},"threads":[7,"[",
          {"samples":{"stack":[1,0],"time":[1,2],"length":1000000000000},
           "stackTable":{"frame":[0,5],"prefix":[1,0]},"frameTable":{"location":[0]},
           "stringTable":["x"]}],"processes":["{"]}"#;
        let (s, d) = read(odd);
        assert_eq!(s.stacks(), vec![("x".into(), 1), ("x".into(), 1)]);
        assert!(d.total() >= 4, "{d:?}");
        // Cut anywhere, the real fixture's start never panics.
        for cut in (0..RAW.len()).step_by(7) {
            let _ = decode(
                &RAW.as_bytes()[..cut],
                &mut Samples::default(),
                &mut Diagnostics::default(),
            );
        }
    }
}
