//! A Perfetto protobuf file decoded whole and streamed, one after the other, each on one
//! thread with a sink that only counts: their times, and the most bytes the stream held
//! (the packet a piece cut, descriptors, interned data in use). The counts must agree.
//!
//! ```sh
//! cargo run --release -p spall-format --example proto-stream -- bench-data/chrome300.pftrace
//! ```

use std::time::Instant;

use spall_format::{decode, EventSink, ProtoStream, RawEvent, CHUNK_BYTES};

/// The stream's pieces, as the web page's worker reads a file.
const PIECE: usize = 4 << 20;

#[derive(Default)]
struct Count(u64);

impl EventSink for Count {
    fn event(&mut self, _: &RawEvent<'_>) {
        self.0 += 1;
    }
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: proto-stream FILE.pftrace");
        std::process::exit(2);
    };
    let b = std::fs::read(&path).expect("read the file");
    let mb = b.len() as f64 / 1e6;

    let t = Instant::now();
    let mut whole = Count::default();
    decode(&b, &mut whole).expect("a protobuf trace");
    let whole_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut s = ProtoStream::with_target(CHUNK_BYTES, Count::default);
    let mut held = 0;
    for p in b.chunks(PIECE) {
        s.push(p).expect("a protobuf trace");
        held = held.max(s.held());
    }
    let Some((_, sinks)) = s.finish().expect("a protobuf trace") else {
        eprintln!("{path}: the stream gave up; the whole decode is needed");
        std::process::exit(1);
    };
    let stream_s = t.elapsed().as_secs_f64();
    let streamed: u64 = sinks.iter().map(|c| c.0).sum();
    assert_eq!(streamed, whole.0, "events streamed and decoded whole");
    println!(
        "{path}: {mb:.0} MB, {} events: whole decode {whole_s:.2} s ({:.0} MB/s), \
         stream in 4 MB pieces {stream_s:.2} s ({:.0} MB/s), held at most {:.1} kB",
        whole.0,
        mb / whole_s,
        mb / stream_s,
        held as f64 / 1e3
    );
}
