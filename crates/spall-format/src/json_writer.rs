//! Writing raw events back out as a Chrome JSON trace.

use std::io::{self, Write};

use crate::event::{Args, Id2, RawEvent, RawId, RawSample};
use crate::ftrace::RawSched;
use crate::EventSink;

/// What a [`JsonWriter`] wrote, and what it received but left out, so that a conversion
/// can say so: a Chrome JSON trace of events holds neither a sampling profile's weighted
/// stacks nor a system trace's scheduler records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteCounts {
    /// Events written.
    pub events: u64,
    /// Samples of a sampling profile left out (a sample of several kinds counted once).
    pub samples_left_out: u64,
    /// Scheduler records of a system trace left out (switches, wakings, CPU counters...).
    pub sched_left_out: u64,
}

/// Streams events as a Chrome JSON trace, `{"traceEvents": [...], ...}`: an [`EventSink`],
/// so a decoder's events go straight through with nothing modelled away. Times are written
/// in microseconds exactly (up to three decimals); arguments that are not valid JSON are
/// kept as `{"unparsed": "..."}` and counted.
///
/// ```
/// use spall_format::{decode, JsonWriter};
///
/// let mut w = JsonWriter::new(Vec::new()).unwrap();
/// decode(br#"[{"ph":"X","name":"a","ts":1.5,"dur":2,"pid":1,"tid":1}]"#, &mut w).unwrap();
/// let (bytes, bad_args) = w.finish(&[]).unwrap();
/// let text = String::from_utf8(bytes).unwrap();
/// assert!(text.contains(r#""ts":1.5,"dur":2"#) && bad_args == 0);
/// ```
#[derive(Debug)]
pub struct JsonWriter<W: Write> {
    out: W,
    first: bool,
    err: Option<io::Error>,
    bad_args: u64,
    counts: WriteCounts,
    /// A counter value's arguments, written again for each.
    counter_args: String,
}

impl<W: Write> JsonWriter<W> {
    /// Starts the trace (writes `{"traceEvents":[`).
    pub fn new(mut out: W) -> io::Result<JsonWriter<W>> {
        out.write_all(b"{\"traceEvents\":[")?;
        Ok(JsonWriter {
            out,
            first: true,
            err: None,
            bad_args: 0,
            counts: WriteCounts::default(),
            counter_args: String::new(),
        })
    }

    /// What was written, and left out, so far.
    pub fn counts(&self) -> WriteCounts {
        self.counts
    }

    /// Ends the event array, then writes the top-level keys `extra` as `(name, raw JSON
    /// value)`, and `"displayTimeUnit": "ns"` unless `extra` has one. Returns the output and
    /// how many events had arguments that were not valid JSON. The first write error of
    /// any event is returned here.
    pub fn finish(mut self, extra: &[(&str, &str)]) -> io::Result<(W, u64)> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        let mut tail = String::from("\n]");
        for (name, raw) in extra {
            tail.push_str(&format!(",\n{}:{raw}", js(name)));
        }
        if !extra.iter().any(|(k, _)| *k == "displayTimeUnit") {
            tail.push_str(",\n\"displayTimeUnit\":\"ns\"");
        }
        tail.push_str("}\n");
        self.out.write_all(tail.as_bytes())?;
        self.out.flush()?;
        Ok((self.out, self.bad_args))
    }
}

impl<W: Write> EventSink for JsonWriter<W> {
    fn track_counter(&mut self, counter: &crate::TrackCounter<'_>) {
        let mut args = std::mem::take(&mut self.counter_args);
        self.event(&counter.to_raw(&mut args));
        self.counter_args = args;
    }

    fn event(&mut self, ev: &RawEvent<'_>) {
        // The protobuf reader's meetings of threads (`spall_met`) number threads in the
        // model, as trace_processor numbers them; they are no event of the file.
        if self.err.is_some() || ev.ph == crate::Phase::METADATA && ev.name == "spall_met" {
            return;
        }
        let sep = if self.first { "\n" } else { ",\n" };
        self.first = false;
        self.counts.events += 1;
        let mut line = String::with_capacity(160);
        line.push_str(sep);
        event_json(ev, &mut line, &mut self.bad_args);
        if let Err(e) = self.out.write_all(line.as_bytes()) {
            self.err = Some(e);
        }
    }

