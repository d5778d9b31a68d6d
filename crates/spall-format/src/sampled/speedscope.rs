//! speedscope's file format: `{shared: {frames: [{name, file, line}]}, profiles: [...]}`,
//! each profile `sampled` (`samples`: stacks of frame indices, outermost first, and their
//! `weights`) or `evented` (`events`: `O`pen and `C`lose of a frame `at` a time), with a
//! `unit` (`none`, `bytes`, or a time unit) and a `startValue`.
//!
//! Each profile is its own thread (pid 0, tid its index + 1) named after it. A sampled
//! profile in a time unit is laid out as speedscope lays it out: each sample starts where
//! the previous one ended (from `startValue`) and lasts its weight, both in nanoseconds; in
//! `none` or `bytes` its samples have no time. An evented profile's opens and closes are
//! spans (`B`/`E` events), as its frames are.

use std::borrow::Cow;

use serde_json::Value;

use super::walk::{keys, Feed, Seg, Visitor, Walk, Walked, Want};
use super::{bad, warn, RawFrame, RawSample, SampleUnit};
use crate::diag::Diagnostics;
use crate::error::Error;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// Whether a JSON object (its text after `{`) looks like a speedscope file.
pub(crate) fn looks_like(after_brace: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(after_brace, k).is_some();
    has(b"speedscope.app/file-format-schema") || (has(b"\"shared\"") && has(b"\"profiles\""))
}

/// A unit's name as (unit, nanoseconds per value for a time unit).
fn unit(name: &str) -> Option<(SampleUnit, Option<f64>)> {
    Some(match name {
        "none" => (SampleUnit::Count, None),
        "bytes" => (SampleUnit::Bytes, None),
        "nanoseconds" => (SampleUnit::Nanoseconds, Some(1.0)),
        "microseconds" => (SampleUnit::Nanoseconds, Some(1e3)),
        "milliseconds" => (SampleUnit::Nanoseconds, Some(1e6)),
        "seconds" => (SampleUnit::Nanoseconds, Some(1e9)),
        _ => return None,
    })
}

/// Decodes every profile into `sink`; the number of samples and events.
pub fn decode<S: EventSink>(b: &[u8], sink: &mut S, diags: &mut Diagnostics) -> Result<u64, Error> {
    let v: Value = serde_json::from_slice(b)
        .map_err(|e| bad(format!("a speedscope file that is not valid JSON: {e}"), 0))?;
    let frames: Vec<RawFrame<'_>> = (v.pointer("/shared/frames").and_then(Value::as_array))
        .ok_or_else(|| bad("a speedscope file with no shared.frames", 0))?
        .iter()
        .map(frame)
        .collect();
    let profiles = (v.get("profiles").and_then(Value::as_array))
        .ok_or_else(|| bad("a speedscope file with no profiles", 0))?;
    let mut n = 0;
    for (i, p) in profiles.iter().enumerate() {
        let mut prof = Prof {
            name: p.get("name").and_then(Value::as_str).map(Into::into),
            unit: p.get("unit").and_then(Value::as_str).map(Into::into),
            kind: p.get("type").and_then(Value::as_str).map(Into::into),
            start: p.get("startValue").and_then(Value::as_f64),
            ..Prof::default()
        };
        let empty = Vec::new();
        for s in p.get("samples").and_then(Value::as_array).unwrap_or(&empty) {
            prof.sample(s, frames.len());
        }
        for w in p.get("weights").and_then(Value::as_array).unwrap_or(&empty) {
            prof.weight(w);
        }
        for e in p.get("events").and_then(Value::as_array).unwrap_or(&empty) {
            prof.event(e, frames.len());
        }
        n += prof.emit(i, &frames, sink, diags);
    }
    Ok(n)
}

/// A frame of `shared.frames`.
pub(crate) fn frame(f: &Value) -> RawFrame<'_> {
    RawFrame {
        name: Cow::Borrowed(f.get("name").and_then(Value::as_str).unwrap_or("(unnamed)")),
        file: f.get("file").and_then(Value::as_str).map(Cow::Borrowed),
        line: f
            .get("line")
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok()),
    }
}

