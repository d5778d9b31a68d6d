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
        .map(|f| RawFrame {
            name: Cow::Borrowed(f.get("name").and_then(Value::as_str).unwrap_or("(unnamed)")),
            file: f.get("file").and_then(Value::as_str).map(Cow::Borrowed),
            line: f
                .get("line")
                .and_then(Value::as_u64)
                .and_then(|l| u32::try_from(l).ok()),
        })
        .collect();
    let profiles = (v.get("profiles").and_then(Value::as_array))
        .ok_or_else(|| bad("a speedscope file with no profiles", 0))?;
    let mut n = 0;
    for (i, p) in profiles.iter().enumerate() {
        let tid = i as i64 + 1;
        let name = p.get("name").and_then(Value::as_str);
        let unit_name = p.get("unit").and_then(Value::as_str).unwrap_or("none");
        let Some((unit, scale)) = unit(unit_name) else {
            warn(diags, 0, || {
                format!("profile {i}: unknown unit {unit_name:?}; skipped")
            });
            continue;
        };
        let start = p.get("startValue").and_then(Value::as_f64).unwrap_or(0.0);
        let cx = Profile {
            tid,
            name,
            unit,
            scale,
            start,
            frames: &frames,
        };
        n += match p.get("type").and_then(Value::as_str) {
            Some("sampled") => cx.sampled(p, sink, diags),
            Some("evented") => cx.evented(p, sink, diags),
            other => {
                warn(diags, 0, || {
                    format!("profile {i}: unknown type {other:?}; skipped")
                });
                0
            }
        };
    }
    Ok(n)
}

/// One profile's thread and unit.
struct Profile<'a, 'f> {
    tid: i64,
    name: Option<&'a str>,
    unit: SampleUnit,
    scale: Option<f64>,
    start: f64,
    frames: &'f [RawFrame<'a>],
}

impl Profile<'_, '_> {
    fn sampled<S: EventSink>(&self, p: &Value, sink: &mut S, diags: &mut Diagnostics) -> u64 {
        let empty = Vec::new();
        let samples = p.get("samples").and_then(Value::as_array).unwrap_or(&empty);
        let weights = p.get("weights").and_then(Value::as_array);
        let mut clock = self.start;
        let mut stack = Vec::new();
        let mut bad_frames = 0u64;
        for (i, s) in samples.iter().enumerate() {
            let w = weights
                .and_then(|w| w.get(i))
                .and_then(Value::as_f64)
                .unwrap_or(1.0);
            stack.clear();
            for f in s.as_array().into_iter().flatten() {
                match f.as_u64().and_then(|f| self.frames.get(f as usize)) {
                    Some(fr) => stack.push(fr.clone()),
                    None => bad_frames += 1,
                }
            }
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
                nodes: &[],
                cpu: None,
                offset: 0,
            });
        }
        if bad_frames > 0 {
            diags.warn_n(crate::WarningKind::ProfileMalformed, bad_frames, 0, || {
                "sample frames that are not indices into shared.frames; left out".into()
            });
        }
        samples.len() as u64
    }

    fn evented<S: EventSink>(&self, p: &Value, sink: &mut S, diags: &mut Diagnostics) -> u64 {
        let empty = Vec::new();
        let events = p.get("events").and_then(Value::as_array).unwrap_or(&empty);
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
        for e in events {
            let ph = match e.get("type").and_then(Value::as_str) {
                Some("O") => Phase::BEGIN,
                Some("C") => Phase::END,
                _ => Phase::MISSING,
            };
            let at = e.get("at").and_then(Value::as_f64);
            let frame = e.get("frame").and_then(Value::as_u64);
            let frame = frame.and_then(|f| self.frames.get(f as usize));
            let (Some(at), Some(frame), false) = (at, frame, ph == Phase::MISSING) else {
                warn(diags, 0, || {
                    format!("an evented profile's event that is not O or C of a frame at a time: {e}; skipped")
                });
                continue;
            };
            sink.event(&RawEvent {
                ph,
                name: frame.name.clone(),
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