    fn sample(&mut self, sample: &RawSample<'_>) {
        self.counts.samples_left_out += u64::from(!sample.same_stack);
    }

    fn sched(&mut self, _sched: &RawSched<'_>) {
        self.counts.sched_left_out += 1;
    }
}

/// Microseconds with up to three decimals, exactly: `1500` ns is `1.5`.
fn us_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (whole, frac) = (a / 1000, a % 1000);
    if frac == 0 {
        format!("{sign}{whole}")
    } else {
        let f = format!("{frac:03}");
        format!("{sign}{whole}.{}", f.trim_end_matches('0'))
    }
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

fn id_json(id: &RawId<'_>) -> String {
    match id {
        RawId::Num(n) => n.to_string(),
        RawId::Str(s) => js(s),
    }
}

fn event_json(ev: &RawEvent<'_>, o: &mut String, bad_args: &mut u64) {
    use std::fmt::Write as _;
    let _ = write!(
        o,
        "{{\"name\":{},\"ph\":{}",
        js(&ev.name),
        js(&ev.ph.as_char().to_string())
    );
    if !ev.cat.is_empty() {
        let _ = write!(o, ",\"cat\":{}", js(&ev.cat));
    }
    let _ = write!(o, ",\"ts\":{}", us_text(ev.ts));
    for (k, v) in [("dur", ev.dur), ("tts", ev.tts), ("tdur", ev.tdur)] {
        if let Some(v) = v {
            let _ = write!(o, ",\"{k}\":{}", us_text(v));
        }
    }
    let _ = write!(
        o,
        ",\"pid\":{},\"tid\":{}",
        id_json(&ev.pid),
        id_json(&ev.tid)
    );
    if let Some(id) = &ev.id {
        let _ = write!(o, ",\"id\":{}", js(id));
    }
    match &ev.id2 {
        Some(Id2::Local(s)) => {
            let _ = write!(o, ",\"id2\":{{\"local\":{}}}", js(s));
        }
        Some(Id2::Global(s)) => {
            let _ = write!(o, ",\"id2\":{{\"global\":{}}}", js(s));
        }
        None => {}
    }
    if let Some(b) = &ev.bind_id {
        let _ = write!(o, ",\"bind_id\":{}", js(b));
    }
    for (k, v) in [("s", ev.scope), ("bp", ev.bp)] {
        if let Some(c) = v {
            let _ = write!(o, ",\"{k}\":{}", js(&char::from(c).to_string()));
        }
    }
    if ev.flow_in {
        o.push_str(",\"flow_in\":true");
    }
    if ev.flow_out {
        o.push_str(",\"flow_out\":true");
    }
    if let Some(c) = &ev.cname {
        let _ = write!(o, ",\"cname\":{}", js(c));
    }
    match &ev.args {
        Args::None => {}
        Args::Json(raw) => json_args(raw, o, bad_args),
        Args::Text(t) => {
            let _ = write!(o, ",\"args\":{{\"text\":{}}}", js(t));
        }
    }
    o.push('}');
}

/// Writes `raw` as an event's args: a protobuf trace's unsigned integers, pointers and
/// threads (tag objects, [`crate::tagged`]) as the plain JSON they stand for, as
/// `Args::text` in the model gives them; a text that is not JSON as a string, counted.
fn json_args(raw: &str, o: &mut String, bad_args: &mut u64) {
    use std::fmt::Write as _;
    let written = if crate::tagged::may_hold_tags(raw) {
        let v = serde_json::from_str::<serde_json::Value>(raw);
        v.map(|mut v| {
            crate::tagged::untag(&mut v);
            let _ = write!(o, ",\"args\":{v}");
        })
        .is_ok()
    } else {
        let ok = serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok();
        if ok {
            let _ = write!(o, ",\"args\":{raw}");
        }
        ok
    };
    if !written {
        *bad_args += 1;
        let _ = write!(o, ",\"args\":{{\"unparsed\":{}}}", js(raw));
    }
}

#[cfg(test)]
mod tests {
    use super::us_text;

    #[test]
    fn microsecond_text_is_exact() {
        assert_eq!(us_text(1500), "1.5");
        assert_eq!(us_text(1000), "1");
        assert_eq!(us_text(1712195495519689047), "1712195495519689.047");
        assert_eq!(us_text(-2), "-0.002");
        assert_eq!(us_text(0), "0");
    }
}
