//! Interned strings: each distinct name is stored once and referred to by a [`StrId`].

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

/// An interned string. `StrId::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(pub u32);

impl StrId {
    pub const EMPTY: StrId = StrId(0);
}

/// The string table. Each string is stored once; the hash table holds only indices.
#[derive(Clone, Debug)]
pub struct Strings {
    list: Vec<Box<str>>,
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Strings {
            list: Vec::new(),
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        };
        s.intern("");
        s
    }
}

impl Strings {
    /// The id of `s`, adding it if it is new.
    #[inline]
    pub fn intern(&mut self, s: &str) -> StrId {
        // Empty categories and End-event names are the most common strings of all.
        if s.is_empty() && !self.list.is_empty() {
            return StrId::EMPTY;
        }
        let hash = self.hasher.hash_one(s);
        let list = &self.list;
        if let Some(&i) = self.table.find(hash, |&i| &*list[i as usize] == s) {
            return StrId(i);
        }
        let i = u32::try_from(self.list.len()).expect("fewer than 2^32 distinct strings");
        self.list.push(s.into());
        let (list, hasher) = (&self.list, &self.hasher);
        self.table
            .insert_unique(hash, i, |&j| hasher.hash_one(&*list[j as usize]));
        StrId(i)
    }

    /// The id of `s`, if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        let hash = self.hasher.hash_one(s);
        self.table
            .find(hash, |&i| &*self.list[i as usize] == s)
            .map(|&i| StrId(i))
    }

    /// The text of an id.
    pub fn get(&self, id: StrId) -> &str {
        &self.list[id.0 as usize]
    }

    /// Number of distinct strings (the empty string included).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Every string with its id.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, s)| (StrId(i as u32), &**s))
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.list.iter().map(|s| s.len()).sum::<usize>()
            + self.list.capacity() * std::mem::size_of::<Box<str>>()
            + self.table.capacity() * 5
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
}
