//! Interned strings: each distinct name is stored once and referred to by a [`StrId`].

use std::hash::BuildHasher;

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

/// The high and low halves of `a * b` xored: every bit of the product mixed into both.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let (hi, lo) = spall_format::time::mul_wide(a, b);
    hi ^ lo
}

/// A hash of a name, inline: names are short, and a general hasher's call and setup cost
/// as much as the hashing. Pairs of 8-byte words, each pair folded with one multiply, two
/// pairs at a time and independent of each other; the last words overlap the ones before
/// them, and strings under 8 bytes are read as two halves.
#[inline(always)]
pub(crate) fn hash(s: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xa076_1d64_78bd_642f;
    let n = s.len();
    let word = |i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let half = |i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap()) as u64;
    let h = seed ^ (n as u64).wrapping_mul(K);
    let (a, b) = if n > 16 {
        let (mut a, mut b) = (h, h.rotate_left(32));
        let mut i = 0;
        while i + 32 < n {
            a = fold_mul(a ^ word(i), K2 ^ word(i + 8));
            b = fold_mul(b ^ word(i + 16), K ^ word(i + 24));
            i += 32;
        }
        // The last 32 bytes, or the first and last 16 of a shorter string.
        let (p, q) = (n.saturating_sub(32), n - 16);
        (
            fold_mul(a ^ word(p), K2 ^ word(p + 8)),
            fold_mul(b ^ word(q), K ^ word(q + 8)),
        )
    } else if n >= 8 {
        (h ^ word(0), word(n - 8))
    } else if n >= 4 {
        (h ^ half(0), half(n - 4))
    } else if n > 0 {
        (h ^ s[0] as u64, (s[n / 2] as u64) << 8 | s[n - 1] as u64)
    } else {
        (h, 0)
    };
    fold_mul(a ^ K2, b ^ seed)
}

/// `a == b` for slices of equal length, inline: names are short, and a call to `memcmp`
/// per lookup costs more than the comparison (spall.h's names are of 3 and 4 bytes).
/// Under 8 bytes, two words of half the length that overlap.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if b.len() != n {
        return false;
    }
    if n < 8 {
        let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap());
        let quarter = |s: &[u8], i: usize| u16::from_le_bytes(s[i..i + 2].try_into().unwrap());
        return match n {
            4.. => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
            2.. => quarter(a, 0) == quarter(b, 0) && quarter(a, n - 2) == quarter(b, n - 2),
            _ => a == b,
        };
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, n - 8) == word(b, n - 8)
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

    /// The hash reads every byte: strings that differ in any one byte, at every length
    /// around its words and pairs of words, hash apart.
    #[test]
    fn hash_sees_every_byte() {
        let seed = Strings::default().seed;
        for len in 1..=80usize {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let h = hash(&base, seed);
            for i in 0..len {
                let mut v = base.clone();
                v[i] = b'_';
                assert_ne!(hash(&v, seed), h, "length {len}, byte {i}");
            }
            assert_ne!(hash(&base[..len - 1], seed), h, "length {len}");
        }
    }

    /// The comparison alone (a lookup reaches it only where hashes agree), at every length
    /// around the words it reads: equal slices, and slices differing in any one byte.
    #[test]
    fn same_compares_every_byte() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "length {len}");
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!same(&a, &b), "length {len}, byte {i}");
            }
            assert!(!same(&a, &[a.as_slice(), b"x"].concat()), "length {len}");
        }
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
