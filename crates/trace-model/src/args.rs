//! Span and event arguments: ids, and the store of their texts.

use std::borrow::Cow;

use spall_format::tagged;

use crate::strings::hash;

/// Arguments of a span or event: an index into the trace's argument store (0 = none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArgsId(pub u32);

impl ArgsId {
    /// No arguments.
    pub const NONE: ArgsId = ArgsId(0);
}

/// Stored argument texts, in segments: a parallel load keeps each chunk's segment as it is
/// (a trace's args can be half its bytes, too much to copy again on one thread).
#[derive(Clone, Debug, Default)]
pub struct ArgsStore {
    segments: Vec<ArgsSegment>,
    /// The id of each segment's first entry (ids start at 1: 0 is `ArgsId::NONE`).
    firsts: Vec<u32>,
    /// The last [`WINDOW`] distinct sets added, most recent first: a set equal to one of
    /// them takes its id ([`add`](Self::add)).
    recent: Window,
}

/// How many of the last distinct sets an added set is compared with. Chrome's files
/// alternate a few sets (a task's `src_file`, then a layout's sizes), so the last one
/// alone never repeats there.
pub(crate) const WINDOW: usize = 4;

/// The last distinct sets added, most recent first.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    sets: [Recent; WINDOW],
    len: usize,
}

/// A recent set: its id, kind, the hash of its text and kind, and where its text is
/// (found without a search by id).
#[derive(Clone, Copy, Debug, Default)]
struct Recent {
    id: u32,
    len: u32,
    is_json: bool,
    seg: u32,
    end: usize,
    hash: u64,
}

/// The hash a recent set is first compared by.
#[inline]
fn set_hash(text: &str, is_json: bool) -> u64 {
    hash(text.as_bytes(), is_json as u64)
}

impl Window {
    /// Puts `set` first; the least recent falls out past [`WINDOW`].
    #[inline]
    fn push_front(&mut self, set: Recent) {
        let [a, b, c, _] = self.sets;
        self.sets = [set, a, b, c];
        self.len = (self.len + 1).min(WINDOW);
    }

    /// Moves the set at `i` first.
    #[inline]
    fn touch(&mut self, i: usize) {
        let set = self.sets[i];
        for k in (1..=i).rev() {
            self.sets[k] = self.sets[k - 1];
        }
        self.sets[0] = set;
    }

    fn iter(&self) -> impl Iterator<Item = Recent> + '_ {
        self.sets[..self.len].iter().copied()
    }
}

/// How an appended store's ids become the store's ([`ArgsStore::append`]): its first
/// sets by a table (each may repeat one of the sets stored before), the others by an
/// offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArgsMap {
    /// Id `i` up to `heads` becomes `head[i]`; `head[0]` is 0 (no arguments stay none).
    head: [u32; WINDOW + 1],
    heads: u32,
    offset: u32,
}

impl ArgsMap {
    /// Every id to itself.
    pub(crate) const IDENTITY: ArgsMap = ArgsMap {
        head: [0; WINDOW + 1],
        heads: 0,
        offset: 0,
    };

    /// An offset alone: id `i` becomes `i + offset`.
    #[cfg(test)]
    pub(crate) fn offset(offset: u32) -> ArgsMap {
        ArgsMap {
            offset,
            ..ArgsMap::IDENTITY
        }
    }

    /// One branch, taken the same way for nearly every id.
    #[inline]
    pub(crate) fn get(&self, id: ArgsId) -> ArgsId {
        match id.0 {
            a if a <= self.heads => ArgsId(self.head[a as usize]),
            a => ArgsId(a + self.offset),
        }
    }

    /// The offset, where no id maps by the table.
    #[inline]
    pub(crate) fn offset_only(&self) -> Option<u32> {
        (self.heads == 0).then_some(self.offset)
    }

    pub(crate) fn is_identity(&self) -> bool {
        self.offset == 0 && (1..=self.heads).all(|i| self.head[i as usize] == i)
    }
}

