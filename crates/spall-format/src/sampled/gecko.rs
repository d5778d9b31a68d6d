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
//!
//! The file is read in one pass to its threads' tables (`gecko_doc`), each table's rows
//! then straight into typed columns (`gecko_table`), never as a JSON document; the stream
//! (`gecko_stream`) builds the same `Thread`s as its rows arrive and hands them to the
//! same `Cx`.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::gecko_doc::{Level, Node};
use super::gecko_markers::{self, Place};
use super::gecko_table::{self as table, value, Members, Strings, Table};
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
    let mut top = Node::parse(b, Level::Root)
        .map_err(|e| bad(format!("a Gecko profile that is not valid JSON: {e}"), 0))?;
    let inner = top.take("profile").filter(|p| p.get("meta").is_some());
    let root = inner.unwrap_or(top);
    let meta = root.get("meta").and_then(Node::text).map(value);
    let meta = (meta.as_ref().and_then(Value::as_object))
        .ok_or_else(|| bad("a Gecko profile with no meta", 0))?;
    let shared = (root.get("shared").and_then(Node::text)).and_then(Strings::shared);
    let mut cx = Cx::new(meta, shared.as_ref(), sink, diags);
    cx.profile(root, 0)?;
    Ok(cx.n)
}

/// A thread's tables and names, read into columns.
#[derive(Debug, Default)]
pub(super) struct Thread {
    name: Option<String>,
    process_name: Option<String>,
    pid: Option<Value>,
    tid: Option<Value>,
    samples: Option<Table>,
    stacks: Option<Table>,
    frames: Option<Table>,
    funcs: Option<Table>,
    markers: Option<Table>,
    /// Whether it has a `markers` member, a table or not.
    has_markers: bool,
    string_table: Option<Strings>,
    string_array: Option<Strings>,
}

impl Thread {
    /// The members read as values.
    pub(super) const NAMES: [&'static str; 4] = ["name", "processName", "pid", "tid"];

    /// One of [`NAMES`](Self::NAMES).
    pub(super) fn name(&mut self, key: &str, v: Value) {
        let s = || v.as_str().map(String::from);
        match key {
            "name" => self.name = s(),
            "processName" => self.process_name = s(),
            "pid" => self.pid = Some(v),
            "tid" => self.tid = Some(v),
            _ => {}
        }
    }

    /// A table member ([`thread_table`](table::thread_table)): `None` where it is not a table.
    pub(super) fn table(&mut self, key: &str, t: Option<Table>) {
        match key {
            "samples" => self.samples = t,
            "stackTable" => self.stacks = t,
            "frameTable" => self.frames = t,
            "funcTable" => self.funcs = t,
            "markers" => (self.markers, self.has_markers) = (t, true),
            _ => {}
        }
    }

    /// `stringTable` or `stringArray`: `None` where it is not an array.
    pub(super) fn strings(&mut self, key: &str, s: Option<Strings>) {
        match key {
            "stringTable" => self.string_table = s,
            "stringArray" => self.string_array = s,
            _ => {}
        }
    }

    /// A thread read whole; a member given twice counts by its last value.
    fn of(n: Node<'_>) -> Thread {
        let mut t = Thread::default();
        let Node::Obj(m) = n else {
            return t;
        };
        for (k, v) in m {
            if let Some(spec) = table::thread_table(&k) {
                let m = (v.members().iter()).filter_map(|(k, v)| Some((k.clone(), v.text()?)));
                let table = matches!(v, Node::Obj(_))
                    .then(|| Table::of_members(spec, &Members::new(m.collect())));
                t.table(&k, table.flatten());
            } else if let Node::Strings(s) = v {
                t.strings(&k, s);
            } else if Thread::NAMES.contains(&&*k) {
                t.name(&k, v.text().map_or(Value::Null, value));
            }
        }
        t
    }
}

pub(super) struct Cx<'s, 'v, S> {
    pub(super) sink: &'s mut S,
    pub(super) diags: &'s mut Diagnostics,
    /// The root's `meta.startTime` (ms).
    pub(super) start: f64,
    pub(super) processed: bool,
    shared: Option<&'v Strings>,
    /// The root's `meta.categories`, which markers name by index.
    categories: Option<&'v [Value]>,
    /// Samples and markers handed over.
    pub(super) n: u64,
    /// The first call-tree node ([`RawSample::nodes`]) of the next thread's stack table:
    /// each thread's rows are numbered after the previous ones', so a node names one row
    /// of one thread for the whole decode.
    pub(super) nodes: u64,
}

impl<'s, 'v, S: EventSink> Cx<'s, 'v, S> {
    /// The root's context: its `meta` (an object) and `shared.stringArray`.
    pub(super) fn new(
        meta: &'v Map<String, Value>,
        shared: Option<&'v Strings>,
        sink: &'s mut S,
        diags: &'s mut Diagnostics,
    ) -> Self {
        Cx {
            sink,
            diags,
            start: meta.get("startTime").and_then(Value::as_f64).unwrap_or(0.0),
            processed: meta.get("preprocessedProfileVersion").is_some(),
            shared,
            categories: meta
                .get("categories")
                .and_then(Value::as_array)
                .map(Vec::as_slice),
            n: 0,
            nodes: 0,
        }
    }
}

impl<S: EventSink> Cx<'_, '_, S> {
    /// How far a (sub)profile's times move, given its own `meta.startTime`.
    pub(super) fn shift(&self, own_start: Option<f64>) -> f64 {
        // Raw subprocess times count from their own start.
        if self.processed {
            0.0
        } else {
            own_start.map_or(0.0, |s| s - self.start)
        }
    }

