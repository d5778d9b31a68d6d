//! A Gecko thread's markers as events on that thread: the Firefox Profiler's instants and
//! intervals (page loads, DOM events, styles, GC, network, user timings), shown beside the
//! samples.
//!
//! The `markers` table has `name` (a string index), `startTime`, `endTime` (ms), `phase`
//! (0 instant, 1 interval, 2 interval start, 3 interval end), `category` (an index into
//! `meta.categories`) and `data` (the payload, `type` naming the marker's kind), as rows
//! through a schema (raw) or as columns (processed). Older raw profiles have `time` alone,
//! an interval's ends then marked by `data.interval` (`"start"`, `"end"`). An interval's
//! start and end are paired by name, the latest start with the next end, as the Firefox
//! Profiler pairs them; a start never ended lasts to the thread's last time, an end never
//! started is counted and skipped. Instants are thread-scoped `i` events, intervals `X`
//! events, their payload the args.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::gecko_table::{Strings, Table};
use super::warn;
use crate::diag::Diagnostics;
use crate::event::{Args, EventSink, Phase, RawEvent, RawId};

/// What a thread's markers need from the rest of the profile.
pub(super) struct Place<'v, 'a> {
    pub strings: &'v Strings,
    /// `meta.categories`: `[{name, color}]`.
    pub categories: Option<&'v [Value]>,
    pub pid: &'a RawId<'static>,
    pub tid: &'a RawId<'static>,
    /// Milliseconds added to the thread's times (a raw subprocess's start).
    pub shift: f64,
    /// The thread's last time, ms, for a start never ended.
    pub last: f64,
}

/// Hands the `markers` table's events to `sink`; the number of events.
pub(super) fn emit<S: EventSink>(
    m: &Table,
    at: &Place<'_, '_>,
    sink: &mut S,
    diags: &mut Diagnostics,
) -> u64 {
    let (name, start, end, phase, category, data, time) = (
        m.ix("name"),
        m.num("startTime"),
        m.num("endTime"),
        m.ix("phase"),
        m.ix("category"),
        m.json("data"),
        m.num("time"),
    );
    let label_of = |i: usize| at.strings.get(name.get(i)?);
    let cat_of = |i: usize| category_name(at.categories, category.get(i)?);
    let mut open: HashMap<&str, Vec<(f64, usize)>> = HashMap::new();
    let (mut n, mut unmatched) = (0u64, 0u64);
    for i in 0..m.len() {
        let Some(label) = label_of(i) else {
            unmatched += 1;
            continue;
        };
        let payload = data.get(i);
        // A start that is there but not a number is none (`time` is not looked at).
        let begin = if start.has(i) {
            start.get(i)
        } else {
            time.get(i)
        };
        let finish = end.get(i);
        let kind = match phase.get(i) {
            Some(p) => p,
            // Older raw profiles: an instant, unless its payload says which end it is.
            None => match payload
                .and_then(|d| d.get("interval"))
                .and_then(Value::as_str)
            {
                Some("start") => 2,
                Some("end") => 3,
                _ if finish.is_some() => 1,
                _ => 0,
            },
        };
        let ev = Marker {
            name: label,
            cat: cat_of(i),
            args: payload,
        };
        match (kind, begin, finish) {
            (0, Some(s), _) => ev.send(sink, at, s, None),
            (1, Some(s), Some(e)) => ev.send(sink, at, s, Some(e)),
            (2, Some(s), _) => {
                open.entry(label).or_default().push((s, i));
                continue;
            }
            (3, _, Some(e)) | (3, Some(e), None) => match open.get_mut(label).and_then(Vec::pop) {
                Some((s, _)) => ev.send(sink, at, s, Some(e)),
                None => {
                    unmatched += 1;
                    continue;
                }
            },
            _ => {
                unmatched += 1;
                continue;
            }
        }
        n += 1;
    }
    // Starts never ended, in file order: to the thread's last time.
    let mut left: Vec<(f64, usize)> = open.into_values().flatten().collect();
    left.sort_by_key(|&(_, i)| i);
    for (s, i) in left {
        let ev = Marker {
            name: label_of(i).unwrap_or(""),
            cat: cat_of(i),
            args: data.get(i),
        };
        ev.send(sink, at, s, Some(at.last.max(s)));
        n += 1;
    }
    if unmatched > 0 {
        warn(diags, 0, || {
            format!(
                "{unmatched} Gecko markers with no name, time or start of their interval; skipped"
            )
        });
    }
    n
}

fn category_name(categories: Option<&[Value]>, i: u64) -> Option<&str> {
    categories?
        .get(usize::try_from(i).ok()?)?
        .get("name")?
        .as_str()
}

/// One marker's text.
struct Marker<'v> {
    name: &'v str,
    cat: Option<&'v str>,
    args: Option<&'v Value>,
}

