//! The span walk's inner loop in AVX2: a block of up to 16 spans, 4 at a time, with the
//! scalar walk's answer (`walk.rs`, the reference).
//!
//! The scalar loop carries the open item from span to span, moving six running values
//! through too few registers. Here:
//!
//! 1. Whether span `x` starts a new item depends only on spans `x - 1` and `x` (an item of
//!    several spans holds only narrow spans, so "the item's longest is narrow" is "span
//!    `x - 1` is narrow"), so the block's boundaries are computed first, as a bit mask.
//! 2. The running values of the open item at each span (busy time, first longest span and
//!    its name, first span and its start) are *segmented scans* over 4 lanes: two
//!    shift-and-combine steps that stop at boundaries, then the item carried in from before
//!    the vector.
//! 3. Span `x` closes an item when span `x + 1` starts one. Each span's running item is
//!    written to the next free output slot, which moves on only when the item closes (as in
//!    the scalar walk: no branch on the data).
//!
//! Sums are plain (wrapping) adds, so the walk uses this only on lanes whose last end and
//! extent fit in an `i64` (then no end or sum over a range overflows).

use std::arch::x86_64::*;
use std::mem::{size_of, MaybeUninit};

use trace_model::StrId;

use crate::item::Item;

/// Proof that this CPU has AVX2: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// An `Avx2` if the CPU has it (detected at run time, cached by the standard library).
    #[inline]
    pub(crate) fn detect() -> Option<Avx2> {
        is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

// Items are written as a 32-byte row (start, end, busy, first | last << 32) and an 8-byte
// word (name | merged << 32).
const _: () = {
    use std::mem::{align_of, offset_of};
    assert!(size_of::<Item>() == 40 && align_of::<Item>() == 8);
    assert!(offset_of!(Item, start) == 0);
    assert!(offset_of!(Item, end) == 8);
    assert!(offset_of!(Item, busy) == 16);
    assert!(offset_of!(Item, first) == 24);
    assert!(offset_of!(Item, last) == 28);
    assert!(offset_of!(Item, name) == 32);
    assert!(offset_of!(Item, merged) == 36);
    assert!(size_of::<StrId>() == 4);
};
/// The item being grown, before a block: spans `first..` up to the block's first span.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Open {
    pub first: u32,
    pub from: i64,
    pub end: i64,
    pub busy: i64,
    pub longest: i64,
    pub name: StrId,
}

/// Output slots for one block: the open item, and one item per span.
const SLOTS: usize = 17;

/// Walks the spans `spans` (1 to 16 of them, after the lane's first) of a lane whose sums fit
/// in an `i64`, growing `cur` and appending the items it closes to `out`.
///
/// # Panics
/// If the block breaks those bounds or reads past the lane (spans up to `spans.end` rounded
/// up to a multiple of 4 must exist): the caller checks them first.
#[inline]
pub(crate) fn walk_block(
    _: Avx2,
    cols: (&[i64], &[i64], &[StrId]),
    spans: std::ops::Range<usize>,
    thresholds: (i64, i64),
    cur: &mut Open,
    out: &mut Vec<Item>,
) {
    let (i, m) = (spans.start, spans.len());
    let n = cols.0.len().min(cols.1.len()).min(cols.2.len());
    assert!(i >= 1 && (1..=16).contains(&m) && i + m.next_multiple_of(4) <= n);
    out.reserve(SLOTS);
    let base = out.len();
    let slots = (&mut out.spare_capacity_mut()[..SLOTS]).try_into().unwrap();
    // SAFETY: the CPU has AVX2 (the token) and the spans are within bounds (asserted above).
    #[allow(unsafe_code)]
    let k = unsafe { block(cols, (i, m), thresholds, cur, slots) };
    // SAFETY: `block` initialised slots 0..k, within the capacity reserved.
    #[allow(unsafe_code)]
    unsafe {
        out.set_len(base + k);
    }
}

