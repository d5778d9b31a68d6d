//! Writing `.spall` version 3 files.

use std::collections::HashMap;
use std::io::{self, Write};

use spall_layout::{self as layout, event_type as ty, BUFFER_HEADER_LEN};

/// The largest buffer the writer emits, header included.
pub const MAX_BUFFER: usize = 1 << 20;

/// Writes `.spall` version 3: events are buffered per (pid, tid), each buffer holds at most
/// 1 MiB, and everything is flushed on [`finish`](SpallWriter::finish) or drop.
///
/// Names and args longer than the format's 255 bytes are cut at a character boundary and
/// counted in [`truncated_strings`](SpallWriter::truncated_strings).
///
/// ```
/// use spall_format::{decode, Collect, SpallWriter};
///
/// let mut w = SpallWriter::new(Vec::new(), 1.0).unwrap(); // 1 ns per tick
/// w.name_thread(1, 7, "main").unwrap();
/// w.begin(1, 7, 100, "work", "").unwrap();
/// w.end(1, 7, 250).unwrap();
/// let bytes = w.finish().unwrap();
///
/// let mut events = Collect::default();
/// decode(&bytes, &mut events).unwrap();
/// assert_eq!(events.0.len(), 3); // thread_name, B, E
/// assert_eq!(events.0[2].ts, 250);
/// ```
#[derive(Debug)]
pub struct SpallWriter<W: Write> {
    out: Option<W>,
    buffers: HashMap<(u32, u32), Vec<u8>>,
    /// Threads in order of first use, so output is deterministic.
    order: Vec<(u32, u32)>,
    truncated: u64,
}

impl<W: Write> SpallWriter<W> {
    /// Starts a file whose timestamps are ticks of `ns_per_tick` nanoseconds.
    pub fn new(mut out: W, ns_per_tick: f64) -> io::Result<Self> {
        if !(ns_per_tick.is_finite() && ns_per_tick > 0.0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the timestamp unit must be finite and positive",
            ));
        }
        out.write_all(&layout::file_header(ns_per_tick))?;
        Ok(SpallWriter {
            out: Some(out),
            buffers: HashMap::new(),
            order: Vec::new(),
            truncated: 0,
        })
    }

    /// How many names or args were cut to 255 bytes.
    pub fn truncated_strings(&self) -> u64 {
        self.truncated
    }

    /// A Begin event.
    pub fn begin(
        &mut self,
        pid: u32,
        tid: u32,
        ticks: u64,
        name: &str,
        args: &str,
    ) -> io::Result<()> {
        self.text_event(layout::begin_header, pid, tid, ticks, name, args)
    }

    /// An Instant event (a spall-rs extension of the format: see [`spall_layout`]).
    pub fn instant(
        &mut self,
        pid: u32,
        tid: u32,
        ticks: u64,
        name: &str,
        args: &str,
    ) -> io::Result<()> {
        self.text_event(layout::instant_header, pid, tid, ticks, name, args)
    }

    fn text_event(
        &mut self,
        header: fn(u64, u8, u8) -> [u8; layout::BEGIN_LEN],
        pid: u32,
        tid: u32,
        ticks: u64,
        name: &str,
        args: &str,
    ) -> io::Result<()> {
        let name = self.cut(name);
        let args = self.cut(args);
        let mut ev = Vec::with_capacity(layout::BEGIN_LEN + name.len() + args.len());
        ev.extend_from_slice(&header(ticks, name.len() as u8, args.len() as u8));
        ev.extend_from_slice(name.as_bytes());
        ev.extend_from_slice(args.as_bytes());
        self.push(pid, tid, ticks, &ev)
    }

    /// An End event: closes the thread's most recent open Begin.
    pub fn end(&mut self, pid: u32, tid: u32, ticks: u64) -> io::Result<()> {
        self.push(pid, tid, ticks, &layout::end(ticks))
    }

    /// Names the process `pid` (written into the buffer of thread `tid`).
    pub fn name_process(&mut self, pid: u32, tid: u32, name: &str) -> io::Result<()> {
        self.name(ty::NAME_PROCESS, pid, tid, name)
    }

    /// Names the thread `tid` of process `pid`.
    pub fn name_thread(&mut self, pid: u32, tid: u32, name: &str) -> io::Result<()> {
        self.name(ty::NAME_THREAD, pid, tid, name)
    }

    fn name(&mut self, t: u8, pid: u32, tid: u32, name: &str) -> io::Result<()> {
        let name = self.cut(name);
        let mut ev = layout::name_header(t, name.len() as u8).to_vec();
        ev.extend_from_slice(name.as_bytes());
        self.push(pid, tid, 0, &ev)
    }

    fn cut<'s>(&mut self, s: &'s str) -> &'s str {
        let cut = layout::cut(s);
        self.truncated += u64::from(cut.len() < s.len());
        cut
    }

    fn push(&mut self, pid: u32, tid: u32, ticks: u64, ev: &[u8]) -> io::Result<()> {
        let key = (pid, tid);
        let buf = match self.buffers.get_mut(&key) {
            Some(b) => b,
            None => {
                self.order.push(key);
                self.buffers.entry(key).or_default()
            }
        };
        if !buf.is_empty() && buf.len() + ev.len() > MAX_BUFFER {
            let out = self.out.as_mut().expect("writer is open");
            write_buffer(out, key, buf)?;
        }
        if buf.is_empty() {
            buf.reserve(MAX_BUFFER.min(64 << 10));
            buf.extend_from_slice(&[0u8; BUFFER_HEADER_LEN]);
            buf[12..20].copy_from_slice(&ticks.to_le_bytes());
        }
        buf.extend_from_slice(ev);
        Ok(())
    }

    /// Writes out every buffered event.
    pub fn flush(&mut self) -> io::Result<()> {
        let out = self.out.as_mut().expect("writer is open");
        for key in &self.order {
            if let Some(buf) = self.buffers.get_mut(key) {
                if !buf.is_empty() {
                    write_buffer(out, *key, buf)?;
                }
            }
        }
        out.flush()
    }

    /// Flushes everything and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.out.take().expect("writer is open"))
    }
}

fn write_buffer<W: Write>(
    out: &mut W,
    (pid, tid): (u32, u32),
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let size = (buf.len() - BUFFER_HEADER_LEN) as u32;
    let first_ts = u64::from_le_bytes(buf[12..20].try_into().expect("8 bytes"));
    buf[..BUFFER_HEADER_LEN].copy_from_slice(&layout::buffer_header(size, pid, tid, first_ts));
    out.write_all(buf)?;
    buf.clear();
    Ok(())
}

impl<W: Write> Drop for SpallWriter<W> {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = self.flush();
        }
    }
}