/// An evented profile's event: `O`pen or `C`lose of a frame at a time, or the text of one
/// that is not (kept for the first few, which a warning may show).
#[derive(Debug)]
enum Ev {
    Ok { ph: Phase, at: f64, frame: u32 },
    Bad(String),
}

/// How many of a profile's bad events keep their text: no more can be a warning's example.
const BAD_TEXTS: u64 = crate::diag::EXAMPLES_PER_KIND;

/// One profile as read, its frames as indices into `shared.frames` (checked): what the
/// whole decode reads from the document, and the stream as the profile's bytes arrive.
#[derive(Debug, Default)]
pub(crate) struct Prof {
    pub(crate) name: Option<String>,
    pub(crate) unit: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) start: Option<f64>,
    /// Each sample's frames, one after the other, and where each sample's end.
    stacks: Vec<u32>,
    ends: Vec<usize>,
    /// Frames that are not indices into `shared.frames`.
    bad_frames: u64,
    /// Each sample's weight (1 for one that is not a number).
    weights: Vec<f64>,
    events: Vec<Ev>,
    bad_events: u64,
}

impl Prof {
    /// The next of `samples`; `frames`: how many `shared.frames` there are.
    pub(crate) fn sample(&mut self, s: &Value, frames: usize) {
        for f in s.as_array().into_iter().flatten() {
            match f.as_u64().filter(|&f| f < frames as u64) {
                Some(f) => self.stacks.push(f as u32),
                None => self.bad_frames += 1,
            }
        }
        self.ends.push(self.stacks.len());
    }

    /// A sample's text as `sample` reads it, where it is plain: `[` indices `,` ... `]`,
    /// in range, each digits alone (no sign, fraction, exponent or leading zero: those go
    /// through the document); whether it was.
    pub(crate) fn fast_sample(&mut self, b: &[u8], frames: usize) -> bool {
        let Some(inner) = b.strip_prefix(b"[").and_then(|b| b.strip_suffix(b"]")) else {
            return false;
        };
        let len = self.stacks.len();
        // JSON's whitespace only (trim_ascii takes form feeds too).
        let ws = |f: &[u8]| {
            f.iter()
                .all(|c| c.is_ascii_digit() || b" \t\n\r".contains(c))
        };
        if inner.trim_ascii().is_empty() {
            if !ws(inner) {
                return false;
            }
        } else {
            for f in inner.split(|&c| c == b',') {
                let d = f.trim_ascii();
                let ok = !d.is_empty()
                    && d.len() <= 9
                    && d.iter().all(u8::is_ascii_digit)
                    && (d[0] != b'0' || d.len() == 1);
                let i = || {
                    d.iter()
                        .fold(0usize, |a, &c| a * 10 + usize::from(c - b'0'))
                };
                let i = if ok && ws(f) { i() } else { usize::MAX };
                if i >= frames {
                    self.stacks.truncate(len);
                    return false;
                }
                self.stacks.push(i as u32);
            }
        }
        self.ends.push(self.stacks.len());
        true
    }

    /// The next of `weights`.
    pub(crate) fn weight(&mut self, w: &Value) {
        self.weights.push(w.as_f64().unwrap_or(1.0));
    }

    /// The next of `events`.
    pub(crate) fn event(&mut self, e: &Value, frames: usize) {
        let ph = match e.get("type").and_then(Value::as_str) {
            Some("O") => Phase::BEGIN,
            Some("C") => Phase::END,
            _ => Phase::MISSING,
        };
        let at = e.get("at").and_then(Value::as_f64);
        let frame = e.get("frame").and_then(Value::as_u64);
        let frame = frame.filter(|&f| f < frames as u64);
        self.events.push(match (at, frame, ph == Phase::MISSING) {
            (Some(at), Some(f), false) => Ev::Ok {
                ph,
                at,
                frame: f as u32,
            },
            _ => {
                self.bad_events += 1;
                Ev::Bad(if self.bad_events <= BAD_TEXTS {
                    e.to_string()
                } else {
                    String::new()
                })
            }
        });
    }

