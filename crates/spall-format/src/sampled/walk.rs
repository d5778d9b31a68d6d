//! A JSON document walked as its bytes arrive, for the profiles whose readers want only
//! parts of it at a time (speedscope's file format, Gecko profiles): the walker follows
//! the objects and arrays its [`Visitor`] descends into, and hands each other value it
//! wants whole, as its bytes, once they are complete; only the bytes of the value not
//! complete yet are held, never the file.
//!
//! Values handed over are parsed with serde_json, as the whole-file decode parses the
//! file, and the walker checks the rest of the syntax itself (values skipped are parsed
//! too, to be as strict as that decode). It gives up on what it is not sure the whole
//! decode takes alike (a duplicate key where it descends, a key with an escape, nesting
//! deeper than [`MAX_NESTING`]): the file is then decoded whole, so a walk that does not
//! give up gives the whole decode's result, in whatever pieces the bytes came.

use crate::diag::Diagnostics;

/// The deepest nesting walked: serde_json stops at 128.
const MAX_NESTING: usize = 100;

/// The longest number or literal (one longer is not one serde takes alike, and would be
/// looked through again at each push).
const MAX_SCALAR: usize = 4096;

/// One step of a value's path from the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(Box<str>),
    Index(u64),
}

impl Seg {
    /// The key, or "" for an index.
    pub(crate) fn key(&self) -> &str {
        match self {
            Seg::Key(k) => k,
            Seg::Index(_) => "",
        }
    }
}

/// The first four keys of `path` ("" for an index) and how many there are.
pub(crate) fn keys(path: &[Seg]) -> ([&str; 4], usize) {
    let mut k = [""; 4];
    for (k, s) in k.iter_mut().zip(path) {
        *k = s.key();
    }
    (k, path.len())
}

/// What the visitor wants of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// Checked, then dropped.
    Skip,
    /// Its bytes, once complete.
    Whole,
    /// Its members one by one if it is an object, else its bytes whole.
    Members,
    /// Its items one by one if it is an array, else its bytes whole.
    Items,
    /// The walk gives up.
    GiveUp,
}

/// What a walk does with the document's values; an `Err` gives up the walk.
pub(crate) trait Visitor {
    /// What to do with the value at `path`, before its bytes.
    fn want(&mut self, path: &[Seg]) -> Want;
    /// An object (`object`) or array descended into, at its start.
    fn open(&mut self, _path: &[Seg], _object: bool) {}
    /// A value wanted whole (or one not the container asked for), complete.
    fn value(&mut self, path: &[Seg], bytes: &[u8]) -> Result<(), ()>;
    /// The end of an object or array descended into.
    fn close(&mut self, path: &[Seg]) -> Result<(), ()>;
}

