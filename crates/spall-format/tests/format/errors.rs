//! Input that is not a trace at all: a typed error naming the file, the offset and what was expected.

use spall_format::{decode, decode_with, DecodeOptions, ErrorKind, RawEvent};

fn err(bytes: &[u8]) -> spall_format::Error {
    decode(bytes, &mut |_: &RawEvent<'_>| {}).unwrap_err()
}

fn header(magic: u64, version: u64, unit: f64) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&magic.to_le_bytes());
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&unit.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes());
    h
}

#[test]
fn empty_and_whitespace() {
    assert!(matches!(err(b"").kind, ErrorKind::Empty));
    assert!(matches!(err(b" \n\t").kind, ErrorKind::Empty));
}

#[test]
fn not_json_names_what_was_found() {
    let e = err(b"hello world");
    assert!(matches!(e.kind, ErrorKind::NotATrace { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("at byte 0") && msg.contains("hello world"),
        "{msg}"
    );
}

#[test]
fn auto_trace_magic_is_not_supported() {
    let e = err(&header(0xABAD_F00D, 1, 1.0));
    assert!(matches!(e.kind, ErrorKind::AutoTraceUnsupported));
    assert!(e.to_string().contains("not supported"));
}

#[test]
fn unknown_versions_and_bad_units() {
    let e = err(&header(0x0BAD_F00D, 2, 1.0));
    assert!(matches!(
        e.kind,
        ErrorKind::UnsupportedVersion { version: 2 }
    ));
    assert!(e.to_string().contains("version 2"));
    for unit in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = err(&header(0x0BAD_F00D, 3, unit));
        assert!(
            matches!(e.kind, ErrorKind::BadTimestampUnit { .. }),
            "{unit}"
        );
    }
}

#[test]
fn truncated_header() {
    let h = header(0x0BAD_F00D, 3, 1.0);
    for n in 1..32 {
        let e = err(&h[..n]);
        assert!(
            matches!(e.kind, ErrorKind::TruncatedHeader { .. }),
            "{n}: {e}"
        );
    }
}

#[test]
fn errors_from_files_name_the_file() {
    let dir = std::env::temp_dir().join(format!("spall-format-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.json");
    std::fs::write(&p, "not a trace").unwrap();
    let e = spall_format::decode_file(&p, &mut |_: &RawEvent<'_>| {}).unwrap_err();
    assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
    let e = spall_format::decode_file(&dir, &mut |_: &RawEvent<'_>| {}).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
    let e = spall_format::decode_file(dir.join("missing"), &mut |_: &RawEvent<'_>| {}).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gzip_bomb_stops_at_the_limit() {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..64 {
        e.write_all(&zeros).unwrap();
    }
    let bomb = e.finish().unwrap();
    assert!(bomb.len() < 200_000);
    let opts = DecodeOptions {
        max_decompressed: 8 << 20,
        ..Default::default()
    };
    let err = decode_with(&bomb, &opts, &mut |_: &RawEvent<'_>| {}).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::DecompressedTooLarge { limit } if limit == 8 << 20));
    // A memory limit below the gzip limit stops decompression too, saying so.
    let opts = DecodeOptions {
        max_memory: spall_format::MemoryLimit::Bytes(4 << 20),
        ..Default::default()
    };
    let err = decode_with(&bomb, &opts, &mut |_: &RawEvent<'_>| {}).unwrap_err();
    assert!(
        matches!(err.kind, ErrorKind::NotEnoughMemory { needed: None, limit, .. } if limit == 4 << 20),
        "{err}"
    );
    assert!(err.to_string().contains("--max-memory"), "{err}");
}

#[test]
fn corrupt_gzip_is_an_error() {
    let e = err(&[0x1f, 0x8b, 8, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0xff, 0xff]);
    assert!(matches!(e.kind, ErrorKind::Gzip(_)), "{e}");
}

/// A file truncated after it was mapped (a producer rewriting it, a user's `> file`):
/// reading past its new end would raise SIGBUS; the decode reports it instead.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_shrinks_while_mapped_is_an_error_not_a_crash() {
    use spall_format::synth::Synth;
    for json in [false, true] {
        let p = std::env::temp_dir().join(format!("spall-shrink-{}-{json}", std::process::id()));
        let s = Synth {
            spans: 50_000,
            ..Synth::default()
        };
        let f = std::fs::File::create(&p).unwrap();
        if json {
            s.write_json(f, false).unwrap();
        } else {
            s.write_spall(f).unwrap();
        }
        let input = spall_format::Input::open(&p, &DecodeOptions::default()).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(8192)
            .unwrap();
        let e = input.decode(&mut |_: &RawEvent<'_>| {}).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::FileShrank), "{e}");
        let e = input
            .decode_parallel(spall_format::Collect::default, &|_, _| {})
            .unwrap_err();
        assert!(e.to_string().contains("shrank"), "{e}");
        drop(input);
        std::fs::remove_file(&p).unwrap();
    }
}