    /// Hands the profile, the `i`th, to `sink`; its samples and events.
    pub(crate) fn emit<S: EventSink>(
        &self,
        i: usize,
        frames: &[RawFrame<'_>],
        sink: &mut S,
        diags: &mut Diagnostics,
    ) -> u64 {
        let unit_name = self.unit.as_deref().unwrap_or("none");
        let Some((unit, scale)) = unit(unit_name) else {
            warn(diags, 0, || {
                format!("profile {i}: unknown unit {unit_name:?}; skipped")
            });
            return 0;
        };
        let cx = Profile {
            tid: i as i64 + 1,
            name: self.name.as_deref(),
            unit,
            scale,
            start: self.start.unwrap_or(0.0),
            frames,
        };
        match self.kind.as_deref() {
            Some("sampled") => cx.sampled(self, sink, diags),
            Some("evented") => cx.evented(self, sink, diags),
            other => {
                warn(diags, 0, || {
                    format!("profile {i}: unknown type {other:?}; skipped")
                });
                0
            }
        }
    }
}

/// One profile's thread and unit.
struct Profile<'a, 'f> {
    tid: i64,
    name: Option<&'a str>,
    unit: SampleUnit,
    scale: Option<f64>,
    start: f64,
    frames: &'f [RawFrame<'f>],
}

impl Profile<'_, '_> {
    fn sampled<S: EventSink>(&self, p: &Prof, sink: &mut S, diags: &mut Diagnostics) -> u64 {
        let mut clock = self.start;
        let mut stack = Vec::new();
        let mut from = 0;
        for (i, &end) in p.ends.iter().enumerate() {
            let w = p.weights.get(i).copied().unwrap_or(1.0);
            stack.clear();
            let frames = p.stacks[from..end].iter();
            // Borrowed, even where the frames are owned (streamed): no copy a frame.
            stack.extend(frames.map(|&f| {
                let fr = &self.frames[f as usize];
                RawFrame {
                    name: Cow::Borrowed(&*fr.name),
                    file: fr.file.as_deref().map(Cow::Borrowed),
                    line: fr.line,
                }
            }));
            from = end;
            let (ts, weight) = match self.scale {
                Some(ns) => (Some((clock * ns) as i64), (w * ns) as i64),
                None => (None, w as i64),
            };
            clock += w;
            sink.sample(&RawSample {
                pid: RawId::Num(0),
                tid: RawId::Num(self.tid),
                thread_name: self.name.map(Cow::Borrowed),
                kind: Cow::Borrowed("samples"),
                unit: self.unit,
                ts,
                weight,
                stack: &stack,
                args: crate::event::Args::None,
                same_stack: false,
                same_outer: 0,
                nodes: &[],
                cpu: None,
                offset: 0,
            });
        }
        if p.bad_frames > 0 {
            diags.warn_n(
                crate::WarningKind::ProfileMalformed,
                p.bad_frames,
                0,
                || "sample frames that are not indices into shared.frames; left out".into(),
            );
        }
        p.ends.len() as u64
    }

    fn evented<S: EventSink>(&self, p: &Prof, sink: &mut S, diags: &mut Diagnostics) -> u64 {
        let ns = self.scale.unwrap_or(1.0);
        let mut n = 0;
        if let Some(name) = self.name {
            let args = serde_json::json!({ "name": name }).to_string();
            sink.event(&RawEvent {
                ph: Phase::METADATA,
                name: Cow::Borrowed("thread_name"),
                pid: RawId::Num(0),
                tid: RawId::Num(self.tid),
                args: Args::Json(Cow::Owned(args)),
                ..RawEvent::default()
            });
        }
        for e in &p.events {
            let &Ev::Ok { ph, at, frame } = e else {
                let Ev::Bad(e) = e else { continue };
                warn(diags, 0, || {
                    format!("an evented profile's event that is not O or C of a frame at a time: {e}; skipped")
                });
                continue;
            };
            sink.event(&RawEvent {
                ph,
                name: self.frames[frame as usize].name.clone(),
                ts: (at * ns) as i64,
                pid: RawId::Num(0),
                tid: RawId::Num(self.tid),
                ..RawEvent::default()
            });
            n += 1;
        }
        n
    }
}

