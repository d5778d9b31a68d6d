//! A Gecko profile read as its bytes arrive ([`walk`](super::walk)): the root's `meta` and
//! `shared`, then each thread, its tables read into typed columns a row, a column's cell
//! or a string at a time ([`gecko_table`](super::gecko_table)), so neither the file's text
//! nor a JSON document of a thread is held, only the thread's columns. A thread of the
//! root is handed over as it ends, a subprocess's threads as the subprocess ends (it is
//! read as the whole decode reads it, its threads then its own subprocesses, whatever
//! order its keys come in), each to a sink of its own, by the whole decode's own code.
//!
//! It gives up (the file is decoded whole) where that decode might read otherwise:
//! `threads` or `processes` before `meta` (or, in a processed profile, before `shared`),
//! `processes` before `threads`, a DevTools recording's `profile` beside the root's own
//! keys or with no `meta`, no `threads`, a table's `schema` after its `data`, and the
//! walk's own cases.

use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::gecko::{start_of, Cx, Thread};
use super::gecko_table::{thread_table, Strings, TableBuilder};
use super::walk::{Feed, Seg, Visitor, Walk, Walked, Want};
use crate::event::EventSink;

/// The root's keys that the whole decode reads.
const ROOT_KEYS: [&str; 4] = ["meta", "shared", "threads", "processes"];

/// A thread's string tables.
const STRINGS: [&str; 2] = ["stringTable", "stringArray"];

/// A thread being read, and its table or string table being read.
#[derive(Debug, Default)]
struct Building {
    thread: Thread,
    table: Option<TableBuilder>,
    strings: Option<Strings>,
}

/// A subprocess being read, handed over as it ends.
#[derive(Debug, Default)]
struct Sub {
    /// Its `meta.startTime`.
    start: Option<f64>,
    /// Its `threads`, if an array.
    threads: Option<Vec<Item>>,
    /// Its own subprocesses, as their text.
    processes: Vec<Box<RawValue>>,
}

/// One of a subprocess's `threads`.
#[derive(Debug)]
enum Item {
    Thread(Box<Thread>),
    /// Not an object: as its text.
    Raw(Box<RawValue>),
}

#[derive(Debug, Default)]
pub(crate) struct Stream {
    walk: Walk,
    /// Whether the root is `profile` (a DevTools recording), once known.
    recording: bool,
    /// A root key the whole decode reads was seen at the top.
    top_keys: bool,
    meta: Option<Map<String, Value>>,
    /// `shared` once read: its `stringArray`, if an array.
    shared: Option<Option<Strings>>,
    threads: bool,
    processes: bool,
    sub: Option<Sub>,
    cur: Option<Building>,
    /// Samples and markers handed over, and the stack rows numbered so far.
    pub(crate) n: u64,
    nodes: u64,
}

impl Walked for Stream {
    fn walk(&self) -> &Walk {
        &self.walk
    }

    fn walk_mut(&mut self) -> &mut Walk {
        &mut self.walk
    }
}

/// Where a path under the root is.
enum At<'p> {
    /// In a thread (the keys below it; `true` in a subprocess).
    Thread(&'p [Seg], bool),
    /// In a subprocess, outside its threads (the keys below it).
    Sub(&'p [Seg]),
    Other,
}

fn at(rel: &[Seg]) -> At<'_> {
    let key = |s: &Seg, k: &str| matches!(s, Seg::Key(x) if &**x == k);
    match rel {
        [t, Seg::Index(_), rest @ ..] if key(t, "threads") => At::Thread(rest, false),
        [p, Seg::Index(_), t, Seg::Index(_), rest @ ..]
            if key(p, "processes") && key(t, "threads") =>
        {
            At::Thread(rest, true)
        }
        [p, Seg::Index(_), rest @ ..] if key(p, "processes") => At::Sub(rest),
        _ => At::Other,
    }
}

/// A value's text, checked.
fn raw(b: &[u8]) -> Result<Box<RawValue>, ()> {
    serde_json::from_slice(b).map_err(drop)
}

fn check(b: &[u8]) -> Result<(), ()> {
    serde_json::from_slice::<IgnoredAny>(b)
        .map(drop)
        .map_err(drop)
}