    /// One (sub)profile: its threads, then its subprocesses.
    fn profile(&mut self, mut p: Node<'_>, depth: u32) -> Result<(), Error> {
        let meta = p.get("meta").and_then(Node::text).map(value);
        let shift = self.shift(meta.as_ref().and_then(start_of));
        let threads = match p.take("threads") {
            Some(Node::Arr(t)) => Some(t),
            _ => None,
        };
        if threads.is_none() && depth == 0 {
            return Err(bad("a Gecko profile with no threads", 0));
        }
        for t in threads.into_iter().flatten() {
            self.thread_node(t, shift);
        }
        if let Some(Node::Arr(subs)) = p.take("processes") {
            for sub in subs {
                if depth >= MAX_NESTING {
                    self.skip("processes nested too deep");
                    break;
                }
                self.subprocess_node(sub, depth + 1)?;
            }
        }
        Ok(())
    }

    /// One of `threads`.
    fn thread_node(&mut self, t: Node<'_>, shift: f64) {
        match t {
            Node::Obj(_) => self.thread(&Thread::of(t), shift),
            // Old profiles embed some threads as JSON text.
            Node::Str(s) => match Node::parse(s.as_bytes(), Level::Thread) {
                Ok(n @ Node::Obj(_)) => self.thread(&Thread::of(n), shift),
                _ => self.skip("a thread given as text that is not a JSON object"),
            },
            _ => self.skip("a thread that is not an object"),
        }
    }

    /// One of `threads` that is not a thread being read as its rows arrive.
    pub(super) fn thread_raw(&mut self, t: &RawValue, shift: f64) {
        let n = Node::parse(t.get().as_bytes(), Level::Thread);
        self.thread_node(n.unwrap_or(Node::Other), shift);
    }

    /// One of `processes` at `depth`: a profile, or one given as JSON text.
    fn subprocess_node(&mut self, sub: Node<'_>, depth: u32) -> Result<(), Error> {
        let Node::Str(s) = sub else {
            return self.profile(sub, depth);
        };
        match Node::parse(s.as_bytes(), Level::Profile) {
            Ok(n) => self.profile(n, depth),
            Err(_) => {
                self.skip("a subprocess given as text that is not JSON");
                Ok(())
            }
        }
    }