/// Walks spans `i..i + m` of a lane whose sums fit in an `i64` (`1 <= i`, `1 <= m <= 16`,
/// and spans up to `i + m` rounded up to a multiple of 4 exist), growing `cur` and writing
/// the items it closes to `slots`. Returns how many items were written.
///
/// # Safety
/// The CPU must have AVX2 ([`Avx2`]), and `start`, `dur` and `names` must hold at least
/// `i + m.next_multiple_of(4)` spans.
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn block(
    (start, dur, names): (&[i64], &[i64], &[StrId]),
    (i, m): (usize, usize),
    (wide, gap): (i64, i64),
    cur: &mut Open,
    slots: &mut [MaybeUninit<Item>; SLOTS],
) -> usize {
    debug_assert!(i >= 1 && (1..=16).contains(&m));
    debug_assert!(i + m.next_multiple_of(4) <= start.len().min(dur.len()).min(names.len()));
    let vectors = m.div_ceil(4);
    let wv = _mm256_set1_epi64x(wide);
    let sign = _mm256_set1_epi64x(i64::MIN);
    // `apart < gap` unsigned, as the scalar walk compares: both flipped, then signed.
    let gap_flipped = _mm256_set1_epi64x(gap ^ i64::MIN);
    // SAFETY (all loads below): vector v reads spans i + 4v - 1 .. i + 4v + 4, within the
    // spans the caller guarantees (i >= 1, i + 4 * vectors <= len).
    let load = |a: &[i64], x: usize| unsafe { _mm256_loadu_si256(a.as_ptr().add(x).cast()) };

    // 1. Boundaries: bit x set when span i + x starts a new item.
    let mut bounds = 0u32;
    for v in 0..vectors {
        let x = i + 4 * v;
        let (s, d) = (load(start, x), load(dur, x));
        let (sp, dp) = (load(start, x - 1), load(dur, x - 1));
        let apart = _mm256_xor_si256(_mm256_sub_epi64(s, _mm256_add_epi64(sp, dp)), sign);
        let near = _mm256_cmpgt_epi64(gap_flipped, apart);
        let narrow = _mm256_and_si256(_mm256_cmpgt_epi64(wv, d), _mm256_cmpgt_epi64(wv, dp));
        let joins = _mm256_and_si256(narrow, near);
        let joins = _mm256_movemask_pd(_mm256_castsi256_pd(joins)) as u32;
        bounds |= (!joins & 0xF) << (4 * v);
    }
    bounds &= (1u32 << m) - 1;

    // The open item closes before the block if its first span starts one.
    let c = *cur;
    let last = (i - 1) as u32;
    slots[0].write(Item::of(
        (c.first, last),
        (c.from, c.end, c.busy),
        (c.longest, c.name),
        wide,
    ));
    let mut k = (bounds & 1) as usize;

    // 2. and 3., 4 spans at a time, carrying the open item in broadcast vectors.
    let mut c_busy = _mm256_set1_epi64x(c.busy);
    let mut c_long = _mm256_set1_epi64x(c.longest);
    let mut c_name = _mm256_set1_epi64x(c.name.0 as i64);
    let mut c_first = _mm256_set1_epi64x(c.first as i64);
    let mut c_from = _mm256_set1_epi64x(c.from);
    let mut c_end = _mm256_set1_epi64x(c.end);
    let lanes = _mm256_set_epi64x(3, 2, 1, 0);
    let bits = _mm256_set_epi64x(8, 4, 2, 1);
    let zero = _mm256_setzero_si256();
    let min = _mm256_set1_epi64x(i64::MIN);
    let merged_bit = _mm256_set1_epi64x(1 << 32);
    // Added to twice a lane number, the two 32-bit halves of that 64-bit lane.
    let halves = _mm256_set_epi32(1, 0, 1, 0, 1, 0, 1, 0);
    let out = slots.as_mut_ptr().cast::<u8>();
    for v in 0..vectors {
        let x = i + 4 * v;
        let s = load(start, x);
        let d = load(dur, x);
        // SAFETY: names i + 4v .. i + 4v + 4 exist (as above).
        let nm = unsafe { _mm_loadu_si128(names.as_ptr().add(x).cast()) };
        let mut name = _mm256_cvtepu32_epi64(nm);
        let end = _mm256_add_epi64(s, d);
        let index = _mm256_add_epi64(_mm256_set1_epi64x(x as i64), lanes);
        // Segment starts: all ones where a span starts an item.
        let b = _mm256_set1_epi64x(((bounds >> (4 * v)) & 0xF) as i64);
        let mut seg = _mm256_cmpeq_epi64(_mm256_and_si256(b, bits), bits);
        let (mut busy, mut long, mut first, mut from) = (d, d, index, s);
        // Two scan steps: each lane takes in the lane 1, then 2, below it, unless its
        // window already reaches a segment start. Lanes shifted in from below the vector
        // are identities (0, MIN) or, for the copies, left for the carry.
        macro_rules! step {
            ($shift:expr, $fill:expr) => {{
                let sh = |v: __m256i, id: __m256i| {
                    _mm256_blend_epi32::<{ $fill }>(_mm256_permute4x64_epi64::<{ $shift }>(v), id)
                };
                let below = sh(busy, zero);
                busy = _mm256_add_epi64(busy, _mm256_andnot_si256(seg, below));
                let (bl, bn) = (sh(long, min), sh(name, zero));
                let keep = _mm256_or_si256(seg, _mm256_cmpgt_epi64(long, bl));
                long = _mm256_blendv_epi8(bl, long, keep);
                name = _mm256_blendv_epi8(bn, name, keep);
                first = _mm256_blendv_epi8(sh(first, zero), first, seg);
                from = _mm256_blendv_epi8(sh(from, zero), from, seg);
                seg = _mm256_or_si256(seg, sh(seg, zero));
            }};
        }
        step!(0b10_01_00_00, 0b0000_0011);
        step!(0b01_00_00_00, 0b0000_1111);
        // The carried item, for lanes with no segment start at or below them.
        busy = _mm256_add_epi64(busy, _mm256_andnot_si256(seg, c_busy));
        let keep = _mm256_or_si256(seg, _mm256_cmpgt_epi64(long, c_long));
        long = _mm256_blendv_epi8(c_long, long, keep);
        name = _mm256_blendv_epi8(c_name, name, keep);
        first = _mm256_blendv_epi8(c_first, first, seg);
        from = _mm256_blendv_epi8(c_from, from, seg);
        // Rows: (from, end, busy, first | last << 32) and (name | merged << 32).
        let fl = _mm256_or_si256(first, _mm256_slli_epi64::<32>(index));
        let merged = _mm256_and_si256(_mm256_cmpgt_epi64(wv, long), merged_bit);
        let nmw = _mm256_or_si256(name, merged);
        let t0 = _mm256_unpacklo_epi64(from, end);
        let t1 = _mm256_unpackhi_epi64(from, end);
        let t2 = _mm256_unpacklo_epi64(busy, fl);
        let t3 = _mm256_unpackhi_epi64(busy, fl);
        let rows = [
            _mm256_permute2x128_si256::<0x20>(t0, t2),
            _mm256_permute2x128_si256::<0x20>(t1, t3),
            _mm256_permute2x128_si256::<0x31>(t0, t2),
            _mm256_permute2x128_si256::<0x31>(t1, t3),
        ];
        let words = words(nmw);
        // Span x closes its item when span x + 1 starts one (never the block's last span:
        // that item stays open).
        let closes = bounds >> (4 * v + 1);
        for lane in 0..4 {
            // SAFETY: k counts the items closed so far, at most the spans before this one
            // plus the open item, so k <= 16 < SLOTS: the row stays inside `slots`.
            unsafe { put_row(out, k, rows[lane], words[lane]) };
            k += ((closes >> lane) & 1) as usize;
        }
        // The open item after this vector's last span in the block.
        let top = if v + 1 < vectors { 3 } else { (m - 1) % 4 };
        let pick = _mm256_add_epi32(_mm256_set1_epi32(2 * top as i32), halves);
        let bcast = |v: __m256i| _mm256_permutevar8x32_epi32(v, pick);
        (c_busy, c_long, c_name) = (bcast(busy), bcast(long), bcast(name));
        (c_first, c_from, c_end) = (bcast(first), bcast(from), bcast(end));
    }
    let scalar = |v: __m256i| _mm_cvtsi128_si64(_mm256_castsi256_si128(v));
    *cur = Open {
        first: scalar(c_first) as u32,
        from: scalar(c_from),
        end: scalar(c_end),
        busy: scalar(c_busy),
        longest: scalar(c_long),
        name: StrId(scalar(c_name) as u32),
    };
    k
}

/// The 4 64-bit lanes of `v`.
#[inline]
#[target_feature(enable = "avx2")]
fn words(v: __m256i) -> [i64; 4] {
    let (lo, hi) = (_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    [
        _mm_cvtsi128_si64(lo),
        _mm_extract_epi64::<1>(lo),
        _mm_cvtsi128_si64(hi),
        _mm_extract_epi64::<1>(hi),
    ]
}

/// Writes an item as its 32-byte row (start, end, busy, first | last << 32) and its word
/// (name | merged << 32) to slot `k` of `out`.
///
/// # Safety
/// Slot `k` must be within the slots `out` points to.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn put_row(out: *mut u8, k: usize, row: __m256i, word: i64) {
    // SAFETY: the slot is within the caller's slots (its contract).
    unsafe {
        let at = out.add(k * size_of::<Item>());
        _mm256_storeu_si256(at.cast(), row);
        at.add(32).cast::<i64>().write_unaligned(word);
    }
}
