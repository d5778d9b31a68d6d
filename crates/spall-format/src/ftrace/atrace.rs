//! Atrace markers: what Android's `ATRACE_*` macros (and any program) write into tracefs'
//! `trace_marker`, found in ftrace `print` events and text `tracing_mark_write` lines.
//!
//! `B|tgid|name` opens a slice on the writing thread, `E[|tgid]` closes its innermost,
//! `C|tgid|name|value` sets a process counter, `S|tgid|name|cookie` / `F|tgid|name|cookie`
//! open and close an async slice on the process, `I|tgid|name` is an instant on the
//! thread; the newer `N|tgid|track|name` (instant), `G|tgid|track|name|cookie` and
//! `H|tgid|track|name|cookie` (async begin, end) name their track. They become the
//! [`RawEvent`]s of the JSON vocabulary (`B`, `E`, `C`, `i`, and `b`, `e`, `n` for the
//! async forms), on
//! thread `tid` of process `tgid`: the tgid the marker gives, else the one last seen for
//! the thread ([`Tgids`]), else 0.

use std::borrow::Cow;

use crate::event::{Args, Id2, Phase, RawEvent, RawId};

/// Each thread's process, as markers and process trees said: small, keyed by tid.
#[derive(Debug, Default)]
pub struct Tgids(std::collections::HashMap<i64, i64>);

impl Tgids {
    /// Records that `tid` belongs to process `tgid`.
    pub fn set(&mut self, tid: i64, tgid: i64) {
        if tgid > 0 {
            self.0.insert(tid, tgid);
        }
    }

    /// The process of `tid`, 0 where unknown.
    pub fn get(&self, tid: i64) -> i64 {
        self.0.get(&tid).copied().unwrap_or(0)
    }
}

/// Why a marker was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not an atrace marker at all (free text written to `trace_marker`): ignored, as
    /// trace_processor ignores it.
    NotAtrace,
    /// An atrace marker that breaks its form: counted.
    Malformed,
}

/// [`marker`] into `sink`, as both readers call it: how many events it gave, and why it
/// gave none.
pub fn marker_to<S: crate::event::EventSink>(
    buf: &str,
    (ts, tid, offset): (i64, i64, u64),
    tgids: &mut Tgids,
    args: &mut String,
    sink: &mut S,
) -> (u64, Result<(), Skip>) {
    let mut n = 0;
    let r = marker(buf, ts, tid, offset, tgids, args, &mut |e| {
        n += 1;
        sink.event(e);
    });
    (n, r)
}