/// Where the walk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A value at the path (the root's first).
    Value,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,` in an object: a key.
    Key,
    /// After `[`: an item or `]`.
    FirstItem,
    /// After a value in a container: `,` or its close.
    After,
    /// After the root: only whitespace.
    Done,
}

/// A container descended into.
#[derive(Debug)]
struct Level {
    object: bool,
    /// The next item's index.
    next: u64,
    /// An object's keys so far (a duplicate gives up).
    keys: Vec<Box<str>>,
}

/// How far a value's end has been looked for.
#[derive(Clone, Copy, Debug, Default)]
struct Scan {
    at: usize,
    depth: usize,
    in_str: bool,
    esc: bool,
}

/// A stream read by a [`Walk`] it holds (speedscope's, Gecko's).
pub(crate) trait Walked: Sized {
    fn walk(&self) -> &Walk;
    fn walk_mut(&mut self) -> &mut Walk;

    /// Whether its walk gave up (the file is then decoded whole).
    fn failed(&self) -> bool {
        self.walk().failed()
    }

    /// The bytes its walk has used.
    fn consumed(&self) -> u64 {
        self.walk().consumed()
    }

    /// The file's next bytes (`last`: its end), the values they complete handed to
    /// [`Feed`]'s visitor; whether they were walked without giving up.
    fn push<S>(
        &mut self,
        last: bool,
        chunk: &[u8],
        sinks: &mut Vec<S>,
        new_sink: &dyn Fn() -> S,
        diags: &mut Diagnostics,
    ) -> bool
    where
        for<'a> Feed<'a, Self, S>: Visitor,
    {
        // Taken out while the visitor holds the rest of the stream.
        let mut walk = std::mem::take(self.walk_mut());
        let mut feed = Feed {
            st: self,
            sinks,
            new_sink,
            diags,
        };
        let ok = walk.feed(chunk, last, &mut feed);
        *feed.st.walk_mut() = walk;
        ok
    }
}

/// A walked stream with what it hands completed values to: new sinks in `sinks`.
pub(crate) struct Feed<'a, T, S> {
    pub(crate) st: &'a mut T,
    pub(crate) sinks: &'a mut Vec<S>,
    pub(crate) new_sink: &'a dyn Fn() -> S,
    pub(crate) diags: &'a mut Diagnostics,
}

/// A walk: [`push`](Self::push) the document's bytes, then [`finish`](Self::finish).
#[derive(Debug)]
pub(crate) struct Walk {
    state: State,
    levels: Vec<Level>,
    path: Vec<Seg>,
    /// The want of the value being read (asked once).
    want: Option<Want>,
    scan: Scan,
    window: Vec<u8>,
    read: u64,
    failed: bool,
}

/// Why a step stopped.
enum Stop {
    Need,
    Fail,
}

fn ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

impl Default for Walk {
    fn default() -> Walk {
        Walk::new()
    }
}

impl Walk {
    pub(crate) fn new() -> Walk {
        Walk {
            state: State::Value,
            levels: Vec::new(),
            path: Vec::new(),
            want: None,
            scan: Scan::default(),
            window: Vec::new(),
            read: 0,
            failed: false,
        }
    }

    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Bytes walked completely so far.
    pub(crate) fn consumed(&self) -> u64 {
        self.read - self.window.len() as u64
    }

    /// The document's next bytes.
    pub(crate) fn push(&mut self, chunk: &[u8], v: &mut impl Visitor) {
        if self.failed {
            return;
        }
        self.read += chunk.len() as u64;
        if self.window.is_empty() {
            let used = self.run(chunk, false, v);
            if !self.failed {
                self.window.extend_from_slice(&chunk[used..]);
            }
        } else {
            let mut w = std::mem::take(&mut self.window);
            w.extend_from_slice(chunk);
            let used = self.run(&w, false, v);
            w.drain(..used);
            self.window = w;
        }
        if self.failed {
            self.window = Vec::new();
        }
    }

    /// The end of the document: whether it was walked whole, without giving up.
    pub(crate) fn finish(&mut self, v: &mut impl Visitor) -> bool {
        if !self.failed {
            let w = std::mem::take(&mut self.window);
            let used = self.run(&w, true, v);
            if used < w.len() || self.state != State::Done {
                self.failed = true;
            }
        }
        !self.failed
    }

    /// A file's next bytes (`last`: its end): whether they were walked without giving up.
    pub(crate) fn feed(&mut self, chunk: &[u8], last: bool, v: &mut impl Visitor) -> bool {
        self.push(chunk, v);
        if last {
            self.finish(v)
        } else {
            !self.failed()
        }
    }

    /// Walks `b` (the window); the bytes used. `last`: no more bytes come.
    fn run(&mut self, b: &[u8], last: bool, v: &mut impl Visitor) -> usize {
        let mut pos = 0;
        loop {
            if self.scan.at == 0 {
                while pos < b.len() && ws(b[pos]) {
                    pos += 1;
                }
            }
            if pos == b.len() && self.state != State::Value {
                return pos;
            }
            match self.step(b, pos, last, v) {
                Ok(p) => pos = p,
                Err(Stop::Need) => return pos,
                Err(Stop::Fail) => {
                    self.failed = true;
                    return pos;
                }
            }
        }
    }

    /// One token or value from `b[pos..]` (not whitespace); where the next starts.
    fn step(
        &mut self,
        b: &[u8],
        pos: usize,
        last: bool,
        v: &mut impl Visitor,
    ) -> Result<usize, Stop> {
        let c = *b.get(pos).ok_or(Stop::Need)?;
        match self.state {
            State::Done => Err(Stop::Fail),
            State::Value => self.value(b, pos, last, v),
            State::FirstKey if c == b'}' => self.close(pos, v),
            State::FirstKey | State::Key => self.key(b, pos),
            State::FirstItem if c == b']' => self.close(pos, v),
            State::FirstItem => {
                let l = self.levels.last_mut().ok_or(Stop::Fail)?;
                self.path.push(Seg::Index(l.next));
                l.next += 1;
                self.state = State::Value;
                Ok(pos)
            }
            State::After => {
                let l = self.levels.last_mut().ok_or(Stop::Fail)?;
                match (c, l.object) {
                    (b',', true) => self.state = State::Key,
                    (b',', false) => {
                        self.path.push(Seg::Index(l.next));
                        l.next += 1;
                        self.state = State::Value;
                    }
                    (b'}', true) | (b']', false) => return self.close(pos, v),
                    _ => return Err(Stop::Fail),
                }
                Ok(pos + 1)
            }
        }
    }

    /// A key and its `:`.
    fn key(&mut self, b: &[u8], pos: usize) -> Result<usize, Stop> {
        if b[pos] != b'"' {
            return Err(Stop::Fail);
        }
        let end = pos + 1 + memchr::memchr(b'"', &b[pos + 1..]).ok_or(Stop::Need)?;
        let k = &b[pos + 1..end];
        if k.iter().any(|&c| c == b'\\' || c < 0x20) {
            return Err(Stop::Fail);
        }
        let mut p = end + 1;
        while p < b.len() && ws(b[p]) {
            p += 1;
        }
        match b.get(p) {
            None => return Err(Stop::Need),
            Some(b':') => {}
            Some(_) => return Err(Stop::Fail),
        }
        let k: Box<str> = std::str::from_utf8(k).map_err(|_| Stop::Fail)?.into();
        let l = self.levels.last_mut().ok_or(Stop::Fail)?;
        if l.keys.contains(&k) {
            return Err(Stop::Fail);
        }
        l.keys.push(k.clone());
        self.path.push(Seg::Key(k));
        self.state = State::Value;
        Ok(p + 1)
    }

    /// The value at the path, from `b[pos..]`.
    fn value(
        &mut self,
        b: &[u8],
        pos: usize,
        last: bool,
        v: &mut impl Visitor,
    ) -> Result<usize, Stop> {
        let want = *self.want.get_or_insert_with(|| v.want(&self.path));
        if want == Want::GiveUp {
            return Err(Stop::Fail);
        }
        let c = b[pos];
        let descend = match (want, c) {
            (Want::Members, b'{') => Some(true),
            (Want::Items, b'[') => Some(false),
            _ => None,
        };
        if let Some(object) = descend {
            if self.levels.len() >= MAX_NESTING {
                return Err(Stop::Fail);
            }
            self.levels.push(Level {
                object,
                next: 0,
                keys: Vec::new(),
            });
            self.want = None;
            v.open(&self.path, object);
            self.state = if object {
                State::FirstKey
            } else {
                State::FirstItem
            };
            return Ok(pos + 1);
        }
        let end = self.value_end(b, pos, last)?;
        let bytes = &b[pos..end];
        if want == Want::Skip {
            serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(|_| Stop::Fail)?;
        } else {
            v.value(&self.path, bytes).map_err(|()| Stop::Fail)?;
        }
        self.want = None;
        self.after();
        Ok(end)
    }

    /// Past a value: its container's next, or the end.
    fn after(&mut self) {
        if self.levels.is_empty() {
            self.state = State::Done;
        } else {
            self.path.pop();
            self.state = State::After;
        }
    }

    /// The close of the innermost container at `pos`.
    fn close(&mut self, pos: usize, v: &mut impl Visitor) -> Result<usize, Stop> {
        self.levels.pop();
        v.close(&self.path).map_err(|()| Stop::Fail)?;
        self.after();
        Ok(pos + 1)
    }

    /// Where the value starting at `b[pos]` ends (resumed where the last look stopped).
    fn value_end(&mut self, b: &[u8], pos: usize, last: bool) -> Result<usize, Stop> {
        let c = b[pos];
        if !matches!(c, b'{' | b'[' | b'"') {
            // A number or a literal: up to a delimiter.
            let n = b[pos..]
                .iter()
                .position(|&c| matches!(c, b',' | b']' | b'}') || ws(c));
            return match n {
                Some(n) if n > 0 => Ok(pos + n),
                None if last => Ok(b.len()),
                None if b.len() - pos > MAX_SCALAR => Err(Stop::Fail),
                None => Err(Stop::Need),
                Some(_) => Err(Stop::Fail),
            };
        }
        let mut s = self.scan;
        let mut i = pos + s.at;
        let room = MAX_NESTING - self.levels.len();
        while i < b.len() {
            let ch = b[i];
            if s.in_str {
                if s.esc {
                    s.esc = false;
                } else if ch == b'\\' {
                    s.esc = true;
                } else if ch == b'"' {
                    s.in_str = false;
                    if s.depth == 0 {
                        self.scan = Scan::default();
                        return Ok(i + 1);
                    }
                } else {
                    // Straight to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &b[i..]) {
                        Some(n) => {
                            i += n;
                            continue;
                        }
                        None => {
                            i = b.len();
                            break;
                        }
                    }
                }
            } else {
                match ch {
                    b'"' => s.in_str = true,
                    b'{' | b'[' => {
                        s.depth += 1;
                        if s.depth > room {
                            return Err(Stop::Fail);
                        }
                    }
                    b'}' | b']' => {
                        s.depth = s.depth.checked_sub(1).ok_or(Stop::Fail)?;
                        if s.depth == 0 {
                            self.scan = Scan::default();
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        s.at = i - pos;
        self.scan = s;
        Err(Stop::Need)
    }
}