impl Stream {
    /// The path under the root, or `None` outside it.
    fn under<'p>(&self, path: &'p [Seg]) -> Option<&'p [Seg]> {
        if self.recording {
            path.strip_prefix(&[Seg::Key("profile".into())][..])
        } else {
            Some(path)
        }
    }

    /// What is wanted in a thread or a subprocess.
    fn want_in(&self, rel: &[Seg]) -> Want {
        let table = |k: &str| thread_table(k).is_some();
        match at(rel) {
            At::Thread([], _) => Want::Members,
            At::Thread([k], _) if table(k.key()) => Want::Members,
            At::Thread([k], _) if STRINGS.contains(&k.key()) => Want::Items,
            At::Thread([k], _) if Thread::NAMES.contains(&k.key()) => Want::Whole,
            At::Thread([_], _) => Want::Skip,
            At::Thread([k, m], _) if table(k.key()) && m.key() != "schema" => Want::Items,
            At::Thread(..) => Want::Whole,
            At::Sub([]) => Want::Members,
            At::Sub([k]) => match k.key() {
                "meta" => Want::Whole,
                "threads" | "processes" => Want::Items,
                _ => Want::Skip,
            },
            At::Sub(_) => Want::Whole,
            At::Other => Want::Skip,
        }
    }

    /// The thread being read.
    fn cur(&mut self) -> Result<&mut Building, ()> {
        self.cur.as_mut().ok_or(())
    }

    /// The table being read in the thread being read.
    fn table(&mut self) -> Result<&mut TableBuilder, ()> {
        self.cur()?.table.as_mut().ok_or(())
    }
}

impl<S: EventSink> Feed<'_, Stream, S> {
    /// Runs the whole decode's code on a new sink.
    fn hand_over(
        &mut self,
        f: impl FnOnce(&mut Cx<'_, '_, S>) -> Result<(), ()>,
    ) -> Result<(), ()> {
        let st = &mut *self.st;
        let meta = st.meta.as_ref().ok_or(())?;
        let shared = st.shared.as_ref().and_then(Option::as_ref);
        let mut sink = (self.new_sink)();
        let mut cx = Cx::new(meta, shared, &mut sink, self.diags);
        cx.nodes = st.nodes;
        f(&mut cx)?;
        (st.n, st.nodes) = (st.n + cx.n, cx.nodes);
        self.sinks.push(sink);
        Ok(())
    }

    /// A subprocess, ended: its threads, then its own subprocesses.
    fn hand_over_sub(&mut self, sub: Sub) -> Result<(), ()> {
        self.hand_over(|cx| {
            let shift = cx.shift(sub.start);
            for t in sub.threads.iter().flatten() {
                match t {
                    Item::Thread(t) => cx.thread(t, shift),
                    Item::Raw(r) => cx.thread_raw(r, shift),
                }
            }
            for p in &sub.processes {
                cx.subprocess(p, 2).map_err(drop)?;
            }
            Ok(())
        })
    }

    /// A value in a thread, complete.
    fn thread_value(&mut self, t: &[Seg], sub: bool, b: &[u8]) -> Result<(), ()> {
        let st = &mut *self.st;
        match t {
            [] => {
                let r = raw(b)?;
                if sub {
                    let s = st.sub.as_mut().and_then(|s| s.threads.as_mut());
                    s.ok_or(())?.push(Item::Raw(r));
                } else {
                    self.hand_over(|cx| {
                        cx.thread_raw(&r, 0.0);
                        Ok(())
                    })?;
                }
            }
            [k] => {
                let (k, cur) = (k.key(), st.cur()?);
                if Thread::NAMES.contains(&k) {
                    cur.thread.name(k, serde_json::from_slice(b).map_err(drop)?);
                } else {
                    check(b)?;
                    cur.thread.table(k, None);
                    cur.thread.strings(k, None);
                }
            }
            [k, _] if STRINGS.contains(&k.key()) => {
                st.cur()?.strings.as_mut().ok_or(())?.push(b)?
            }
            [_, m] => {
                let v: Value = serde_json::from_slice(b).map_err(drop)?;
                match m.key() {
                    "schema" => st.table()?.schema(&v)?,
                    m => st.table()?.member(m, &v),
                }
            }
            [_, m, _] => {
                let t = st.table()?;
                if m.key() == "data" && t.has_schema() {
                    t.row(b)?;
                } else {
                    t.cell(b)?;
                }
            }
            _ => return Err(()),
        }
        Ok(())
    }

    /// A value in a subprocess, outside its threads, complete.
    fn sub_value(&mut self, s: &[Seg], b: &[u8]) -> Result<(), ()> {
        match s {
            [] => {
                let r = raw(b)?;
                self.hand_over(|cx| cx.subprocess(&r, 1).map_err(drop))
            }
            [k] => {
                let sub = self.st.sub.as_mut().ok_or(())?;
                match k.key() {
                    "meta" => sub.start = start_of(&serde_json::from_slice(b).map_err(drop)?),
                    // Not an array.
                    _ => check(b)?,
                }
                Ok(())
            }
            [k, _] if k.key() == "processes" => {
                let r = raw(b)?;
                self.st.sub.as_mut().ok_or(())?.processes.push(r);
                Ok(())
            }
            _ => Err(()),
        }
    }
}

