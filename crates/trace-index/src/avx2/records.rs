//! Stored records into a frame's items in AVX2: copied as they are (a query at a level's own
//! thresholds), or merged (a query at coarser thresholds than the level it reads).
//!
//! A record is read as one 32-byte vector and 4 records are transposed into columns. Each
//! record's item is written as a 32-byte row and an 8-byte word, as the span walk writes.
//!
//! The merge is built for levels whose records rarely join (a query between two stored
//! levels of a lane whose item count barely changes between them: a view of the whole
//! trace merges 42k records into 37k items). Each record is first written as its own item;
//! then the items of several records are recomputed, one by one, in scalar code. Both
//! return the scalar code's items exactly (the merge is tested against it in `levels`' unit
//! tests; both by every property test on machines with AVX2).

use std::arch::x86_64::*;
use std::mem::{size_of, MaybeUninit};

use super::{available, fill, joins4, put_row, words, Open};
use crate::levels::LevelItem;
use crate::lod::Item;

// Records are read as one 32-byte vector: start, end, first | busy << 32 and
// longest | name << 32.
const _: () = {
    use std::mem::offset_of;
    assert!(size_of::<LevelItem>() == 32);
    assert!(offset_of!(LevelItem, start) == 0);
    assert!(offset_of!(LevelItem, end) == 8);
    assert!(offset_of!(LevelItem, first) == 16);
    assert!(offset_of!(LevelItem, busy) == 20);
    assert!(offset_of!(LevelItem, longest) == 24);
    assert!(offset_of!(LevelItem, name) == 28);
};

/// Writes the items of `records` but the last, taken as they are (none joins another: the
/// level's records at its own thresholds), to `slots`, 4 at a time: record `r`'s item ends
/// with the span before record `r + 1`'s first. Returns how many it wrote: a multiple of 4
/// (the caller writes the rest).
///
/// # Panics
/// If the CPU lacks AVX2 or `slots` is shorter than `records.len() - 1`.
#[inline]
pub(crate) fn copy_records(
    records: &[LevelItem],
    wide: i64,
    slots: &mut [MaybeUninit<Item>],
) -> usize {
    let vectors = records.len().saturating_sub(1) / 4;
    assert!(available() && slots.len() >= 4 * vectors);
    // SAFETY: the CPU has AVX2, the records read (up to 4 * vectors + 1) exist and the
    // slots written (4 * vectors) are within `slots` (asserted above).
    #[allow(unsafe_code)]
    unsafe {
        copy_vectors(records, wide, slots, vectors)
    };
    4 * vectors
}

/// [`copy_records`] for records `0..4 * vectors`.
///
/// # Safety
/// The CPU must have AVX2, `records` must hold at least `4 * vectors + 1` records and
/// `slots` at least `4 * vectors` slots.
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn copy_vectors(
    records: &[LevelItem],
    wide: i64,
    slots: &mut [MaybeUninit<Item>],
    vectors: usize,
) {
    debug_assert!(records.len() > 4 * vectors && slots.len() >= 4 * vectors);
    let low = _mm256_set1_epi64x(0xFFFF_FFFF);
    let one = _mm256_set1_epi64x(1);
    let wv = _mm256_set1_epi64x(wide);
    let src = records.as_ptr().cast::<__m256i>();
    let out = slots.as_mut_ptr().cast::<u8>();
    for v in 0..vectors {
        let r = 4 * v;
        // SAFETY: records r .. r + 4 exist (r + 4 <= 4 * vectors < records.len()).
        let rows = unsafe { [0, 1, 2, 3].map(|x| _mm256_loadu_si256(src.add(r + x))) };
        let (_, _, fb, ln) = transpose(rows);
        let first = _mm256_and_si256(fb, low);
        let busy = _mm256_srli_epi64::<32>(fb);
        // Each record's last span: the one before the next record's first.
        let next_first = next_firsts(first, records[r + 4].first);
        let last = _mm256_sub_epi64(next_first, one);
        let (items, words) = item_rows(rows, (first, busy, last), ln, (wv, low));
        for x in 0..4 {
            // SAFETY: slot r + x < 4 * vectors is within `slots`.
            unsafe { put_row(out, r + x, items[x], words[x]) };
        }
    }
}

/// The 4 x 4 64-bit words of 4 records as columns: start, end, first | busy << 32 and
/// longest | name << 32.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(rows: [__m256i; 4]) -> (__m256i, __m256i, __m256i, __m256i) {
    let t0 = _mm256_unpacklo_epi64(rows[0], rows[1]);
    let t1 = _mm256_unpackhi_epi64(rows[0], rows[1]);
    let t2 = _mm256_unpacklo_epi64(rows[2], rows[3]);
    let t3 = _mm256_unpackhi_epi64(rows[2], rows[3]);
    (
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    )
}