    /// One of `processes`, as its text, at `depth`.
    pub(super) fn subprocess(&mut self, sub: &RawValue, depth: u32) -> Result<(), Error> {
        let n = Node::parse(sub.get().as_bytes(), Level::Profile);
        self.subprocess_node(n.unwrap_or(Node::Other), depth)
    }

    fn skip(&mut self, what: &str) {
        warn(self.diags, 0, || format!("{what}; skipped"));
    }

    /// One thread's samples, then its markers.
    pub(super) fn thread(&mut self, t: &Thread, shift: f64) {
        let empty = Strings::default();
        let strings = (t.string_table.as_ref())
            .or(t.string_array.as_ref())
            .or(self.shared)
            .unwrap_or(&empty);
        let pid = id_of(t.pid.as_ref());
        let tid = id_of(t.tid.as_ref());
        let meta = |key: &str, name: &str| RawEvent {
            ph: Phase::METADATA,
            name: Cow::Owned(key.to_string()),
            pid: pid.clone(),
            tid: tid.clone(),
            args: Args::Json(Cow::Owned(serde_json::json!({ "name": name }).to_string())),
            ..RawEvent::default()
        };
        if let Some(p) = &t.process_name {
            self.sink.event(&meta("process_name", p));
        }
        let last = self.samples(t, strings, (&pid, &tid), shift);
        // A thread of markers alone: its name, which samples would have given.
        if let (None, Some(name)) = (last, &t.name) {
            self.sink.event(&meta("thread_name", name));
        }
        let Some(markers) = &t.markers else {
            return;
        };
        let at = Place {
            strings,
            categories: self.categories,
            pid: &pid,
            tid: &tid,
            shift,
            last: last.unwrap_or(f64::MIN),
        };
        self.n += gecko_markers::emit(markers, &at, self.sink, self.diags);
    }

