//! Vector kernels, each beside the scalar code it must agree with (tests compare them).
//! Only instructions every CPU of the target has are used (SSE2 on x86_64), so no runtime
//! detection is needed. On wasm32 the kernels are simd128's when the module is built with
//! `-C target-feature=+simd128` (the page picks that module where the browser validates a
//! SIMD module); other targets and builds run the scalar code.
//!
//! This module says, in one place, which kernel a build has: [`skip_container`] is the JSON
//! scanner's, which runs its scalar reference where the build has none.

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod block;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use simd128 as vector;
#[cfg(target_arch = "x86_64")]
mod sse2;
#[cfg(target_arch = "x86_64")]
use sse2 as vector;

/// Skips a balanced `{...}` or `[...]` starting at `b[i]` with the vector kernel, where this
/// build has one: `Some(Some(end))`, `Some(None)` when the input ends first. `None` where
/// it has none: the caller runs its scalar reference (`json::scan::skip_container_scalar`).
#[inline(always)]
pub(crate) fn skip_container(b: &[u8], i: usize) -> Option<Option<usize>> {
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ))]
    return Some(block::skip_container(b, i));
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        let _ = (b, i);
        None
    }
}

#[cfg(all(
    test,
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )
))]
mod tests {
    use super::vector::masks16;

    /// The masks a byte at a time: quotes, backslashes, `{` and `[`, `}` and `]`.
    fn masks16_scalar(part: &[u8]) -> [u16; 4] {
        let mut out = [0u16; 4];
        for (k, &c) in part.iter().enumerate() {
            let class = match c {
                b'"' => 0,
                b'\\' => 1,
                b'{' | b'[' => 2,
                b'}' | b']' => 3,
                _ => continue,
            };
            out[class] |= 1 << k;
        }
        out
    }

    /// Every byte value in every lane (among bytes of each class), and random blocks.
    #[test]
    fn masks16_agree_with_scalar() {
        for c in 0..=255u8 {
            for lane in 0..16 {
                for fill in [b'a', b'"', b'\\', b'{', b']', 0x80, 0xff] {
                    let mut part = [fill; 16];
                    part[lane] = c;
                    assert_eq!(masks16(&part), masks16_scalar(&part), "{part:?}");
                }
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let part: Vec<u8> = (0..16).map(|k| (state >> (4 * (k % 16))) as u8).collect();
            let part: Vec<u8> = part
                .iter()
                .map(|&x| b"\"\\{}[]a\x00"[(x & 7) as usize])
                .collect();
            assert_eq!(masks16(&part), masks16_scalar(&part), "{part:?}");
        }
    }
}

/// Asks the CPU for the cache lines of `b` (its first four and its last), read soon: a
/// hint, which changes no result (a no-op where the target has no prefetch instruction).
#[inline(always)]
pub(crate) fn prefetch(b: &[u8]) {
    for at in [0, 64, 128, 192, b.len().wrapping_sub(1)] {
        spall_util::prefetch(b, at);
    }
}