impl Marker<'_> {
    /// An instant at `start` (ms), or an interval to `end`.
    fn send<S: EventSink>(&self, sink: &mut S, at: &Place<'_, '_>, start: f64, end: Option<f64>) {
        let ns = |ms: f64| ((ms + at.shift) * 1e6) as i64;
        let ts = ns(start);
        sink.event(&RawEvent {
            ph: if end.is_some() {
                Phase::COMPLETE
            } else {
                Phase::INSTANT
            },
            name: Cow::Borrowed(self.name),
            cat: Cow::Borrowed(self.cat.unwrap_or("")),
            ts,
            dur: end.map(|e| ns(e).saturating_sub(ts).max(0)),
            pid: at.pid.clone(),
            tid: at.tid.clone(),
            scope: end.is_none().then_some(b't'),
            args: match self.args {
                Some(v @ Value::Object(_)) => Args::Json(Cow::Owned(v.to_string())),
                _ => Args::None,
            },
            ..RawEvent::default()
        });
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::diag::Diagnostics;
    use crate::event::{Collect, Phase, RawId};

    /// Raw markers through a schema: an instant, an interval, a start and end paired by
    /// name around another's, a start never ended, an end never started; on a thread of a
    /// subprocess 1000 ms after the root, with its samples ending at 9 ms.
    pub(crate) const RAW: &str = r#"{"meta":{"interval":1,"startTime":0,"stackwalk":1,
      "categories":[{"name":"Other"},{"name":"DOM"}]},"threads":[],
      "processes":[{"meta":{"interval":1,"startTime":1000},"threads":[{"name":"GeckoMain",
        "pid":7,"tid":8,
        "samples":{"schema":{"stack":0,"time":1},"data":[[0,9]]},
        "stackTable":{"schema":{"prefix":0,"frame":1},"data":[[null,0]]},
        "frameTable":{"schema":{"location":0},"data":[[0]]},
        "stringTable":["main","Load","DOMEvent","Styles","Lost"],
        "markers":{"schema":{"name":0,"startTime":1,"endTime":2,"phase":3,"category":4,"data":5},
          "data":[[1,1.5,null,0,0,{"type":"Text","name":"go"}],
                  [2,2,4,1,1,{"type":"DOMEvent","eventType":"click"}],
                  [3,5,null,2,0,null],[3,5.5,null,2,0,null],[3,null,6,3,0,null],[3,null,7,3,0,null],
                  [1,8,null,2,0,null],[4,null,3,3,0,null]]}}]}]}"#;

    fn read(text: &str) -> (Collect, Diagnostics) {
        let mut c = Collect::default();
        let mut d = Diagnostics::default();
        super::super::gecko::decode(text.as_bytes(), &mut c, &mut d).unwrap();
        (c, d)
    }

    /// Each marker as (phase, name, cat, ts ns, dur ns).
    fn markers(c: &Collect) -> Vec<(u8, String, String, i64, Option<i64>)> {
        (c.0.iter())
            .filter(|e| e.ph != Phase::METADATA)
            .map(|e| (e.ph.0, e.name.to_string(), e.cat.to_string(), e.ts, e.dur))
            .collect()
    }

    #[test]
    fn raw_markers_become_instants_and_intervals_on_their_thread() {
        let (c, d) = read(RAW);
        let ms = |m: f64| (m * 1e6) as i64 + 1_000_000_000;
        assert_eq!(
            markers(&c),
            vec![
                (b'i', "Load".into(), "Other".into(), ms(1.5), None),
                (
                    b'X',
                    "DOMEvent".into(),
                    "DOM".into(),
                    ms(2.0),
                    Some(2_000_000)
                ),
                // The latest start ends first.
                (
                    b'X',
                    "Styles".into(),
                    "Other".into(),
                    ms(5.5),
                    Some(500_000)
                ),
                (
                    b'X',
                    "Styles".into(),
                    "Other".into(),
                    ms(5.0),
                    Some(2_000_000)
                ),
                // Never ended: to the last sample.
                (
                    b'X',
                    "Load".into(),
                    "Other".into(),
                    ms(8.0),
                    Some(1_000_000)
                ),
            ]
        );
        let click = &c.0.iter().find(|e| e.name == "DOMEvent").unwrap();
        assert_eq!(
            click.args.raw(),
            Some(r#"{"eventType":"click","type":"DOMEvent"}"#)
        );
        assert!(c
            .0
            .iter()
            .all(|e| e.pid == RawId::Num(7) && e.tid == RawId::Num(8)));
        // The end of `Lost` had no start.
        assert_eq!(d.total(), 1, "{d:?}");
    }

    #[test]
    fn processed_and_old_raw_markers() {
        // Columns, shared strings, a thread of markers alone (named by a metadata event).
        let processed = r#"{"meta":{"interval":1,"startTime":0,"preprocessedProfileVersion":50,
          "categories":[{"name":"GC / CC"}]},"shared":{"stringArray":["GCMajor","Jank"]},
          "threads":[{"name":"Worker","pid":"1","tid":2,
            "markers":{"name":[0,1],"startTime":[1,3],"endTime":[2,null],"phase":[1,0],
              "category":[0,0],"data":[{"type":"GCMajor"},null],"length":2}}]}"#;
        let (c, d) = read(processed);
        assert_eq!(
            markers(&c),
            vec![
                (
                    b'X',
                    "GCMajor".into(),
                    "GC / CC".into(),
                    1_000_000,
                    Some(1_000_000)
                ),
                (b'i', "Jank".into(), "GC / CC".into(), 3_000_000, None),
            ]
        );
        assert!(c.0.iter().any(|e| e.name == "thread_name"));
        assert_eq!(d.total(), 0);
        // Older raw markers: `time` alone, an interval's ends in `data.interval`.
        let old = r#"{"meta":{"interval":1,"startTime":0,"stackwalk":1},"threads":[{"tid":3,
          "stringTable":["Paint","Mark"],
          "markers":{"schema":{"name":0,"time":1,"data":2},"data":[[0,1,{"interval":"start"}],
            [1,2,null],[0,4,{"interval":"end"}]]}}]}"#;
        let (c, _) = read(old);
        assert_eq!(
            markers(&c),
            vec![
                (b'i', "Mark".into(), String::new(), 2_000_000, None),
                (
                    b'X',
                    "Paint".into(),
                    String::new(),
                    1_000_000,
                    Some(3_000_000)
                ),
            ]
        );
    }
}