    /// One thread's samples, each with its stack; the last sample's time (ms), if any.
    fn samples(
        &mut self,
        t: &Thread,
        strings: &Strings,
        (pid, tid): (&RawId<'static>, &RawId<'static>),
        shift: f64,
    ) -> Option<f64> {
        let (Some(samples), Some(stacks), Some(frames)) = (&t.samples, &t.stacks, &t.frames) else {
            if !t.has_markers {
                self.skip("a thread with no samples, stackTable or frameTable");
            }
            return None;
        };
        let frames = frame_list(frames, t.funcs.as_ref(), strings);
        let name = t.name.as_deref();
        let (unit, scale) = match samples.weight_type.as_deref() {
            Some("tracing-ms") => (SampleUnit::Nanoseconds, 1e6),
            Some("bytes") => (SampleUnit::Bytes, 1.0),
            _ => (SampleUnit::Count, 1.0),
        };
        let (stack_col, frame_col, prefix_col) =
            (samples.ix("stack"), stacks.ix("frame"), stacks.ix("prefix"));
        let (time_col, delta_col, weight_col) = (
            samples.num("time"),
            samples.num("timeDeltas"),
            samples.num("weight"),
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
            // A time that is there but not a number is none, as is a time delta.
            let ms = match (time_col.has(i), delta_col.get(i)) {
                (true, _) => time_col.get(i),
                (false, Some(d)) => {
                    clock += d;
                    Some(clock)
                }
                _ => None,
            };
            if let Some(ms) = ms {
                last = Some(last.map_or(ms, |l: f64| l.max(ms)));
            }
            let w = weight_col.get(i).unwrap_or(1.0);
            stack.clear();
            nodes.clear();
            let mut s = stack_col.get(i);
            // Each row's prefix comes before it: a chain that does not is cut.
            let mut below = u64::MAX;
            while let Some(row) = s.filter(|&r| r < below) {
                below = row;
                let f = frame_col.get(row as usize);
                match f.and_then(|f| frames.get(f as usize)) {
                    Some(fr) => {
                        stack.push(fr.clone());
                        if tree {
                            nodes.push((base + row) as u32);
                        }
                    }
                    None => broken += 1,
                }
                s = prefix_col.get(row as usize);
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
                same_outer: 0,
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

/// A (sub)profile's `meta.startTime`.
pub(super) fn start_of(meta: &Value) -> Option<f64> {
    meta.get("startTime")?.as_f64()
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
    frames: &Table,
    funcs: Option<&Table>,
    strings: &'v Strings,
) -> Vec<RawFrame<'v>> {
    let string = |i: Option<u64>| strings.get(i?);
    let (location, func, line) = (
        frames.ix("location"),
        frames.ix("func"),
        frames.lines("line"),
    );
    (0..frames.len())
        .map(|i| {
            let line = line.get(i);
            if let Some(loc) = string(location.get(i)) {
                return split_location(loc, line);
            }
            let f = func.get(i).map(|f| f as usize);
            let Some((f, funcs)) = f.zip(funcs) else {
                return RawFrame::named(format!("(frame {i})"));
            };
            let name = string(funcs.ix("name").get(f)).unwrap_or("(unnamed)");
            RawFrame {
                name: Cow::Borrowed(name),
                file: string(funcs.ix("fileName").get(f)).map(Cow::Borrowed),
                line: line.or_else(|| funcs.lines("lineNumber").get(f)),
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

    /// Cells read into typed columns as a JSON value of them reads: `-0` and `1.0` no
    /// index (serde_json reads them as floats), an index past any table cut and counted, a line that fills `u32`, a string
    /// where a string index points; a time or marker start that is there but not a number
    /// is none (no time delta, no `time` taken instead); `data` before its `schema`.
    #[test]
    fn cells_read_as_json_values_read_them() {
        let p = r#"{"meta":{"interval":1,"startTime":0,"stackwalk":1},"threads":[
          {"samples":{"data":[[0,1],[-0,2],[1.0,3],[99999999999,4],[2,5]],"schema":{"stack":0,"time":1}},
           "stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0],[0,1],[1,2]]},
           "frameTable":{"schema":{"location":0,"line":1},"data":[[0,4294967295],[1,-2],[2,3.0]]},
           "stringTable":["a","b",7],
           "markers":{"schema":{"name":0,"startTime":1,"time":2},"data":[[0,"x",5],[1,null,6]]}},
          {"samples":{"stack":[0,0,0],"time":[1,"x",null],"timeDeltas":[1,1,1],"length":3},
           "stackTable":{"frame":[0],"prefix":[null]},"frameTable":{"location":[0]},
           "stringTable":["c"]}]}"#;
        let (s, d) = read(p);
        let one = |s: &str| (s.to_string(), 1);
        assert_eq!(
            s.stacks(),
            [
                one("a"),
                one(""),
                one(""),
                one(""),
                one("a;b;(frame 2)"),
                one("c"),
                one("c"),
                one("c")
            ]
        );
        let ms = |m: i64| Some(m * 1_000_000);
        let ts: Vec<_> = s.0.iter().map(|x| x.ts).collect();
        assert_eq!(ts, [ms(1), ms(2), ms(3), ms(4), ms(5), ms(1), None, ms(1)]);
        assert_eq!(s.0[0].stack[0], ("a".into(), None, Some(u32::MAX)));
        assert_eq!(s.0[4].stack[1], ("b".into(), None, None));
        // The cut stack, and the marker whose start is a string.
        assert_eq!(d.total(), 2, "{d:?}");
        let mut c = crate::event::Collect::default();
        decode(p.as_bytes(), &mut c, &mut Diagnostics::default()).unwrap();
        let marks: Vec<_> = (c.0.iter())
            .filter(|e| e.ph != Phase::METADATA)
            .map(|e| (e.ph.0, e.name.to_string(), e.ts))
            .collect();
        assert_eq!(marks, [(b'i', "b".to_string(), 6_000_000)]);
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