/// Reads marker `buf`, written by thread `tid` at `ts`, and hands its event to `f`.
/// `args` is scratch space for a counter's value.
pub fn marker(
    buf: &str,
    ts: i64,
    tid: i64,
    offset: u64,
    tgids: &mut Tgids,
    args: &mut String,
    f: &mut dyn FnMut(&RawEvent<'_>),
) -> Result<(), Skip> {
    let buf = buf.trim_end_matches(['\n', '\0']);
    let mut b = buf.as_bytes().iter();
    let kind = *b.next().ok_or(Skip::NotAtrace)?;
    if !b"BECSFINGH".contains(&kind) {
        return Err(Skip::NotAtrace);
    }
    let rest = match buf.get(1..) {
        Some("") if kind == b'E' => "",
        Some(r) if r.starts_with('|') => &r[1..],
        _ => return Err(Skip::NotAtrace),
    };
    let mut parts = rest.splitn(2, '|');
    let tgid_text = parts.next().unwrap_or("");
    let tail = parts.next();
    let tgid = match tgid_text.trim().parse::<i64>() {
        Ok(t) => t,
        Err(_) if tgid_text.is_empty() && kind == b'E' => 0,
        Err(_) => return Err(Skip::Malformed),
    };
    tgids.set(tid, tgid);
    let pid = match tgid {
        0 => tgids.get(tid),
        t => t,
    };
    let mut ev = RawEvent {
        ts,
        pid: RawId::Num(pid),
        tid: RawId::Num(tid),
        offset,
        ..RawEvent::default()
    };
    match kind {
        b'B' | b'I' => {
            ev.ph = if kind == b'B' {
                Phase::BEGIN
            } else {
                ev.scope = Some(b't');
                Phase::INSTANT
            };
            ev.name = Cow::Borrowed(tail.ok_or(Skip::Malformed)?);
        }
        b'E' => ev.ph = Phase::END,
        b'C' => {
            let (name, value) = split_last(tail.ok_or(Skip::Malformed)?)?;
            // A counter may carry a category after its value: `C|1|name|5|cat`.
            let value = value.split('|').next().unwrap_or("").trim();
            let v: f64 = value.parse().map_err(|_| Skip::Malformed)?;
            args.clear();
            args.push_str("{\"value\":");
            args.push_str(
                &serde_json::Number::from_f64(v)
                    .ok_or(Skip::Malformed)?
                    .to_string(),
            );
            args.push('}');
            ev.ph = Phase::COUNTER;
            ev.track_counter = true;
            ev.name = Cow::Borrowed(name);
            ev.args = Args::Json(Cow::Borrowed(args.as_str()));
            f(&ev);
            return Ok(());
        }
        b'S' | b'F' => {
            let (name, cookie) = split_last(tail.ok_or(Skip::Malformed)?)?;
            ev.ph = if kind == b'S' {
                Phase::ASYNC_BEGIN
            } else {
                Phase::ASYNC_END
            };
            ev.name = Cow::Borrowed(name);
            ev.id2 = Some(Id2::Local(Cow::Borrowed(cookie)));
        }
        b'N' => {
            let mut p = tail.ok_or(Skip::Malformed)?.splitn(2, '|');
            let track = p.next().unwrap_or("");
            ev.ph = Phase::ASYNC_INSTANT;
            ev.cat = Cow::Borrowed(track);
            ev.id2 = Some(Id2::Local(Cow::Borrowed(track)));
            ev.name = Cow::Borrowed(p.next().ok_or(Skip::Malformed)?);
        }
        _ => {
            // G|tgid|track|name|cookie, H|tgid|track|name|cookie
            let mut p = tail.ok_or(Skip::Malformed)?.splitn(2, '|');
            let track = p.next().unwrap_or("");
            let (name, cookie) = split_last(p.next().ok_or(Skip::Malformed)?)?;
            ev.ph = if kind == b'G' {
                Phase::ASYNC_BEGIN
            } else {
                Phase::ASYNC_END
            };
            ev.cat = Cow::Borrowed(track);
            ev.name = Cow::Borrowed(name);
            ev.id2 = Some(Id2::Local(Cow::Borrowed(cookie)));
        }
    }
    f(&ev);
    Ok(())
}

/// `name|last` split at the last `|` (names may hold `|`).
fn split_last(s: &str) -> Result<(&str, &str), Skip> {
    s.rsplit_once('|').ok_or(Skip::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(buf: &str, tid: i64, tgids: &mut Tgids) -> Result<Vec<RawEvent<'static>>, Skip> {
        let mut out = Vec::new();
        let mut args = String::new();
        marker(buf, 5, tid, 0, tgids, &mut args, &mut |e| {
            out.push(e.clone().into_owned())
        })?;
        Ok(out)
    }

    #[test]
    fn begin_end_take_the_thread_and_its_process() {
        let mut t = Tgids::default();
        let b = read("B|100|draw frame\n", 101, &mut t).unwrap();
        assert_eq!((b[0].ph, &*b[0].name), (Phase::BEGIN, "draw frame"));
        assert_eq!(
            (b[0].pid.clone(), b[0].tid.clone()),
            (RawId::Num(100), RawId::Num(101))
        );
        // An end with no tgid goes to the thread's process, as its begin did.
        let e = read("E", 101, &mut t).unwrap();
        assert_eq!((e[0].ph, e[0].pid.clone()), (Phase::END, RawId::Num(100)));
        let e = read("E|100", 101, &mut t).unwrap();
        assert_eq!(e[0].ph, Phase::END);
    }

    #[test]
    fn counters_asyncs_and_instants() {
        let mut t = Tgids::default();
        let c = read("C|7|queue depth|12", 8, &mut t).unwrap();
        assert_eq!((c[0].ph, &*c[0].name), (Phase::COUNTER, "queue depth"));
        assert_eq!(c[0].args.raw(), Some("{\"value\":12.0}"));
        assert!(c[0].track_counter, "a named track's series, not NAME KEY");
        let s = read("S|7|load|42", 8, &mut t).unwrap();
        let local = |e: &RawEvent<'_>| match &e.id2 {
            Some(Id2::Local(c)) => c.to_string(),
            _ => String::new(),
        };
        assert_eq!((s[0].ph, local(&s[0])), (Phase::ASYNC_BEGIN, "42".into()));
        let f = read("F|7|a|b|42", 8, &mut t).unwrap();
        assert_eq!((&*f[0].name, local(&f[0])), ("a|b", "42".into()));
        let i = read("I|7|tick", 8, &mut t).unwrap();
        assert_eq!((i[0].ph, i[0].scope), (Phase::INSTANT, Some(b't')));
        let g = read("G|7|net|fetch|3", 8, &mut t).unwrap();
        assert_eq!(
            (g[0].ph, &*g[0].cat, &*g[0].name),
            (Phase::ASYNC_BEGIN, "net", "fetch")
        );
    }

    #[test]
    fn free_text_is_ignored_and_broken_markers_counted() {
        let mut t = Tgids::default();
        assert_eq!(read("hello world", 1, &mut t).unwrap_err(), Skip::NotAtrace);
        assert_eq!(read("", 1, &mut t).unwrap_err(), Skip::NotAtrace);
        assert_eq!(read("B|x|name", 1, &mut t).unwrap_err(), Skip::Malformed);
        assert_eq!(
            read("C|1|name|many", 1, &mut t).unwrap_err(),
            Skip::Malformed
        );
        assert_eq!(
            read("S|1|nocookie", 1, &mut t).unwrap_err(),
            Skip::Malformed
        );
    }
}
