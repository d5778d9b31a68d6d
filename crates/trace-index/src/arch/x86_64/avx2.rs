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
    // SAFETY: the caller's bounds are `bounds`'s.
    let bounds = unsafe { bounds((start, dur), (i, m), (wide, gap)) };

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
    let mut carry = Carry::of(c);
    let wv = _mm256_set1_epi64x(wide);
    let lanes = _mm256_set_epi64x(3, 2, 1, 0);
    let bits = _mm256_set_epi64x(8, 4, 2, 1);
    let out = slots.as_mut_ptr().cast::<u8>();
    for v in 0..vectors {
        let x = i + 4 * v;
        // SAFETY: spans x .. x + 4 exist (the caller's bounds: i + 4 * vectors <= len).
        let (s, d, nm) = unsafe {
            (
                _mm256_loadu_si256(start.as_ptr().add(x).cast()),
                _mm256_loadu_si256(dur.as_ptr().add(x).cast()),
                _mm_loadu_si128(names.as_ptr().add(x).cast()),
            )
        };
        let index = _mm256_add_epi64(_mm256_set1_epi64x(x as i64), lanes);
        // Segment starts: all ones where a span starts an item.
        let b = _mm256_set1_epi64x(((bounds >> (4 * v)) & 0xF) as i64);
        let seg = _mm256_cmpeq_epi64(_mm256_and_si256(b, bits), bits);
        let run = scan((d, _mm256_cvtepu32_epi64(nm), index, s), seg, &carry);
        let end = _mm256_add_epi64(s, d);
        // Span x closes its item when span x + 1 starts one (never the block's last span:
        // that item stays open).
        let closes = bounds >> (4 * v + 1);
        // SAFETY: k counts the items closed so far, at most the spans before this vector
        // plus the open item (k <= 4v + 1 <= 13), so slots k .. k + 4 are inside `slots`.
        k = unsafe { put_rows(out, k, &run, (end, index), wv, closes) };
        // The open item after this vector's last span in the block.
        let top = if v + 1 < vectors { 3 } else { (m - 1) % 4 };
        carry = Carry::at(&run, end, top);
    }
    *cur = carry.open();
    k
}

/// Step 1 of [`block`]: bit `x` set when span `i + x` starts a new item (`x < m`).
///
/// # Safety
/// As [`block`]'s: spans `i - 1 .. i + m.next_multiple_of(4)` exist.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn bounds(
    (start, dur): (&[i64], &[i64]),
    (i, m): (usize, usize),
    (wide, gap): (i64, i64),
) -> u32 {
    let wv = _mm256_set1_epi64x(wide);
    let sign = _mm256_set1_epi64x(i64::MIN);
    // `apart < gap` unsigned, as the scalar walk compares: both flipped, then signed.
    let gap_flipped = _mm256_set1_epi64x(gap ^ i64::MIN);
    // SAFETY (all loads below): vector v reads spans i + 4v - 1 .. i + 4v + 4, within the
    // spans the caller guarantees (i >= 1, i + 4 * vectors <= len).
    let load = |a: &[i64], x: usize| unsafe { _mm256_loadu_si256(a.as_ptr().add(x).cast()) };
    let mut bounds = 0u32;
    for v in 0..m.div_ceil(4) {
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
    bounds & ((1u32 << m) - 1)
}

/// The item open before a vector of spans, broadcast to its 4 lanes.
#[derive(Clone, Copy)]
struct Carry {
    busy: __m256i,
    long: __m256i,
    name: __m256i,
    first: __m256i,
    from: __m256i,
    end: __m256i,
}

/// Each lane's running item: the open item at that span.
struct Run {
    busy: __m256i,
    long: __m256i,
    name: __m256i,
    first: __m256i,
    from: __m256i,
}

impl Carry {
    /// The item open before the block.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn of(c: Open) -> Carry {
        Carry {
            busy: _mm256_set1_epi64x(c.busy),
            long: _mm256_set1_epi64x(c.longest),
            name: _mm256_set1_epi64x(c.name.0 as i64),
            first: _mm256_set1_epi64x(c.first as i64),
            from: _mm256_set1_epi64x(c.from),
            end: _mm256_set1_epi64x(c.end),
        }
    }

    /// The running item of lane `top` (its spans' `end`s beside), broadcast.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn at(run: &Run, end: __m256i, top: usize) -> Carry {
        // Added to twice a lane number, the two 32-bit halves of that 64-bit lane.
        let halves = _mm256_set_epi32(1, 0, 1, 0, 1, 0, 1, 0);
        let pick = _mm256_add_epi32(_mm256_set1_epi32(2 * top as i32), halves);
        let bcast = |v: __m256i| _mm256_permutevar8x32_epi32(v, pick);
        Carry {
            busy: bcast(run.busy),
            long: bcast(run.long),
            name: bcast(run.name),
            first: bcast(run.first),
            from: bcast(run.from),
            end: bcast(end),
        }
    }

    /// The open item, back in scalars.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn open(&self) -> Open {
        let scalar = |v: __m256i| _mm_cvtsi128_si64(_mm256_castsi256_si128(v));
        Open {
            first: scalar(self.first) as u32,
            from: scalar(self.from),
            end: scalar(self.end),
            busy: scalar(self.busy),
            longest: scalar(self.long),
            name: StrId(scalar(self.name) as u32),
        }
    }
}

