//! Stored records into a frame's items in AVX2, copied as they are (a query at a level's
//! own thresholds).
//!
//! A record is read as one 32-byte vector, and the words of 4 records that change are
//! gathered into columns. Each
//! record's item is written as a 32-byte row and an 8-byte word, as the span walk writes.
//! The answer is the scalar copy's, item for item (checked by every property test on
//! machines with AVX2).

use std::arch::x86_64::*;
use std::mem::{size_of, MaybeUninit};

use super::{available, put_row, words};
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
        let (fb, ln) = columns(rows);
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

/// Columns of 4 records: their words `first | busy << 32` and `longest | name << 32`.
#[inline]
#[target_feature(enable = "avx2")]
fn columns(rows: [__m256i; 4]) -> (__m256i, __m256i) {
    let t0 = _mm256_unpacklo_epi64(rows[0], rows[1]);
    let t1 = _mm256_unpackhi_epi64(rows[0], rows[1]);
    let t2 = _mm256_unpacklo_epi64(rows[2], rows[3]);
    let t3 = _mm256_unpackhi_epi64(rows[2], rows[3]);
    (
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
