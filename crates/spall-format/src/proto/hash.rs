//! A hasher for integer keys (interning ids, track uuids): one multiply, not SipHash.
//! Keys come from the file, but a collision-heavy file only slows its own decode.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}

pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Interned entries by iid. Writers number them from 1 up, so the iids in use are mostly
/// small and dense: those go in a vector indexed by iid (no hashing on every event's
/// name), never longer than twice its entries and 64, any other in a map.
pub struct IidMap<V> {
    small: Vec<Option<V>>,
    /// The entries in `small`.
    filled: usize,
    big: IdMap<u64, V>,
}

impl<V> Default for IidMap<V> {
    fn default() -> Self {
        IidMap {
            small: Vec::new(),
            filled: 0,
            big: IdMap::default(),
        }
    }
}

impl<V> IidMap<V> {
    #[inline]
    pub fn get(&self, iid: &u64) -> Option<&V> {
        match usize::try_from(*iid).ok().and_then(|i| self.small.get(i)) {
            Some(Some(v)) => Some(v),
            _ if self.big.is_empty() => None,
            _ => self.big.get(iid),
        }
    }

    pub fn insert(&mut self, iid: u64, v: V) {
        let room = 2 * self.filled + 64;
        match usize::try_from(iid).ok().filter(|&i| i < room) {
            Some(i) => {
                if i >= self.small.len() {
                    self.small.resize_with(i + 1, || None);
                }
                self.filled += usize::from(self.small[i].is_none());
                self.small[i] = Some(v);
                if !self.big.is_empty() {
                    self.big.remove(&iid);
                }
            }
            None => {
                self.big.insert(iid, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iid_maps_answer_as_hash_maps_and_stay_small() {
        let mut m = IidMap::default();
        let mut want: IdMap<u64, u64> = IdMap::default();
        // Dense iids, far ones, overwrites, and one (70) first too far for the vector,
        // which then grows over it.
        let iids = [70].into_iter().chain(1..70).chain(71..200);
        let iids = iids.chain([5, 1 << 40, 300, 150, u64::MAX, 90, 1 << 20]);
        for (n, iid) in iids.chain((200..400).rev()).enumerate() {
            m.insert(iid, n as u64);
            want.insert(iid, n as u64);
        }
        for iid in (0..1000).chain([1 << 40, 1 << 20, u64::MAX, 1 << 41]) {
            assert_eq!(m.get(&iid), want.get(&iid), "{iid}");
        }
        assert!(m.small.len() <= 2 * m.filled + 64);
        assert!(m.small[70].is_none() && m.big.contains_key(&70));
        // One far iid after another never grows the vector.
        let mut far = IidMap::default();
        for k in 0..40 {
            far.insert(1u64 << (k + 7), k);
        }
        assert!(far.small.is_empty());
    }
}
