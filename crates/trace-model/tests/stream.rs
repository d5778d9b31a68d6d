//! A `.spall` file loaded as its bytes arrive (`LoadStream`, a browser's worker reading the
//! file in chunks) must give the trace `load_bytes` gives, whatever the chunks, and the
//! trace must come back whole through `to_transfer` / `from_transfer`.

use spall_format::synth::Synth;
use spall_format::CHUNK_BYTES;
use trace_model::{load_bytes, LoadStream, Trace};

fn streamed(bytes: &[u8], piece: usize) -> Trace {
    assert!(LoadStream::accepts(bytes));
    let mut load = LoadStream::new();
    for p in bytes.chunks(piece) {
        load.push(p).unwrap();
    }
    let (read, _) = load.progress();
    assert_eq!(read, bytes.len() as u64);
    load.finish().unwrap().expect("in order")
}

#[test]
fn streamed_spall_is_load_bytes_trace_in_any_pieces() {
    let mut spall = Vec::new();
    Synth {
        spans: 300_000,
        exotic_names: true,
        ..Synth::default()
    }
    .write_spall(&mut spall)
    .unwrap();
    assert!(spall.len() > 2 * CHUNK_BYTES, "{} bytes", spall.len());
    let want = load_bytes(&spall).unwrap().to_transfer();
    // A File read in 8 MB slices, a network's small odd pieces, and a cut inside a header.
    for piece in [8 << 20, 65_521, 4_099] {
        let got = streamed(&spall, piece).to_transfer();
        assert!(got == want, "pieces of {piece} bytes: the traces differ");
    }
    // Cut short: the partial last buffer is warned about as load_bytes does.
    let cut = &spall[..spall.len() - 1_000];
    let got = streamed(cut, 1 << 20);
    assert!(got.to_transfer() == load_bytes(cut).unwrap().to_transfer());
    assert!(got.decode_summary().diagnostics.total() > 0);
}

#[test]
fn only_spall_version_3_is_streamed() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]"#;
    assert!(!LoadStream::accepts(json));
    let v1 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/spall/crux_v1.spall"
    ))
    .unwrap();
    assert!(!LoadStream::accepts(&v1));
    assert!(!LoadStream::accepts(&v1[..10]));
}
