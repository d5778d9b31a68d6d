//! Interned strings: each distinct name is stored once and referred to by a [`StrId`].

use std::hash::BuildHasher;

pub(crate) use spall_format::hash::{hash, same};

/// An interned string. `StrId::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(pub u32);

impl StrId {
    /// The empty string, present in every trace.
    pub const EMPTY: StrId = StrId(0);
}

/// A slot of the hash table: where its string's bytes are, so a lookup reads the slot and
/// the bytes and nothing else (interning is on the load's hot path, once per span).
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Start of the bytes in `text` (low 40 bits) and 24 bits of the hash (high bits).
    at: u64,
    len: u32,
    /// `EMPTY_SLOT` when free.
    id: u32,
}

const EMPTY_SLOT: u32 = u32::MAX;
const START_BITS: u32 = 40;
const START_MASK: u64 = (1 << START_BITS) - 1;

/// The string table. Each string is stored once, all of them in one buffer; an
/// open-addressing table (linear probing, at most half full) finds them.
#[derive(Clone, Debug)]
pub struct Strings {
    text: String,
    /// String `i` is `text[ends[i - 1]..ends[i]]` (`text[..ends[0]]` for 0).
    ends: Vec<u64>,
    slots: Vec<Slot>,
    /// Random per table, so that no file can be made to collide every name.
    seed: u64,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Strings {
            text: String::new(),
            ends: Vec::new(),
            slots: Vec::new(),
            seed: hashbrown::DefaultHashBuilder::default().hash_one(0u64) | 1,
        };
        s.grow();
        s.insert("", hash(b"", s.seed));
        s
    }
}

/// The ids of the strings a decoder gave keys to ([`ThreadSlice::name_key`]), so that each
/// is hashed once per key, not once per event: key `k`'s id at `k`, [`UNSEEN`] until its
/// first event. Keys run from 1 up, one per interned string: those past [`MAX_KEY`] are
/// hashed as any string, which bounds the table at 16 MB.
///
/// [`ThreadSlice::name_key`]: spall_format::ThreadSlice::name_key
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyedIds(Vec<u32>);

const UNSEEN: u32 = u32::MAX;
const MAX_KEY: u32 = 1 << 22;

impl KeyedIds {
    /// The id of `s`, whose key is `key` (0: none), added to `strings` if new.
    #[inline(always)]
    pub(crate) fn intern(&mut self, key: u32, s: &str, strings: &mut Strings) -> StrId {
        if key == 0 {
            return strings.intern(s);
        }
        match self.0.get(key as usize) {
            Some(&id) if id != UNSEEN => StrId(id),
            _ => self.add(key, s, strings),
        }
    }

    #[cold]
    #[inline(never)]
    fn add(&mut self, key: u32, s: &str, strings: &mut Strings) -> StrId {
        let id = strings.intern(s);
        if key <= MAX_KEY {
            let k = key as usize;
            if k >= self.0.len() {
                self.0.resize((k + 1).next_power_of_two(), UNSEEN);
            }
            self.0[k] = id.0;
        }
        id
    }
}

impl Strings {
    fn start(&self, id: usize) -> usize {
        match id {
            0 => 0,
            i => self.ends[i - 1] as usize,
        }
    }