/// Step 2 of [`block`] for 4 spans (their durations, names, indices and starts; `seg` all
/// ones where a span starts an item): each lane's running item, a segmented scan that
/// takes in the carried item where no segment starts at or below the lane.
#[inline]
#[target_feature(enable = "avx2")]
fn scan(
    (d, mut name, index, s): (__m256i, __m256i, __m256i, __m256i),
    mut seg: __m256i,
    c: &Carry,
) -> Run {
    let zero = _mm256_setzero_si256();
    let min = _mm256_set1_epi64x(i64::MIN);
    let (mut busy, mut long, mut first, mut from) = (d, d, index, s);
    // Two scan steps: each lane takes in the lane 1, then 2, below it, unless its window
    // already reaches a segment start. Lanes shifted in from below the vector are
    // identities (0, MIN) or, for the copies, left for the carry.
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
    busy = _mm256_add_epi64(busy, _mm256_andnot_si256(seg, c.busy));
    let keep = _mm256_or_si256(seg, _mm256_cmpgt_epi64(long, c.long));
    Run {
        busy,
        long: _mm256_blendv_epi8(c.long, long, keep),
        name: _mm256_blendv_epi8(c.name, name, keep),
        first: _mm256_blendv_epi8(c.first, first, seg),
        from: _mm256_blendv_epi8(c.from, from, seg),
    }
}

/// Step 3 of [`block`] for 4 spans: writes each lane's running item (its spans' `end`s
/// and indices beside) to slot `k`, which moves on past the lanes whose item closes
/// (`closes`' low 4 bits). Returns the next slot.
///
/// # Safety
/// Slots `k .. k + 4` must be within the slots `out` points to.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn put_rows(
    out: *mut u8,
    mut k: usize,
    run: &Run,
    (end, index): (__m256i, __m256i),
    wv: __m256i,
    closes: u32,
) -> usize {
    // Rows: (from, end, busy, first | last << 32) and (name | merged << 32).
    let fl = _mm256_or_si256(run.first, _mm256_slli_epi64::<32>(index));
    let merged_bit = _mm256_set1_epi64x(1 << 32);
    let merged = _mm256_and_si256(_mm256_cmpgt_epi64(wv, run.long), merged_bit);
    let nmw = _mm256_or_si256(run.name, merged);
    let t0 = _mm256_unpacklo_epi64(run.from, end);
    let t1 = _mm256_unpackhi_epi64(run.from, end);
    let t2 = _mm256_unpacklo_epi64(run.busy, fl);
    let t3 = _mm256_unpackhi_epi64(run.busy, fl);
    let rows = [
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    ];
    let words = words(nmw);
    for lane in 0..4 {
        // SAFETY: k <= the caller's k + lane, within the slots (its contract).
        unsafe { put_row(out, k, rows[lane], words[lane]) };
        k += ((closes >> lane) & 1) as usize;
    }
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
