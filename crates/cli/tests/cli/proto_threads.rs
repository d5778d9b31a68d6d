//! A Perfetto trace of many packet sequences, large enough to be decoded in parallel parts,
//! reads the same on one thread and on several, and what crosses sequences (flows from one
//! thread to another, async slices begun on one thread and ended on another) is all there.

use std::process::Command;

use serde_json::Value;

use crate::common::SPALL_CLI;

/// Protobuf fields, written by hand: enough for the packets below.
#[derive(Default)]
struct M(Vec<u8>);

impl M {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn v(mut self, field: u64, v: u64) -> M {
        self.varint(field << 3);
        self.varint(v);
        self
    }
    fn b(mut self, field: u64, b: &[u8]) -> M {
        self.varint(field << 3 | 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn m(self, field: u64, m: M) -> M {
        self.b(field, &m.0)
    }
}

const THREADS: u64 = 8;
const SLICES_PER_CHUNK: u64 = 60;

/// 4 processes of 2 threads, each thread its own sequence with interned names and an
/// incremental clock; packets in chunks of one sequence, repeated `blocks` times. In each
/// block every thread sends a flow to the next, and threads 0 to 3 each begin an async
/// slice that one of threads 4 to 7 ends.
fn trace(blocks: u64) -> Vec<u8> {
    let mut out = M::default();
    let packet = |out: M, p: M| out.m(1, p);
    for p in 0..4 {
        let process = M::default().v(1, 100 + p).b(6, b"renderer");
        out = packet(
            out,
            M::default().m(60, M::default().v(1, 1 + p).m(3, process)),
        );
        let track = M::default().v(1, 50 + p).v(5, 1 + p).b(2, b"async");
        out = packet(out, M::default().m(60, track));
    }
    for i in 0..THREADS {
        let thread = M::default().v(1, 100 + i / 2).v(2, 200 + i).b(5, b"worker");
        let track = M::default().v(1, 1000 + i).v(5, 1 + i / 2).m(4, thread);
        out = packet(out, M::default().m(60, track));
        let clocks = M::default()
            .m(1, M::default().v(1, 64).v(2, 1_000_000).v(3, 1))
            .m(1, M::default().v(1, 6).v(2, 1_000_000));
        let names = M::default()
            .m(2, M::default().v(1, 1).b(2, b"RunTask"))
            .m(2, M::default().v(1, 2).b(2, b"Async"))
            .m(1, M::default().v(1, 1).b(2, b"toplevel"));
        let defaults = M::default().v(58, 64).m(11, M::default().v(11, 1000 + i));
        let state = M::default()
            .v(10, 10 + i)
            .v(13, 1)
            .m(59, defaults)
            .m(6, clocks)
            .m(12, names);
        out = packet(out, state);
    }
    let event = |seq: u64, ts: u64, te: M| M::default().v(8, ts).v(10, seq).v(13, 2).m(11, te);
    let mut block = M::default();
    for i in 0..THREADS {
        let seq = 10 + i;
        for k in 0..SLICES_PER_CHUNK {
            let mut begin = M::default().v(9, 1).v(10, 1).v(3, 1);
            if k == 0 && i + 1 < THREADS {
                begin = begin.v(36, 7000 + i);
            }
            if k == SLICES_PER_CHUNK - 1 && i > 0 {
                begin = begin.v(42, 7000 + i - 1);
            }
            block = packet(block, event(seq, 1000, begin));
            block = packet(block, event(seq, 1000, M::default().v(9, 2)));
        }
        // Threads 0 to 3 begin, 4 to 7 end, later each block (a longer step): in parts of
        // their own.
        let (ty, step) = if i < 4 { (1, 1000) } else { (2, 1500) };
        let te = M::default().v(9, ty).v(10, 2).v(11, 50 + i % 4);
        block = packet(block, event(seq, step, te));
    }
    for _ in 0..blocks {
        out.0.extend_from_slice(&block.0);
    }
    out.0
}

fn cli(args: &[&str], threads: &str) -> Vec<u8> {
    let o = Command::new(SPALL_CLI)
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

#[test]
fn many_sequences_read_the_same_on_one_thread_and_several() {
    let blocks = 800;
    let b = trace(blocks);
    assert!(
        b.len() > 9 << 20,
        "{} bytes: large enough for parts",
        b.len()
    );
    let path = std::env::temp_dir().join(format!(
        "spall-proto-threads-{}.pftrace",
        std::process::id()
    ));
    std::fs::write(&path, &b).unwrap();
    let path = path.display().to_string();

    let info = |threads| -> Value {
        let mut v: Value =
            serde_json::from_slice(&cli(&["info", "--format", "json", &path], threads)).unwrap();
        for k in ["load_ms", "index_ms"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let one = info("1");
    assert_eq!(one, info("2"));
    assert_eq!(one["diagnostics"], serde_json::json!({}));
    assert_eq!(one["spans"], THREADS * SLICES_PER_CHUNK * blocks);
    // Every async slice begun on one sequence is ended on another.
    assert_eq!(one["async_slices"], 4 * blocks);
    // Each block: a flow from each thread to the next, 7 arrows.
    assert_eq!(one["flow_links"], (THREADS - 1) * blocks);

    let stats = |threads| cli(&["stats", &path, "--format", "json"], threads);
    let s1 = stats("1");
    assert_eq!(s1, stats("2"));
    std::fs::remove_file(&path).ok();
}