/// A speedscope file read as its bytes arrive ([`walk`](super::walk)): each frame of
/// `shared.frames`, then each profile, its samples, weights and events one at a time,
/// handed over as the profile ends (to a sink of its own). It gives up where the whole
/// decode might read otherwise: `profiles` before `shared.frames`, a part of another
/// type than the one read, and the walk's own cases.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    walk: Walk,
    frames: Vec<RawFrame<'static>>,
    frames_done: bool,
    profiles_done: bool,
    prof: Prof,
    /// The next profile's index.
    index: usize,
    /// Samples and events handed over.
    pub(crate) n: u64,
}

impl Walked for Stream {
    fn walk(&self) -> &Walk {
        &self.walk
    }

    fn walk_mut(&mut self) -> &mut Walk {
        &mut self.walk
    }
}

fn parse(b: &[u8]) -> Result<Value, ()> {
    serde_json::from_slice(b).map_err(drop)
}

impl<S: EventSink> Visitor for Feed<'_, Stream, S> {
    fn want(&mut self, path: &[Seg]) -> Want {
        let (k, n) = keys(path);
        match k[..n.min(4)] {
            _ if n > 4 => Want::Skip,
            [] | ["shared"] => Want::Members,
            ["shared", "frames"] => Want::Items,
            ["shared", "frames", _] => Want::Whole,
            ["profiles"] if !self.st.frames_done => Want::GiveUp,
            ["profiles"] => Want::Items,
            ["profiles", _] => Want::Members,
            ["profiles", _, "name" | "unit" | "type" | "startValue"] => Want::Whole,
            ["profiles", _, "samples" | "weights" | "events"] => Want::Items,
            ["profiles", _, "samples" | "weights" | "events", _] => Want::Whole,
            _ => Want::Skip,
        }
    }

    fn value(&mut self, path: &[Seg], b: &[u8]) -> Result<(), ()> {
        let (k, n) = keys(path);
        let frames = self.st.frames.len();
        let st = &mut *self.st;
        let p = &mut st.prof;
        // The common cases without a document: a stack of indices, a number.
        match k[..n] {
            ["profiles", _, "samples", _] if p.fast_sample(b, frames) => return Ok(()),
            ["profiles", _, "weights", _] => {
                if let Ok(w) = serde_json::from_slice::<f64>(b) {
                    p.weights.push(w);
                    return Ok(());
                }
            }
            _ => {}
        }
        let v = parse(b)?;
        let text = |v: &Value| v.as_str().map(Into::into);
        match k[..n] {
            ["shared", "frames", _] => {
                let f = frame(&v);
                st.frames.push(RawFrame {
                    name: Cow::Owned(f.name.into_owned()),
                    file: f.file.map(|f| Cow::Owned(f.into_owned())),
                    line: f.line,
                });
            }
            ["profiles", _, "name"] => p.name = text(&v),
            ["profiles", _, "unit"] => p.unit = text(&v),
            ["profiles", _, "type"] => p.kind = text(&v),
            ["profiles", _, "startValue"] => p.start = v.as_f64(),
            // Not arrays: none.
            ["profiles", _, "samples" | "weights" | "events"] => {}
            ["profiles", _, "samples", _] => p.sample(&v, frames),
            ["profiles", _, "weights", _] => p.weight(&v),
            ["profiles", _, "events", _] => p.event(&v, frames),
            _ => return Err(()),
        }
        Ok(())
    }

    fn close(&mut self, path: &[Seg]) -> Result<(), ()> {
        let (k, n) = keys(path);
        let st = &mut *self.st;
        match k[..n.min(4)] {
            _ if n > 4 => {}
            ["shared", "frames"] => st.frames_done = true,
            ["profiles"] => st.profiles_done = true,
            ["profiles", _] => {
                let p = std::mem::take(&mut st.prof);
                let mut sink = (self.new_sink)();
                st.n += p.emit(st.index, &st.frames, &mut sink, self.diags);
                self.sinks.push(sink);
                st.index += 1;
            }
            [] if !(st.frames_done && st.profiles_done) => return Err(()),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampled::tests::Samples;
    use crate::Collect;

    const FILE: &str = r#"{"$schema":"https://www.speedscope.app/file-format-schema.json",
      "shared":{"frames":[{"name":"main","file":"m.c","line":3},{"name":"f"}]},
      "profiles":[
        {"type":"sampled","name":"cpu","unit":"milliseconds","startValue":1,"endValue":4,
         "samples":[[0],[0,1],[0,1,9]],"weights":[1,2,0.5]},
        {"type":"sampled","name":"heap","unit":"bytes","startValue":0,"endValue":0,
         "samples":[[0,1]],"weights":[4096]},
        {"type":"evented","name":"ev","unit":"microseconds","startValue":0,"endValue":5,
         "events":[{"type":"O","frame":0,"at":0},{"type":"O","frame":1,"at":1},
                   {"type":"C","frame":1,"at":2},{"type":"C","frame":0,"at":5},{"type":"X"}]}]}"#;

    #[test]
    fn sampled_profiles_in_time_and_bytes() {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        decode(FILE.as_bytes(), &mut s, &mut d).unwrap();
        assert_eq!(
            s.stacks(),
            vec![
                ("main".into(), 1_000_000),
                ("main;f".into(), 2_000_000),
                ("main;f".into(), 500_000),
                ("main;f".into(), 4096)
            ]
        );
        let ts: Vec<_> = s.0.iter().map(|x| x.ts).collect();
        assert_eq!(
            ts,
            vec![Some(1_000_000), Some(2_000_000), Some(4_000_000), None]
        );
        assert_eq!(
            (s.0[3].unit, s.0[3].tid.clone()),
            (SampleUnit::Bytes, RawId::Num(2))
        );
        assert_eq!(
            s.0[0].stack[0],
            ("main".into(), Some("m.c".into()), Some(3))
        );
        // The frame index 9 and the event of type X.
        assert_eq!(d.total(), 2);
    }

    #[test]
    fn evented_profiles_are_spans() {
        let mut c = Collect::default();
        let mut d = Diagnostics::default();
        decode(FILE.as_bytes(), &mut c, &mut d).unwrap();
        let ev: Vec<_> =
            c.0.iter()
                .map(|e| (e.ph.as_char(), e.name.to_string(), e.ts))
                .collect();
        assert_eq!(ev[0].0, 'M');
        assert_eq!(
            ev[1..].to_vec(),
            vec![
                ('B', "main".into(), 0),
                ('B', "f".into(), 1000),
                ('E', "f".into(), 2000),
                ('E', "main".into(), 5000)
            ]
        );
    }

    #[test]
    fn hostile_files() {
        let mut s = Samples::default();
        let mut d = Diagnostics::default();
        for bad in [
            &b"{\"shared\":"[..],
            b"{\"shared\":{}}",
            b"{\"shared\":{\"frames\":[]}}",
        ] {
            assert!(decode(bad, &mut s, &mut d).is_err());
        }
        let odd = br#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"parsecs"},{"type":"?"},{"type":"sampled","samples":[5,[null]]}]}"#;
        assert_eq!(decode(odd, &mut s, &mut d).unwrap(), 2);
        assert_eq!(d.total(), 3);
    }
}