impl<S: EventSink> Visitor for Feed<'_, Stream, S> {
    fn want(&mut self, path: &[Seg]) -> Want {
        let st = &mut *self.st;
        if path.is_empty() {
            return Want::Members;
        }
        if path.len() == 1 && !st.recording {
            let k = path[0].key();
            if k == "profile" {
                st.recording = true;
                return if st.top_keys {
                    Want::GiveUp
                } else {
                    Want::Members
                };
            }
            st.top_keys |= ROOT_KEYS.contains(&k);
        }
        let Some(rel) = st.under(path) else {
            return if st.recording && ROOT_KEYS.contains(&path[0].key()) {
                Want::GiveUp
            } else {
                Want::Skip
            };
        };
        let processed = st
            .meta
            .as_ref()
            .map(|m| m.contains_key("preprocessedProfileVersion"));
        let ready = processed.is_some_and(|p| !p || st.shared.is_some());
        match rel.first().map(Seg::key) {
            None => Want::Members,
            Some("meta" | "shared") if rel.len() == 1 => Want::Whole,
            Some("threads") if !ready => Want::GiveUp,
            Some("processes") if !ready || !st.threads => Want::GiveUp,
            Some("threads" | "processes") if rel.len() == 1 => Want::Items,
            Some("threads" | "processes") => st.want_in(rel),
            _ => Want::Skip,
        }
    }

    fn open(&mut self, path: &[Seg], object: bool) {
        let st = &mut *self.st;
        let Some(rel) = st.under(path) else {
            return;
        };
        match at(rel) {
            At::Thread([], _) => st.cur = Some(Building::default()),
            At::Thread([k], _) => {
                let Some(cur) = st.cur.as_mut() else {
                    return;
                };
                match thread_table(k.key()) {
                    Some(spec) if object => cur.table = Some(TableBuilder::new(spec)),
                    _ => cur.strings = Some(Strings::default()),
                }
            }
            At::Thread([_, m], _) => {
                if let Ok(t) = st.table() {
                    if m.key() != "data" || !t.has_schema() {
                        t.column_start(m.key());
                    }
                }
            }
            At::Sub([]) => st.sub = Some(Sub::default()),
            At::Sub([k]) if k.key() == "threads" => {
                if let Some(s) = st.sub.as_mut() {
                    s.threads = Some(Vec::new());
                }
            }
            _ => {}
        }
    }

    fn value(&mut self, path: &[Seg], b: &[u8]) -> Result<(), ()> {
        let rel = self.st.under(path).ok_or(())?;
        match (rel, at(rel)) {
            ([m], _) if m.key() == "meta" => match serde_json::from_slice(b).map_err(drop)? {
                Value::Object(m) => self.st.meta = Some(m),
                _ => return Err(()),
            },
            ([s], _) if s.key() == "shared" => self.st.shared = Some(Strings::shared(&raw(b)?)),
            (_, At::Thread(t, sub)) => return self.thread_value(t, sub, b),
            (_, At::Sub(s)) => return self.sub_value(s, b),
            _ => return Err(()),
        }
        Ok(())
    }

    fn close(&mut self, path: &[Seg]) -> Result<(), ()> {
        let st = &mut *self.st;
        let Some(rel) = st.under(path) else {
            // The top, around a recording's `profile`.
            return if path.is_empty() && st.threads {
                Ok(())
            } else {
                Err(())
            };
        };
        match (rel, at(rel)) {
            ([], _) if !st.threads => Err(()),
            ([], _) => Ok(()),
            ([k], _) => {
                match k.key() {
                    "threads" => st.threads = true,
                    "processes" => st.processes = true,
                    _ => {}
                }
                Ok(())
            }
            (_, At::Thread([], sub)) => {
                let t = st.cur.take().ok_or(())?.thread;
                if sub {
                    let s = st.sub.as_mut().and_then(|s| s.threads.as_mut());
                    s.ok_or(())?.push(Item::Thread(Box::new(t)));
                    Ok(())
                } else {
                    self.hand_over(|cx| {
                        cx.thread(&t, 0.0);
                        Ok(())
                    })
                }
            }
            (_, At::Thread([k], _)) => {
                let cur = st.cur()?;
                let k = k.key();
                match cur.table.take() {
                    Some(t) => cur.thread.table(k, t.finish()),
                    None => cur.thread.strings(k, cur.strings.take()),
                }
                Ok(())
            }
            (_, At::Thread([_, _], _)) => {
                st.table()?.column_end();
                Ok(())
            }
            (_, At::Sub([])) => {
                let sub = st.sub.take().ok_or(())?;
                self.hand_over_sub(sub)
            }
            (_, At::Sub([_])) => Ok(()),
            _ => Err(()),
        }
    }
}