    /// The slot holding `s`, or the free slot where it would go. Inline always: it is
    /// [`intern`](Self::intern)'s lookup, once per span on a load's hot path.
    #[inline(always)]
    fn find(&self, s: &str, hash: u64) -> usize {
        let mask = self.slots.len() - 1;
        let tag = hash >> START_BITS << START_BITS;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot.id == EMPTY_SLOT {
                return i;
            }
            if slot.len as usize == s.len() && slot.at & !START_MASK == tag {
                let at = (slot.at & START_MASK) as usize;
                if same(&self.text.as_bytes()[at..at + s.len()], s.as_bytes()) {
                    return i;
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The id of `s`, adding it if it is new.
    ///
    /// The lookup is inline (once per span on a load's hot path; a call costs as much as
    /// the lookup); adding a string is out of line.
    #[inline(always)]
    pub fn intern(&mut self, s: &str) -> StrId {
        // Empty categories and End-event names are the most common strings of all.
        if s.is_empty() {
            return StrId::EMPTY;
        }
        let hash = hash(s.as_bytes(), self.seed);
        match self.slots[self.find(s, hash)].id {
            EMPTY_SLOT => self.insert(s, hash),
            id => StrId(id),
        }
    }

    /// Adds `s` (whose hash is `hash`), or finds it if the table has grown since the lookup.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, s: &str, hash: u64) -> StrId {
        if self.ends.len() * 2 >= self.slots.len() {
            self.grow();
        }
        let i = self.find(s, hash);
        if self.slots[i].id != EMPTY_SLOT {
            return StrId(self.slots[i].id);
        }
        let id = u32::try_from(self.ends.len())
            .ok()
            .filter(|&id| id != EMPTY_SLOT)
            .expect("fewer than 2^32 - 1 distinct strings");
        let at = self.text.len() as u64;
        assert!(at <= START_MASK, "under 1 TiB of distinct strings");
        self.text.push_str(s);
        self.ends.push(self.text.len() as u64);
        self.slots[i] = Slot {
            at: at | (hash >> START_BITS << START_BITS),
            len: u32::try_from(s.len()).expect("strings under 4 GiB"),
            id,
        };
        StrId(id)
    }

    /// Doubles the table (at least 64 slots) and puts every string back.
    #[cold]
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(64);
        self.slots = vec![
            Slot {
                at: 0,
                len: 0,
                id: EMPTY_SLOT
            };
            n
        ];
        for id in 0..self.ends.len() {
            let (from, to) = (self.start(id), self.ends[id] as usize);
            let s = &self.text[from..to];
            let hash = hash(s.as_bytes(), self.seed);
            let mut i = hash as usize & (n - 1);
            while self.slots[i].id != EMPTY_SLOT {
                i = (i + 1) & (n - 1);
            }
            self.slots[i] = Slot {
                at: from as u64 | (hash >> START_BITS << START_BITS),
                len: (to - from) as u32,
                id: id as u32,
            };
        }
    }

    /// The id of `s`, if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        let slot = self.slots[self.find(s, hash(s.as_bytes(), self.seed))];
        (slot.id != EMPTY_SLOT).then_some(StrId(slot.id))
    }

    /// The text of an id.
    pub fn get(&self, id: StrId) -> &str {
        let i = id.0 as usize;
        &self.text[self.start(i)..self.ends[i] as usize]
    }

    /// Number of distinct strings (the empty string included).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no string at all (not even the empty one).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every string with its id.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        (0..self.ends.len()).map(|i| (StrId(i as u32), self.get(StrId(i as u32))))
    }

    /// The bytes of all the strings.
    pub(crate) fn text_bytes(&self) -> usize {
        self.text.len()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * 8
            + self.slots.capacity() * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent() {
        let mut s = Strings::default();
        assert_eq!(s.intern(""), StrId::EMPTY);
        let a = s.intern("alpha");
        let b = s.intern("béta");
        assert_ne!(a, b);
        assert_eq!(s.intern("alpha"), a);
        assert_eq!(s.get(b), "béta");
        assert_eq!(s.lookup("béta"), Some(b));
        assert_eq!(s.lookup("gamma"), None);
        for i in 0..10_000 {
            s.intern(&format!("n{i}"));
        }
        assert_eq!(s.intern("alpha"), a);
        assert_eq!(s.len(), 10_003);
        // Strings that differ only in their tail, or in one middle byte.
        let long = "0123456789abcdefghijklmnopqrstuvwxyz";
        let x = s.intern(long);
        for i in 0..long.len() {
            let mut v = long.as_bytes().to_vec();
            v[i] = b'_';
            let other = s.intern(std::str::from_utf8(&v).unwrap());
            assert_ne!(other, x, "byte {i}");
            assert_eq!(s.get(other).as_bytes(), &v[..]);
        }
        assert_eq!(s.intern(long), x);
    }

    /// Every length around the 8-byte words the comparison reads, differing in any one
    /// byte, and equal strings after the table has grown many times.
    #[test]
    fn word_comparison_sees_every_byte() {
        let mut s = Strings::default();
        let mut ids = Vec::new();
        for len in 1..=40usize {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            for i in 0..len {
                let mut v = base.clone();
                v[i] = b'_';
                ids.push((v.clone(), s.intern(std::str::from_utf8(&v).unwrap())));
            }
            ids.push((base.clone(), s.intern(std::str::from_utf8(&base).unwrap())));
        }
        let distinct: std::collections::HashSet<_> = ids.iter().map(|(_, id)| *id).collect();
        assert_eq!(distinct.len(), ids.len());
        for (v, id) in &ids {
            let text = std::str::from_utf8(v).unwrap();
            assert_eq!(s.intern(text), *id);
            assert_eq!(s.get(*id), text);
            assert_eq!(s.lookup(text), Some(*id));
        }
        assert_eq!(s.iter().count(), s.len());
    }
}
