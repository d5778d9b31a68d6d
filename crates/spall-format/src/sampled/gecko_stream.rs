//! A Gecko profile read as its bytes arrive ([`walk`](super::walk)): the root's `meta` and
//! `shared`, then each thread and each subprocess, built from its rows as they complete
//! (a table's `data` row by row, a column or a string at a time), so the file's text is
//! never held, only the thread being read, as the document the whole decode reads. Each
//! thread is handed over as it ends, to a sink of its own, by the whole decode's own code.
//!
//! It gives up (the file is decoded whole) where that decode might read otherwise:
//! `threads` or `processes` before `meta` (or, in a processed profile, before `shared`),
//! `processes` before `threads`, a DevTools recording's `profile` beside the root's own
//! keys or with no `meta`, no `threads`, and the walk's own cases.

use serde_json::{Map, Value};

use super::gecko::Cx;
use super::walk::{Feed, Seg, Visitor, Walk, Walked, Want};
use crate::event::EventSink;

/// How deep under the root values are walked into rather than read whole: a thread
/// (`threads`, its index), its tables, their `data` (whose rows are read whole); a
/// subprocess has two levels more (its `threads` and a thread).
const THREAD_DEPTH: usize = 4;

/// The root's keys that the whole decode reads.
const ROOT_KEYS: [&str; 4] = ["meta", "shared", "threads", "processes"];

#[derive(Debug, Default)]
pub(crate) struct Stream {
    walk: Walk,
    /// Whether the root is `profile` (a DevTools recording), once known.
    recording: bool,
    /// A root key the whole decode reads was seen at the top.
    top_keys: bool,
    meta: Option<Map<String, Value>>,
    shared: Option<Value>,
    threads: bool,
    processes: bool,
    /// The thread or subprocess being built: its open objects and arrays, outermost first.
    parts: Vec<Value>,
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

impl Stream {
    /// The path under the root, or `None` outside it.
    fn under<'p>(&self, path: &'p [Seg]) -> Option<&'p [Seg]> {
        if self.recording {
            path.strip_prefix(&[Seg::Key("profile".into())][..])
        } else {
            Some(path)
        }
    }
}

impl<S: EventSink> Feed<'_, Stream, S> {
    /// Hands a thread (`depth` 0) or a subprocess (1) to the whole decode's code.
    fn hand_over(&mut self, v: &Value, process: bool) -> Result<(), ()> {
        let st = &mut *self.st;
        let meta = st.meta.as_ref().ok_or(())?;
        let mut sink = (self.new_sink)();
        let mut cx = Cx::new(meta, st.shared.as_ref(), &mut sink, self.diags);
        cx.nodes = st.nodes;
        if process {
            cx.subprocess_owned(v, 1).map_err(drop)?;
        } else {
            cx.thread_value(v, 0.0);
        }
        (st.n, st.nodes) = (st.n + cx.n, cx.nodes);
        self.sinks.push(sink);
        Ok(())
    }

    /// Puts a value completed within a thread or subprocess in its place; hands the whole
    /// over once it is complete.
    fn place(&mut self, path: &[Seg], v: Value) -> Result<(), ()> {
        match (self.st.parts.last_mut(), path.last()) {
            (None, _) => {
                let process = self.st.under(path).ok_or(())?[0].key() == "processes";
                self.hand_over(&v, process)
            }
            (Some(Value::Object(m)), Some(Seg::Key(k))) => {
                m.insert(k.to_string(), v);
                Ok(())
            }
            (Some(Value::Array(a)), Some(Seg::Index(_))) => {
                a.push(v);
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
            Some("threads") if rel.len() <= THREAD_DEPTH => Want::Any,
            Some("processes") if rel.len() <= THREAD_DEPTH + 2 => Want::Any,
            Some("threads" | "processes") => Want::Whole,
            _ => Want::Skip,
        }
    }

    fn open(&mut self, path: &[Seg], object: bool) {
        if self.st.under(path).is_some_and(|r| r.len() >= 2) {
            self.st.parts.push(if object {
                Value::Object(Map::new())
            } else {
                Value::Array(Vec::new())
            });
        }
    }

    fn value(&mut self, path: &[Seg], b: &[u8]) -> Result<(), ()> {
        let v: Value = serde_json::from_slice(b).map_err(drop)?;
        let rel = self.st.under(path).ok_or(())?;
        match (rel.len(), rel.first().map(Seg::key)) {
            (1, Some("meta")) => match v {
                Value::Object(m) => self.st.meta = Some(m),
                _ => return Err(()),
            },
            (1, Some("shared")) => self.st.shared = Some(v),
            (n, _) if n >= 2 => return self.place(path, v),
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
        match rel.len() {
            0 if !st.threads => Err(()),
            0 => Ok(()),
            1 => {
                match rel[0].key() {
                    "threads" => st.threads = true,
                    "processes" => st.processes = true,
                    _ => {}
                }
                Ok(())
            }
            _ => {
                let v = st.parts.pop().ok_or(())?;
                self.place(path, v)
            }
        }
    }
}