/// The first spans of records `x + 1 .. x + 5`, from those of `x .. x + 4` and `next`.
#[inline]
#[target_feature(enable = "avx2")]
fn next_firsts(first: __m256i, next: u32) -> __m256i {
    _mm256_blend_epi32::<0b1100_0000>(
        _mm256_permute4x64_epi64::<0b11_11_10_01>(first),
        _mm256_set1_epi64x(next as i64),
    )
}

/// Each record's own item, from its row and its columns `first`, `busy`, `last` (its last
/// span) and `longest | name << 32`: 4 rows of (start, end, busy, first | last << 32) and 4
/// words of `name | merged << 32`.
#[inline]
#[target_feature(enable = "avx2")]
fn item_rows(
    rows: [__m256i; 4],
    (first, busy, last): (__m256i, __m256i, __m256i),
    ln: __m256i,
    (wv, low): (__m256i, __m256i),
) -> ([__m256i; 4], [i64; 4]) {
    let fl = _mm256_or_si256(first, _mm256_slli_epi64::<32>(last));
    // A box unless one span of `wide` or more (as `Item::of`).
    let narrow = _mm256_cmpgt_epi64(wv, _mm256_and_si256(ln, low));
    let single = _mm256_cmpeq_epi64(first, last);
    let merged_bit = _mm256_set1_epi64x(1 << 32);
    let merged = _mm256_andnot_si256(_mm256_andnot_si256(narrow, single), merged_bit);
    let nmw = _mm256_or_si256(_mm256_srli_epi64::<32>(ln), merged);
    // Rows: (start, end) from the record, then (busy, first | last << 32).
    let u0 = _mm256_unpacklo_epi64(busy, fl);
    let u1 = _mm256_unpackhi_epi64(busy, fl);
    let items = [
        _mm256_permute2x128_si256::<0x20>(rows[0], u0),
        _mm256_permute2x128_si256::<0x20>(rows[1], u1),
        _mm256_permute2x128_si256::<0x30>(rows[2], u0),
        _mm256_permute2x128_si256::<0x30>(rows[3], u1),
    ];
    (items, words(nmw))
}

/// Records per block of the vector merge.
pub(crate) const MERGE_BLOCK: usize = 64;

/// Merges records `recs` (1 to [`MERGE_BLOCK`] of them, none saturated, whose sums fit in an `i64`) into
/// `cur` (whose last record is the one before them), appending the items it closes to `out`:
/// the scalar merge's answer, item for item.
///
/// # Panics
/// If the CPU lacks AVX2, or the block reads past the records (up to `recs.end` rounded up
/// to a multiple of 4, and one more, must exist).
#[inline]
pub(crate) fn merge_block(
    records: &[LevelItem],
    recs: std::ops::Range<usize>,
    thresholds: (i64, i64),
    cur: &mut Open,
    out: &mut Vec<Item>,
) {
    let (i, m) = (recs.start, recs.len());
    assert!(
        available() && (1..=MERGE_BLOCK).contains(&m) && i + m.next_multiple_of(4) < records.len()
    );
    // SAFETY: the CPU has AVX2 and the records read are within bounds (asserted above), and
    // `merge` initialises the slots it counts.
    #[allow(unsafe_code)]
    unsafe {
        fill(out, |slots| merge(&records[i..], m, thresholds, cur, slots));
    }
}