/// Entries back to back: entry `i` is `text[ends[i-1]..ends[i]]` (`text[..ends[0]]` for 0).
/// The top bit of an end marks JSON (else free text from a `.spall` Begin).
#[derive(Clone, Debug, Default)]
struct ArgsSegment {
    text: String,
    ends: Vec<u64>,
}

const JSON_BIT: u64 = 1 << 63;

/// A segment's text never grows: an entry it has no room for starts a new one, twice as
/// large, from [`FIRST_SEGMENT_BYTES`] up to this. Growing one string by doubling moves
/// all of it each time, into fresh pages (in WebAssembly a `realloc` always copies), and a
/// trace's argument texts can be a hundred megabytes; a store only ever written to its
/// first megabytes reserves no more than twice what it holds.
const SEGMENT_BYTES: usize = 4 << 20;
const FIRST_SEGMENT_BYTES: usize = 4 << 10;

impl ArgsStore {
    /// Stores a set; returns its id. A set equal (text and kind) to one of the last
    /// [`WINDOW`] distinct sets added is not stored again: its id is returned. Events in a
    /// row often carry the same arguments (a dense Perfetto file's every annotated slice,
    /// or two sets in turn in Chrome's), and each copy was fresh memory. Which sets are
    /// compared depends on the order of the sets alone, so the ids do too, not on how a
    /// parallel load cut them ([`append`](Self::append) compares across the cut).
    #[inline]
    pub(crate) fn add(&mut self, text: &str, is_json: bool) -> ArgsId {
        if text.is_empty() {
            return ArgsId::NONE;
        }
        // The last set first, by its bytes alone: the usual repeat (a dense file's).
        if let Some(&r) = self.recent.sets[..self.recent.len].first() {
            if r.is_json == is_json && self.recent_text(r) == text.as_bytes() {
                return ArgsId(r.id);
            }
        }
        let h = set_hash(text, is_json);
        if let Some(i) = self.recent_index(h, text) {
            self.recent.touch(i);
            return ArgsId(self.recent.sets[0].id);
        }
        let id = self.count() + 1;
        let full = |seg: &ArgsSegment| seg.text.capacity() - seg.text.len() < text.len();
        if self.segments.last().is_none_or(full) {
            let last = self.segments.last().map_or(0, |s| s.text.capacity());
            let room = (last * 2).clamp(FIRST_SEGMENT_BYTES, SEGMENT_BYTES);
            self.segments.push(ArgsSegment {
                text: String::with_capacity(room.max(text.len())),
                // Most sets are a few dozen bytes.
                ends: Vec::with_capacity(room / 32),
            });
            self.firsts.push(id);
        }
        let seg = self.segments.last_mut().expect("a segment");
        seg.text.push_str(text);
        seg.ends
            .push(seg.text.len() as u64 | if is_json { JSON_BIT } else { 0 });
        let end = seg.text.len();
        self.recent.push_front(Recent {
            id,
            len: text.len() as u32,
            is_json,
            seg: self.segments.len() as u32 - 1,
            end,
            hash: h,
        });
        ArgsId(id)
    }

    /// A new set holding `b`'s arguments and `e`'s, when both are JSON objects; else `b`.
    /// Objects merge key by key at every depth, as trace_processor adds an `E`'s flattened
    /// keys to its `B`'s set: `{"debug":{"a":1}}` and `{"debug":{"b":2}}` give both keys;
    /// any other value of `e` replaces `b`'s under the same key.
    pub(crate) fn merged(&mut self, b: ArgsId, e: ArgsId) -> ArgsId {
        // Most pairs in Chrome traces are `{}` and `{}`, or something and `{}`: neither
        // needs the empty object parsed (nor, for two, the merge written by serde_json).
        let empty = |id| matches!(self.get(id), Some((t, true)) if is_empty_object(t));
        let e_empty = empty(e);
        if e_empty && empty(b) {
            return self.add("{}", true);
        }
        // `json` gives free text as a string, so only a JSON object matches.
        let object = |id| match self.tagged_json(id) {
            Some(serde_json::Value::Object(m)) => Some(m),
            _ => None,
        };
        let Some(mut m) = object(b) else {
            return b;
        };
        if !e_empty {
            let Some(end) = object(e) else {
                return b;
            };
            deep_merge(&mut m, end);
        }
        // Written as `Display` writes it, without its formatter's cost.
        match serde_json::to_string(&serde_json::Value::Object(m)) {
            Ok(text) => self.add(&text, true),
            Err(_) => b,
        }
    }

