//! simd128 (wasm32 built with `-C target-feature=+simd128`): the masks of a 16-byte block,
//! the twin of `sse2`.

use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load, v128_or};

/// The masks of 16 bytes: quotes, backslashes, `{` and `[`, `}` and `]`.
#[inline(always)]
pub(super) fn masks16(part: &[u8]) -> [u16; 4] {
    assert_eq!(part.len(), 16);
    // SAFETY: the load reads the 16 bytes of `part` (wasm loads need no alignment).
    #[allow(unsafe_code)]
    let v = unsafe { v128_load(part.as_ptr().cast::<v128>()) };
    let eq = |c: u8| u8x16_eq(v, u8x16_splat(c));
    [
        u8x16_bitmask(eq(b'"')),
        u8x16_bitmask(eq(b'\\')),
        u8x16_bitmask(v128_or(eq(b'{'), eq(b'['))),
        u8x16_bitmask(v128_or(eq(b'}'), eq(b']'))),
    ]
}
