//! SSE2 (every x86_64 CPU): the masks of a 16-byte block.

use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
};

/// The masks of 16 bytes: quotes, backslashes, `{` and `[`, `}` and `]`.
#[inline(always)]
pub(super) fn masks16(part: &[u8]) -> [u16; 4] {
    debug_assert_eq!(part.len(), 16);
    // SAFETY: SSE2 is part of every x86_64 CPU; the load reads the 16 bytes of `part`
    // (unaligned loads allowed).
    #[allow(unsafe_code)]
    unsafe {
        let v = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let bits = |m| _mm_movemask_epi8(m) as u16;
        [
            bits(eq(b'"')),
            bits(eq(b'\\')),
            bits(_mm_or_si128(eq(b'{'), eq(b'['))),
            bits(_mm_or_si128(eq(b'}'), eq(b']'))),
        ]
    }
}