    /// Where the set of hash `h` and text `text` is among the recent sets after the last.
    #[inline]
    fn recent_index(&self, h: u64, text: &str) -> Option<usize> {
        let mut i = 1;
        while i < self.recent.len {
            let r = self.recent.sets[i];
            if r.hash == h && self.recent_text(r) == text.as_bytes() {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// A recent set's text (its bytes: no character boundaries to check).
    #[inline]
    fn recent_text(&self, r: Recent) -> &[u8] {
        let text = self.segments[r.seg as usize].text.as_bytes();
        &text[r.end - r.len as usize..r.end]
    }

    /// The recent set `id`, found by its id.
    fn locate(&self, id: u32) -> Recent {
        let k = self.firsts.partition_point(|&f| f <= id) - 1;
        let seg = &self.segments[k];
        let i = (id - self.firsts[k]) as usize;
        let start = match i {
            0 => 0,
            _ => seg.ends[i - 1] & !JSON_BIT,
        };
        let end = seg.ends[i];
        let is_json = end & JSON_BIT != 0;
        let end = (end & !JSON_BIT) as usize;
        Recent {
            id,
            len: (end - start as usize) as u32,
            is_json,
            seg: k as u32,
            end,
            hash: set_hash(&seg.text[start as usize..end], is_json),
        }
    }

    /// Appends every entry of `other`, taking its segments without copying them; returns
    /// how its ids become this store's. `other`'s first sets (up to [`WINDOW`]) are those
    /// it stored before it had seen [`WINDOW`] distinct ones, all distinct: where one of
    /// them is among this store's recent sets as `add` would have found them, it is
    /// dropped and takes that set's id. From the first set past them, `other` compared
    /// each set with the same recent sets as one store would have.
    pub(crate) fn append(&mut self, mut other: ArgsStore) -> ArgsMap {
        let base = self.count();
        let heads = other.count().min(WINDOW as u32);
        let mut map = ArgsMap {
            heads,
            ..ArgsMap::IDENTITY
        };
        // The recent sets as one store would have them before each of `other`'s first
        // (those of `other` only by id: they are not compared, all being distinct).
        let mut recent = self.recent;
        let mut new = 0;
        let firsts = (map.head.iter_mut()).enumerate().take(heads as usize + 1);
        for (i, head) in firsts.skip(1) {
            let (text, is_json) = other.get(ArgsId(i as u32)).expect("a set");
            let found = recent.iter().position(|r| {
                r.id <= base && r.is_json == is_json && self.recent_text(r) == text.as_bytes()
            });
            if let Some(k) = found {
                recent.touch(k);
                *head = recent.sets[0].id;
            } else {
                new += 1;
                *head = base + new;
                recent.push_front(Recent {
                    id: base + new,
                    ..Recent::default()
                });
            }
        }
        map.offset = base - (heads - new);
        // The sets found before, last first (the ids of those before stay).
        for i in (1..=heads).rev().filter(|&i| map.head[i as usize] <= base) {
            other.remove(i);
        }
        // `other`'s recent sets, then (if it saw fewer) this store's not among them.
        let mut ids = Vec::with_capacity(WINDOW);
        ids.extend(other.recent.iter().map(|r| map.get(ArgsId(r.id)).0));
        for r in self.recent.iter() {
            if ids.len() < WINDOW && !ids.contains(&r.id) {
                ids.push(r.id);
            }
        }
        let mut next = base + 1;
        for seg in other.segments {
            if !seg.ends.is_empty() {
                let n = seg.ends.len() as u32;
                self.segments.push(seg);
                self.firsts.push(next);
                next = next.checked_add(n).expect("fewer than 2^32 argument sets");
            }
        }
        self.recent = Window::default();
        for &id in ids.iter().rev() {
            let r = self.locate(id);
            self.recent.push_front(r);
        }
        map
    }

    /// Removes set `id`; those after it take the ids one lower.
    fn remove(&mut self, id: u32) {
        let k = self.firsts.partition_point(|&f| f <= id) - 1;
        let i = (id - self.firsts[k]) as usize;
        let seg = &mut self.segments[k];
        let start = match i {
            0 => 0,
            _ => seg.ends[i - 1] & !JSON_BIT,
        };
        let end = seg.ends.remove(i) & !JSON_BIT;
        seg.text.drain(start as usize..end as usize);
        for e in &mut seg.ends[i..] {
            *e -= end - start;
        }
        for f in &mut self.firsts[k + 1..] {
            *f -= 1;
        }
    }

    pub(crate) fn shrink(&mut self) {
        for seg in &mut self.segments {
            seg.text.shrink_to_fit();
            seg.ends.shrink_to_fit();
        }
    }

    /// How many argument sets there are: their ids run from 1 to this.
    pub fn count(&self) -> u32 {
        match (self.firsts.last(), self.segments.last()) {
            (Some(&first), Some(seg)) => first - 1 + seg.ends.len() as u32,
            _ => 0,
        }
    }

    /// The raw text of the arguments, and whether it is JSON.
    pub fn get(&self, id: ArgsId) -> Option<(&str, bool)> {
        if id.0 == 0 || id.0 > self.count() {
            return None;
        }
        let k = self.firsts.partition_point(|&f| f <= id.0) - 1;
        let seg = &self.segments[k];
        let i = (id.0 - self.firsts[k]) as usize;
        let start = match i {
            0 => 0,
            _ => (seg.ends[i - 1] & !JSON_BIT) as usize,
        };
        let end = seg.ends[i];
        Some((
            &seg.text[start..(end & !JSON_BIT) as usize],
            end & JSON_BIT != 0,
        ))
    }

    /// Each segment's text and ends (`end | JSON_BIT` for JSON), in id order.
    pub(crate) fn segments(&self) -> impl Iterator<Item = (&str, &[u64])> + '_ {
        (self.segments.iter()).map(|seg| (seg.text.as_str(), seg.ends.as_slice()))
    }

    /// The store whose sets are `text` cut at `ends` (as [`segments`](Self::segments) gives
    /// them, for one segment), or `None` unless each set is non-empty and ends on a
    /// character boundary, in order, within the text.
    pub(crate) fn from_text(text: &str, ends: Vec<u64>) -> Option<ArgsStore> {
        let mut at = 0;
        for &end in &ends {
            let end = end & !JSON_BIT;
            if end <= at || !text.is_char_boundary(usize::try_from(end).ok()?) {
                return None;
            }
            at = end;
        }
        if at != text.len() as u64 || u32::try_from(ends.len()).is_err() {
            return None;
        }
        if ends.is_empty() {
            return Some(ArgsStore::default());
        }
        Some(ArgsStore {
            segments: vec![ArgsSegment {
                text: text.to_string(),
                ends,
            }],
            firsts: vec![1],
            recent: Window::default(),
        })
    }

    /// The arguments as JSON (`.spall` text becomes a JSON string), unsigned integers and
    /// pointers as plain JSON (see [`tagged`]).
    pub fn json(&self, id: ArgsId) -> Option<serde_json::Value> {
        let (text, is_json) = self.get(id)?;
        let mut v = parse(text, is_json)?;
        if is_json && tagged::may_hold_tags(text) {
            tagged::untag(&mut v);
        }
        Some(v)
    }

    /// The arguments as JSON with their type tags: an unsigned integer or a pointer from a
    /// protobuf trace is a one-key object ([`tagged`]).
    pub fn tagged_json(&self, id: ArgsId) -> Option<serde_json::Value> {
        let (text, is_json) = self.get(id)?;
        parse(text, is_json)
    }

    /// The arguments' text as written to a file: the raw text, or, where it holds type tags,
    /// the plain JSON they stand for.
    pub fn text(&self, id: ArgsId) -> Option<Cow<'_, str>> {
        let (text, is_json) = self.get(id)?;
        if !is_json || !tagged::may_hold_tags(text) {
            return Some(Cow::Borrowed(text));
        }
        Some(match parse(text, true) {
            Some(mut v) => {
                tagged::untag(&mut v);
                Cow::Owned(v.to_string())
            }
            None => Cow::Borrowed(text),
        })
    }

    /// The bytes of all argument texts.
    pub(crate) fn text_bytes(&self) -> usize {
        self.segments.iter().map(|seg| seg.text.len()).sum()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let segments: usize = (self.segments.iter())
            .map(|seg| seg.text.capacity() + seg.ends.capacity() * 8)
            .sum();
        segments
            + self.segments.capacity() * std::mem::size_of::<ArgsSegment>()
            + self.firsts.capacity() * 4
    }
}

/// An argument text as JSON (`.spall` text as a JSON string).
fn parse(text: &str, is_json: bool) -> Option<serde_json::Value> {
    if is_json {
        serde_json::from_str(text).ok()
    } else {
        Some(serde_json::Value::String(text.to_string()))
    }
}

/// Whether `text` is an object with no members (`{}`, with any JSON whitespace).
fn is_empty_object(text: &str) -> bool {
    let ws = |c: char| matches!(c, ' ' | '\n' | '\r' | '\t');
    (text.trim_matches(ws).strip_prefix('{'))
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(|t| t.chars().all(ws))
}

/// Merges `from` into `into`: objects under the same key merge, any other value replaces.
fn deep_merge(
    into: &mut serde_json::Map<String, serde_json::Value>,
    from: serde_json::Map<String, serde_json::Value>,
) {
    use serde_json::Value;
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(a)), Value::Object(b))
                if tagged::tag_of(a).is_none() && tagged::tag_of(&b).is_none() =>
            {
                deep_merge(a, b)
            }
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_store_round_trips() {
        let mut a = ArgsStore::default();
        assert_eq!(a.add("", true), ArgsId::NONE);
        let x = a.add("{\"a\":1}", true);
        let y = a.add("free text", false);
        assert_eq!(a.get(x), Some(("{\"a\":1}", true)));
        assert_eq!(a.get(y), Some(("free text", false)));
        assert_eq!(a.get(ArgsId::NONE), None);
        assert_eq!(a.get(ArgsId(99)), None);
        assert_eq!(a.json(x).unwrap()["a"], 1);
        assert_eq!(a.json(y).unwrap(), "free text");
    }

    #[test]
    fn args_appended_by_segments_keep_their_texts() {
        let store = |texts: &[(&str, bool)]| {
            let mut a = ArgsStore::default();
            for &(t, j) in texts {
                a.add(t, j);
            }
            a
        };
        let mut all = store(&[(r#"{"a":1}"#, true), ("first", false)]);
        let b = store(&[("second", false), (r#"{"b":[2]}"#, true)]);
        assert_eq!(
            all.append(b),
            ArgsMap {
                head: [0, 3, 4, 0, 0],
                heads: 2,
                offset: 2
            }
        );
        all.append(ArgsStore::default());
        assert_eq!(
            all.append(store(&[("third", false)])).get(ArgsId(1)),
            ArgsId(5)
        );
        all.add("fourth", false);
        let got: Vec<_> = (1..=all.count())
            .map(|i| all.get(ArgsId(i)).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                (r#"{"a":1}"#, true),
                ("first", false),
                ("second", false),
                (r#"{"b":[2]}"#, true),
                ("third", false),
                ("fourth", false),
            ]
        );
        assert_eq!(all.get(ArgsId(7)), None);
    }

    /// A set equal (text and kind) to one of the last four distinct sets takes its id; any
    /// other, even one stored before those, a new one.
    #[test]
    fn a_set_repeated_from_a_few_back_is_kept_once() {
        let mut a = ArgsStore::default();
        let texts = [
            "x", "x", "", "x", "x", "y", "x", "y", "z", "w", "v", "x", "y",
        ];
        // The fifth is free text, not JSON.
        let ids: Vec<u32> = (0..texts.len())
            .map(|i| a.add(texts[i], i != 4).0)
            .collect();
        // "x" falls out as "y", "z", "w" and "v" come after it, then "y" as well.
        assert_eq!(ids, [1, 1, 0, 1, 2, 3, 1, 3, 4, 5, 6, 7, 8]);
        assert_eq!(a.count(), 8);
        assert_eq!(a.get(ArgsId(2)), Some(("x", false)));
        assert_eq!(a.get(ArgsId(7)), Some(("x", true)));
        assert_eq!(a.text_bytes(), 8);
    }

    /// A store cut anywhere into parts, each part's sets added to a store of its own and the
    /// parts appended, gives each set the id one store gives it: a part's first sets that
    /// repeat recent ones before it take their ids, as `add` would.
    #[test]
    fn appended_parts_give_the_ids_of_one_store_at_every_cut() {
        let pattern = [0, 0, 1, 1, 1, 2, 0, 3, 4, 1, 5, 2, 6, 0, 3, 7, 1, 0];
        let sets: Vec<(String, bool)> = (0..54)
            .map(|i: usize| {
                // Long enough to fill several segments.
                let p = pattern[i % pattern.len()];
                (format!("s{p}{}", "-".repeat(p * 400)), i % 11 != 5)
            })
            .collect();
        let mut whole = ArgsStore::default();
        let want: Vec<ArgsId> = sets.iter().map(|(t, j)| whole.add(t, *j)).collect();
        let mut after = whole.clone();
        let want_next: Vec<ArgsId> = sets.iter().map(|(t, j)| after.add(t, *j)).collect();
        for a in 0..sets.len() {
            for b in a..sets.len() {
                let mut parts = [0..a, a..b, b..sets.len()].map(|r| {
                    let mut s = ArgsStore::default();
                    let ids: Vec<ArgsId> = sets[r].iter().map(|(t, j)| s.add(t, *j)).collect();
                    (s, ids)
                });
                let (mut all, mut got) = std::mem::take(&mut parts[0]);
                for (s, ids) in parts.into_iter().skip(1) {
                    let map = all.append(s);
                    got.extend(ids.iter().map(|&i| map.get(i)));
                }
                assert_eq!(got, want, "cut at {a} and {b}");
                assert_eq!(all.count(), whole.count());
                for id in 1..=whole.count() {
                    assert_eq!(all.get(ArgsId(id)), whole.get(ArgsId(id)));
                }
                // The recent sets too: adding goes on as in one store.
                let next: Vec<ArgsId> = sets.iter().map(|(t, j)| all.add(t, *j)).collect();
                assert_eq!(next, want_next, "added after cuts at {a} and {b}");
            }
        }
    }

    /// Past `SEGMENT_BYTES` the entries go on in new segments, each found by its id.
    #[test]
    fn long_texts_fill_segments() {
        let mut s = ArgsStore::default();
        let text = |i: usize| format!("{i:05}{}", "x".repeat(i % 7000));
        let mut bytes = 0;
        for i in 0..6000 {
            bytes += text(i).len();
            assert_eq!(s.add(&text(i), i % 2 == 0), ArgsId(i as u32 + 1));
        }
        assert!(s.segments.len() > 2, "{} segments", s.segments.len());
        assert_eq!((s.count(), s.text_bytes()), (6000, bytes));
        for i in 0..6000 {
            assert_eq!(s.get(ArgsId(i as u32 + 1)), Some((&*text(i), i % 2 == 0)));
        }
        // As one text (what a transfer carries), the same sets.
        let (mut text, mut ends) = (String::new(), Vec::new());
        for (t, e) in s.segments() {
            ends.extend(e.iter().map(|&end| end + text.len() as u64));
            text.push_str(t);
        }
        let one = ArgsStore::from_text(&text, ends).unwrap();
        assert_eq!(one.count(), 6000);
        for i in 1..=6000 {
            assert_eq!(one.get(ArgsId(i)), s.get(ArgsId(i)));
        }
    }

    /// Ends out of order, empty sets, a cut character or text past the last end: `None`.
    #[test]
    fn from_text_checks_the_ends() {
        let ok = ArgsStore::from_text("a{}é", vec![1, 3 | JSON_BIT, 5]).unwrap();
        assert_eq!(ok.get(ArgsId(2)), Some(("{}", true)));
        assert_eq!(ok.get(ArgsId(3)), Some(("é", false)));
        assert_eq!(ArgsStore::from_text("", vec![]).unwrap().count(), 0);
        for (text, ends) in [
            ("ab", vec![1, 1, 2]),
            ("ab", vec![2, 1]),
            ("é", vec![1, 2]),
            ("ab", vec![1]),
            ("ab", vec![3]),
            ("", vec![0]),
            ("ab", vec![u64::MAX]),
        ] {
            assert!(
                ArgsStore::from_text(text, ends.clone()).is_none(),
                "{text:?} {ends:?}"
            );
        }
    }

    #[test]
    fn merged_sets_merge_nested_objects() {
        let mut s = ArgsStore::default();
        let b = s.add(r#"{"debug":{"beginData":{"frame":"F"},"n":1}}"#, true);
        let e = s.add(r#"{"debug":{"parsed_bytes":7,"n":2}}"#, true);
        let m = s.merged(b, e);
        assert_eq!(
            s.json(m).unwrap(),
            serde_json::json!({"debug":{"beginData":{"frame":"F"},"n":2,"parsed_bytes":7}})
        );
        let text = s.add("free text", false);
        assert_eq!(s.merged(text, e), text);
        // Empty objects: the merge is the other set, written as serde_json writes it.
        let empty = s.add(" { \n} ", true);
        let m = s.merged(empty, empty);
        assert_eq!(s.get(m), Some(("{}", true)));
        let b = s.add(r#"{ "z": 1.50, "a" : [1, 2] }"#, true);
        let m = s.merged(b, empty);
        assert_eq!(s.get(m), Some((r#"{"a":[1,2],"z":1.5}"#, true)));
        assert_eq!(s.merged(text, empty), text);
        let m = s.merged(empty, b);
        assert_eq!(s.get(m), Some((r#"{"a":[1,2],"z":1.5}"#, true)));
        let not_object = s.add("{}}", true);
        assert_eq!(s.merged(b, not_object), b);
        assert_eq!(s.merged(not_object, empty), not_object);
        assert!(!is_empty_object("{") && !is_empty_object("}") && !is_empty_object("{x}"));
        // A typed value is a value, not a dictionary: the E's replaces the B's whole.
        let b = s.add(r#"{"debug":{"v":{"\u0000u":1}}}"#, true);
        let e = s.add(r#"{"debug":{"v":{"\u0000p":2}}}"#, true);
        let m = s.merged(b, e);
        assert_eq!(
            s.tagged_json(m).unwrap(),
            serde_json::json!({"debug":{"v":{"\u{0}p":2}}})
        );
        assert_eq!(s.json(m).unwrap(), serde_json::json!({"debug":{"v":"0x2"}}));
    }
}
