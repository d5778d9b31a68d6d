//! The byte layout of `.spall` files: constants and encoders shared by the decoder
//! (`spall-format`) and the writers (`spall-format`'s `SpallWriter`, `spall-trace`), so the
//! layout is written down once.
//!
//! All integers are little-endian and all structures packed. A version 3 file is a 32-byte
//! [`file_header`] followed by buffers, each a 20-byte [`buffer_header`] naming one thread
//! and then that thread's events:
//!
//! ```
//! use spall_layout as L;
//!
//! let mut events = Vec::new();
//! events.extend_from_slice(&L::begin_header(100, 4, 0));
//! events.extend_from_slice(b"work");
//! events.extend_from_slice(&L::end(250));
//!
//! let mut file = L::file_header(1.0).to_vec(); // 1 ns per tick
//! file.extend_from_slice(&L::buffer_header(events.len() as u32, 1, 7, 100));
//! file.extend_from_slice(&events);
//! assert_eq!(file.len(), L::HEADER_LEN + L::BUFFER_HEADER_LEN + 11 + 4 + 9);
//! ```

#![warn(missing_docs)]
#![no_std]

/// `0x0BADF00D`: the magic of manual-tracing `.spall` files.
pub const MAGIC: u64 = 0x0BAD_F00D;
/// `0xABADF00D`: the magic of spall's native auto-tracing files.
pub const AUTO_MAGIC: u64 = 0xABAD_F00D;
/// The version the writers produce.
pub const VERSION: u64 = 3;
/// Size of the file header.
pub const HEADER_LEN: usize = 32;
/// Size of a version 3 buffer header.
pub const BUFFER_HEADER_LEN: usize = 20;
/// Size of a version 3 Begin or Instant event before its name and args.
pub const BEGIN_LEN: usize = 11;
/// Size of a version 3 End event.
pub const END_LEN: usize = 9;
/// The longest name or args text an event can carry.
pub const MAX_TEXT: usize = 255;

/// Event type bytes.
pub mod event_type {
    /// Upstream's custom data. Upstream publishes no layout for it, so the decoder warns and
    /// skips the rest of the buffer (of the file, in version 1).
    pub const CUSTOM_DATA: u8 = 1;
    /// Upstream's stream over, with no published layout (skipped like [`CUSTOM_DATA`]).
    pub const STREAM_OVER: u8 = 2;
    /// A span opens: timestamp, then name and args ([`begin_header`](super::begin_header)).
    pub const BEGIN: u8 = 3;
    /// The thread's most recent open span closes ([`end`](super::end)).
    pub const END: u8 = 4;
    /// A spall-rs extension: upstream reserves the type but publishes no layout. Ours is
    /// the Begin layout.
    pub const INSTANT: u8 = 5;
    /// Upstream's overwrite timestamp, with no published layout (skipped like
    /// [`CUSTOM_DATA`]).
    pub const OVERWRITE_TIMESTAMP: u8 = 6;
    /// Padding: a `u32` length, then that many bytes to skip.
    pub const PAD_SKIP: u8 = 7;
    /// Names the buffer's process ([`name_header`](super::name_header)).
    pub const NAME_PROCESS: u8 = 8;
    /// Names the buffer's thread ([`name_header`](super::name_header)).
    pub const NAME_THREAD: u8 = 9;
}

/// The 32-byte header of a version 3 file whose timestamps are ticks of `ns_per_tick`
/// nanoseconds.
pub fn file_header(ns_per_tick: f64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&VERSION.to_le_bytes());
    h[16..24].copy_from_slice(&ns_per_tick.to_le_bytes());
    h
}

/// The header of a buffer holding `size` bytes of thread `tid`'s events; `first_ts` is the
/// first event's timestamp.
pub fn buffer_header(size: u32, pid: u32, tid: u32, first_ts: u64) -> [u8; BUFFER_HEADER_LEN] {
    let mut h = [0u8; BUFFER_HEADER_LEN];
    h[0..4].copy_from_slice(&size.to_le_bytes());
    h[4..8].copy_from_slice(&tid.to_le_bytes());
    h[8..12].copy_from_slice(&pid.to_le_bytes());
    h[12..20].copy_from_slice(&first_ts.to_le_bytes());
    h
}

/// A Begin event's fixed part; `name_len` bytes of name and `args_len` of args follow.
#[inline]
pub fn begin_header(ticks: u64, name_len: u8, args_len: u8) -> [u8; BEGIN_LEN] {
    text_event(event_type::BEGIN, ticks, name_len, args_len)
}

/// An Instant event's fixed part (the Begin layout); name and args follow.
#[inline]
pub fn instant_header(ticks: u64, name_len: u8, args_len: u8) -> [u8; BEGIN_LEN] {
    text_event(event_type::INSTANT, ticks, name_len, args_len)
}

#[inline]
fn text_event(ty: u8, ticks: u64, name_len: u8, args_len: u8) -> [u8; BEGIN_LEN] {
    let t = ticks.to_le_bytes();
    [
        ty, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], name_len, args_len,
    ]
}

/// An End event: closes the buffer's thread's most recent open Begin.
#[inline]
pub fn end(ticks: u64) -> [u8; END_LEN] {
    let t = ticks.to_le_bytes();
    [
        event_type::END,
        t[0],
        t[1],
        t[2],
        t[3],
        t[4],
        t[5],
        t[6],
        t[7],
    ]
}

/// A Name_Process or Name_Thread event's fixed part; `len` bytes of name follow.
pub fn name_header(ty: u8, len: u8) -> [u8; 2] {
    [ty, len]
}

/// `s` cut to at most [`MAX_TEXT`] bytes at a character boundary.
#[inline]
pub fn cut(s: &str) -> &str {
    if s.len() <= MAX_TEXT {
        return s;
    }
    let mut n = MAX_TEXT;
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_characters() {
        let s = "é".repeat(200); // 400 bytes
        let c = cut(&s);
        assert_eq!(c.len(), 254);
        assert!(c.chars().all(|ch| ch == 'é'));
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn begin_places_fields() {
        let b = begin_header(0x0102_0304_0506_0708, 5, 6);
        assert_eq!(b[0], event_type::BEGIN);
        assert_eq!(
            u64::from_le_bytes(b[1..9].try_into().unwrap()),
            0x0102_0304_0506_0708
        );
        assert_eq!((b[9], b[10]), (5, 6));
    }
}
