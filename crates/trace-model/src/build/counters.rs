//! Counter samples: JSON `C` events, whose arguments are the series' values, and counter
//! tracks' values ([`TrackCounter`], Perfetto's), which come as numbers with no JSON to
//! parse. Both make the same series: one per process (or thread, for a thread-scoped
//! one), name, id and argument key.

use std::fmt::Display;

use spall_format::{RawEvent, TrackCounter};

use super::TraceBuilder;
use crate::diag::ModelWarning;
use crate::event_kinds::CounterSeries;
use crate::span::ExtId;
use crate::strings::StrId;

/// The series of the counter tracks met last, by thread, scope and name: a slice's extra
/// counter values come on the same few tracks slice after slice, so most values find
/// their series here, with no name interned or series key hashed.
#[derive(Debug, Default)]
pub(super) struct RecentCounters(Vec<(u32, bool, Box<str>, u32)>);

/// How many tracks [`RecentCounters`] holds.
const RECENT: usize = 8;

impl RecentCounters {
    fn find(&self, thread: u32, scoped: bool, name: &str) -> Option<u32> {
        (self.0.iter())
            .find(|r| r.0 == thread && r.1 == scoped && &*r.2 == name)
            .map(|r| r.3)
    }

    fn note(&mut self, thread: u32, scoped: bool, name: &str, series: u32) {
        if self.0.len() == RECENT {
            self.0.remove(0);
        }
        self.0.push((thread, scoped, name.into(), series));
    }
}

/// Which series a value belongs to, and the value.
struct Point {
    process: u32,
    /// The thread of a thread-scoped series.
    own: Option<u32>,
    name: StrId,
    id: Option<StrId>,
    key: StrId,
    from_track: bool,
    cname: Option<StrId>,
    ts: i64,
    value: f64,
}

impl TraceBuilder {
    /// A JSON `C` event: a value of each numeric argument.
    pub(super) fn counter(&mut self, ev: &RawEvent<'_>) {
        self.time(ev.ts, ev.ts);
        let thread = self.thread(ev);
        let process = self.threads[thread as usize].process;
        let own = (ev.scope == Some(b't')).then_some(thread);
        let id = ev.id.as_deref().map(|id| self.strings.intern(id));
        let name = match &ev.id {
            Some(id) => self.strings.intern(&format!("{} {id}", ev.name)),
            None => self.strings.intern(&ev.name),
        };
        let Ok(serde_json::Value::Object(map)) = ev.args.to_json() else {
            self.diags
                .warn(ModelWarning::CounterWithoutValues, ev.offset, || {
                    format!("counter {:?} has no args object", ev.name)
                });
            return;
        };
        let cname = ev.cname.as_deref().map(|c| self.strings.intern(c));
        for (k, v) in map {
            let value = match &v {
                serde_json::Value::Number(n) => n.as_f64(),
                serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
                serde_json::Value::Bool(b) => Some(*b as u8 as f64),
                _ => None,
            };
            // "inf" and "NaN" parse, but no graph or statistic can use them.
            let Some(value) = value.filter(|v| v.is_finite()) else {
                self.not_a_number(ev.offset, &ev.name, &k, &v);
                continue;
            };
            let key = self.strings.intern(&k);
            self.counter_point(Point {
                process,
                own,
                name,
                id,
                key,
                from_track: ev.track_counter,
                cname,
                ts: ev.ts,
                value,
            });
        }
    }

    /// A counter track's value, as its `C` event ([`TrackCounter::to_raw`]) would be
    /// taken: by [`add`](TraceBuilder::add), then [`counter`](Self::counter).
    pub(super) fn track_counter_value(&mut self, c: &TrackCounter<'_>) {
        self.seen_at(c.ts);
        self.time(c.ts, c.ts);
        let thread = self.thread_at((ExtId::Num(c.pid), ExtId::Num(c.tid)));
        let value = c.value.as_f64();
        if !value.is_finite() {
            // As its `C` event's text, "NaN" or "inf", would be warned of (its name kept).
            self.strings.intern(c.name);
            let shown = format!("\"{value}\"");
            return self.not_a_number(c.offset, c.name, "value", &shown);
        }
        if let Some(i) = self.recent_counters.find(thread, c.thread_scoped, c.name) {
            let s = &mut self.counters[i as usize];
            s.ts.push(c.ts);
            s.values.push(value);
            return;
        }
        let process = self.threads[thread as usize].process;
        let name = self.strings.intern(c.name);
        let key = self.strings.intern("value");
        let i = self.counter_point(Point {
            process,
            own: c.thread_scoped.then_some(thread),
            name,
            id: None,
            key,
            from_track: true,
            cname: None,
            ts: c.ts,
            value,
        });
        (self.recent_counters).note(thread, c.thread_scoped, c.name, i);
    }

    /// Warns of counter `name`'s argument `key`, `shown` so, which is not a number.
    fn not_a_number(&mut self, offset: u64, name: &str, key: &str, shown: &dyn Display) {
        self.diags
            .warn(ModelWarning::CounterNotNumeric, offset, || {
                format!("counter {name:?} key {key:?} is {shown}, not a number; skipped")
            });
    }

    /// Adds `p` to its series, made on its first value; the series' index.
    fn counter_point(&mut self, p: Point) -> u32 {
        let next = self.counters.len() as u32;
        let series = (p.process, p.own, p.name, p.key, p.from_track);
        let i = *self.counter_ids.entry(series).or_insert(next);
        if i == next {
            self.counters.push(CounterSeries {
                process: p.process,
                thread: p.own,
                name: p.name,
                id: p.id,
                key: p.key,
                from_track: p.from_track,
                cname: p.cname,
                ts: Vec::new(),
                values: Vec::new(),
            });
        }
        let c = &mut self.counters[i as usize];
        if p.cname.is_some() {
            c.cname = p.cname;
        }
        c.ts.push(p.ts);
        c.values.push(p.value);
        i
    }
}