/// Merges records `0..m` of `records` into `cur`, writing the items it closes to `slots`.
/// Returns how many it wrote.
///
/// 1. Whether record `x` joins the item before it depends only on records `x - 1` and `x`
///    (as in the span walk), so the block's item boundaries are computed first, as a mask.
/// 2. Each record is written as its own item to the next free slot, which moves on when the
///    next record starts an item: right for every record that is an item alone.
/// 3. The items of several records, and `cur`, are recomputed in scalar code (few, in the
///    levels this is for) and written over their slots.
///
/// # Safety
/// The CPU must have AVX2, and `records` must hold more than `m.next_multiple_of(4)`
/// records (`1 <= m <= MERGE_BLOCK`).
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn merge(
    records: &[LevelItem],
    m: usize,
    (wide, gap): (i64, i64),
    cur: &mut Open,
    slots: &mut [MaybeUninit<Item>; MERGE_BLOCK + 1],
) -> usize {
    debug_assert!((1..=MERGE_BLOCK).contains(&m) && m.next_multiple_of(4) < records.len());
    let vectors = m.div_ceil(4);
    let src = records.as_ptr().cast::<__m256i>();
    // SAFETY: vector v reads records 4v .. 4v + 4, which exist (the caller's contract).
    let load = |v: usize| unsafe { [0, 1, 2, 3].map(|x| _mm256_loadu_si256(src.add(4 * v + x))) };
    let low = _mm256_set1_epi64x(0xFFFF_FFFF);
    let wv = _mm256_set1_epi64x(wide);
    let gap_flipped = _mm256_set1_epi64x(gap ^ i64::MIN);

    // 1. Bit x: record x starts a new item. The item before record 0 is `cur`.
    let mut bounds = 0u64;
    let (mut end_before, mut long_before) =
        (_mm256_set1_epi64x(cur.end), _mm256_set1_epi64x(cur.longest));
    for v in 0..vectors {
        let (start, end, _, ln) = transpose(load(v));
        let longest = _mm256_and_si256(ln, low);
        // Each lane's record before: lanes moved up one, the lowest from the last vector.
        let up = |x: __m256i, carry: __m256i| {
            _mm256_blend_epi32::<0b0000_0011>(_mm256_permute4x64_epi64::<0b10_01_00_00>(x), carry)
        };
        let before = (up(end, end_before), up(longest, long_before));
        let joins = joins4((start, longest), before, (wv, gap_flipped)) as u64;
        bounds |= (!joins & 0xF) << (4 * v);
        let top = _mm256_permute4x64_epi64::<0b11_11_11_11>;
        (end_before, long_before) = (top(end), top(longest));
    }
    let all = u64::MAX >> (64 - m);
    bounds &= all;

    // 2. `cur` in slot 0, then each record as its own item.
    let c = *cur;
    let item_of = |o: &Open, last: u32| {
        Item::of(
            (o.first, last),
            (o.from, o.end, o.busy),
            (o.longest, o.name),
            wide,
        )
    };
    slots[0].write(item_of(&c, records[0].first - 1));
    let out = slots.as_mut_ptr().cast::<u8>();
    let mut k = (bounds & 1) as usize;
    for v in 0..vectors {
        let rows = load(v);
        let (_, _, fb, ln) = transpose(rows);
        let first = _mm256_and_si256(fb, low);
        let busy = _mm256_srli_epi64::<32>(fb);
        let last = _mm256_sub_epi64(
            next_firsts(first, records[4 * v + 4].first),
            _mm256_set1_epi64x(1),
        );
        let (items, words) = item_rows(rows, (first, busy, last), ln, (wv, low));
        // Record x closes its item when x + 1 starts one (never the block's last record:
        // that item stays open).
        let closes = bounds >> (4 * v + 1);
        for x in 0..4 {
            // SAFETY: k counts the items closed so far, at most the records before this
            // one plus `cur`, so k <= MERGE_BLOCK.
            unsafe { put_row(out, k, items[x], words[x]) };
            k += ((closes >> x) & 1) as usize;
        }
    }

    // 3. Items of several records: record a starts one and records a + 1 .. q join it
    // (a = none: they join `cur`).
    let mut joins = !bounds & all;
    let mut open = None;
    while joins != 0 {
        let p = joins.trailing_zeros() as usize;
        let q = p + (!(joins >> p)).trailing_zeros() as usize;
        joins &= u64::MAX.checked_shl(q as u32).unwrap_or(0);
        let (mut item, slot) = match p {
            0 => (c, 0),
            _ => (
                Open::of(&records[p - 1]),
                (bounds & ((1u64 << p) - 1)).count_ones() as usize,
            ),
        };
        for r in &records[p..q] {
            item.absorb(r);
        }
        if q < m {
            slots[slot].write(item_of(&item, records[q].first - 1));
        } else {
            open = Some(item);
        }
    }
    *cur = open.unwrap_or_else(|| Open::of(&records[m - 1]));
    k
}

impl Open {
    /// A record (not saturated) as the open item.
    #[inline]
    fn of(r: &LevelItem) -> Open {
        Open {
            first: r.first,
            from: r.start,
            end: r.end,
            busy: r.busy as i64,
            longest: r.longest as i64,
            name: r.name,
        }
    }

    /// `r` (not saturated) joins the item.
    #[inline]
    fn absorb(&mut self, r: &LevelItem) {
        self.end = r.end;
        self.busy += r.busy as i64;
        if r.longest as i64 > self.longest {
            (self.longest, self.name) = (r.longest as i64, r.name);
        }
    }
}
