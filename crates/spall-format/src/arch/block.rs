//! Skipping a JSON container 64 bytes at a time, on any target with a 16-byte vector
//! kernel (`vector::masks16`: SSE2 on x86_64, simd128 on wasm32 built with it).

use super::vector;

/// Skips a balanced `{...}` or `[...]` starting at `b[i]`, returning the index just after
/// it, or `None` when the input ends first. The JSON scanner's scalar skip (`skip_container_scalar`), 64 bytes at a
/// time, without a branch per byte that matters
/// (simdjson's method): masks of quotes, backslashes and brackets; the escaped bytes from the
/// runs of backslashes; the bytes inside strings from a prefix XOR of the unescaped quotes;
/// the depth from counts of the brackets outside strings. Only the block where the depth can
/// come back to zero is walked bracket by bracket. A block with a backslash outside strings
/// (not JSON) is walked a byte at a time, as the scalar code would.
pub(crate) fn skip_container(b: &[u8], i: usize) -> Option<usize> {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let mut st = State {
        depth: 0,
        in_string: false,
        escaped_first: false,
    };
    let mut base = i;
    while base + 64 <= b.len() {
        let block = &b[base..base + 64];
        let [quote, backslash, open, close] = masks(block);
        // Escaped bytes: the byte after each odd-length run of backslashes.
        let prev = u64::from(st.escaped_first);
        let starts = backslash & !prev;
        let odd_ends = ((starts << 1) | ODD).wrapping_sub(starts) ^ ODD;
        let escaped = odd_ends ^ (backslash | prev);
        let escape_last = (odd_ends & backslash) >> 63 != 0;
        let unescaped = quote & !escaped;
        let carry = if st.in_string { u64::MAX } else { 0 };
        let inside = prefix_xor(unescaped) ^ carry;
        if backslash & !inside != 0 {
            if let Some(end) = st.walk(block, base) {
                return Some(end);
            }
            base += 64;
            continue;
        }
        let (open, close) = (open & !inside, close & !inside);
        if (close.count_ones() as usize) < st.depth {
            st.depth += open.count_ones() as usize;
            st.depth -= close.count_ones() as usize;
        } else {
            let mut brackets = open | close;
            while brackets != 0 {
                let k = brackets.trailing_zeros();
                brackets &= brackets - 1;
                if open >> k & 1 != 0 {
                    st.depth += 1;
                } else {
                    st.depth -= 1;
                    if st.depth == 0 {
                        return Some(base + k as usize + 1);
                    }
                }
            }
        }
        st.in_string = inside >> 63 != 0;
        st.escaped_first = escape_last;
        base += 64;
    }
    st.walk(&b[base..], base)
}

/// Where a walk is between blocks.
struct State {
    depth: usize,
    in_string: bool,
    /// The block's first byte follows a backslash inside a string.
    escaped_first: bool,
}

impl State {
    /// The scalar walk over `block` (at `base` in the input): `Some` with the container's
    /// end if it closes in the block.
    fn walk(&mut self, block: &[u8], base: usize) -> Option<usize> {
        let mut j = usize::from(self.escaped_first);
        self.escaped_first = false;
        while j < block.len() {
            match block[j] {
                b'\\' if self.in_string => {
                    if j + 1 == block.len() {
                        self.escaped_first = true;
                    }
                    j += 1;
                }
                b'"' => self.in_string = !self.in_string,
                _ if self.in_string => {}
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(base + j + 1);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        None
    }
}

/// Bit `k` set where an odd number of the bits `0..=k` of `x` are set.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The masks of a 64-byte block: quotes, backslashes, `{` and `[`, `}` and `]`.
#[inline(always)]
fn masks(block: &[u8]) -> [u64; 4] {
    let mut out = [0u64; 4];
    for (q, part) in block.chunks_exact(16).enumerate() {
        for (m, bits) in out.iter_mut().zip(vector::masks16(part)) {
            *m |= u64::from(bits) << (16 * q);
        }
    }
    out
}
