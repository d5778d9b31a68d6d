//! The first pass ([`scan`](super::scan)) on two cores: the file's packets in two halves,
//! each walked on its own for its sequences' runs and the few packets that describe
//! something (descriptors, clock snapshots), which are then noted in file order on one
//! thread. The second half starts where packets seem to start; the first half's walk
//! from the file's start must end exactly there, or the guess was wrong. What it finds is
//! what the one-thread pass finds; a file it cannot split cleanly (a wrong guess, a
//! framing error, compressed packets) takes the one-thread pass.

use super::packets;
use super::scan::{add_run, rare_fields, scan, Buf, Found, RareFields, Run};
use super::wire::Reader;
use crate::diag::Diagnostics;
use crate::error::Error;

/// Files under this size take the one-thread pass.
const MIN_BYTES: usize = 8 << 20;

/// One half's runs and its packets with rare fields, in file order.
#[derive(Default)]
struct Half<'a> {
    runs: Vec<Run>,
    rare: Vec<(u32, RareFields<'a>)>,
    /// It holds a bundle of compressed packets (the one-thread pass inflates them).
    bundle: bool,
    d: Diagnostics,
}

/// [`scan`] of a file without inflated bundles, its halves on two threads; `d` takes the
/// warnings of the one-thread pass where that decides.
pub fn scan_parallel<'a>(b: &'a [u8], d: &mut Diagnostics) -> Result<Found<'a>, Error> {
    let Some(mid) = (b.len() >= MIN_BYTES).then(|| split(b)).flatten() else {
        return scan(b, &[], d);
    };
    let (first, second) = rayon::join(|| half(b, 0, mid), || half(b, mid, b.len()));
    // A warning's text counts the packets before it, which a half does not know.
    let (Ok(first), Ok(second)) = (first, second) else {
        return scan(b, &[], d);
    };
    if first.bundle || second.bundle || !first.d.is_empty() || !second.d.is_empty() {
        return scan(b, &[], d);
    }
    let mut f = Found::new();
    f.bufs.push(Buf {
        bytes: b,
        at: 0,
        packed: b.len(),
    });
    let mut primary = None;
    f.runs = first.runs;
    f.runs.reserve(second.runs.len());
    for r in second.runs {
        add_run(&mut f.runs, r.buf, r.start, r.end, r.seq);
    }
    for (seq, parts) in first.rare.iter().chain(&second.rare) {
        f.note(*seq, parts, &mut primary);
    }
    f.finish(primary);
    Ok(f)
}

/// A place near the middle where packets seem to start: a byte 0x0a (field 1, bytes) whose
/// length leads to another, 16 times over. Only a guess, taken if the first half's walk
/// from the start ends exactly there ([`scan_parallel`]); no walk from the start first.
fn split(b: &[u8]) -> Option<usize> {
    let mid = b.len() / 2;
    let chained = |at: usize| {
        let mut r = Reader::new(&b[at..], 0);
        (0..16).all(|_| r.next_packet().is_some())
    };
    (mid..b.len().min(mid + (1 << 20))).find(|&at| b[at] == 0x0a && chained(at))
}

/// The packets of `b[from..to]`.
fn half(b: &[u8], from: usize, to: usize) -> Result<Half<'_>, Error> {
    let mut h = Half::default();
    let mut d = Diagnostics::default();
    packets(&b[from..to], from as u64, &mut d, |p, at, frame, _| {
        let (seq, parts) = rare_fields(p);
        if parts[4].is_some() {
            h.bundle = true;
        }
        if parts.iter().any(Option::is_some) {
            h.rare.push((seq, parts));
        }
        let (at, frame) = (from + at as usize, from + frame as usize);
        add_run(&mut h.runs, 0, frame, at + p.len(), seq);
    })?;
    h.d = d;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth_proto::varint;

    /// A packet describing track 777, named `name`.
    fn named_track(name: u8) -> [u8; 11] {
        [0x0a, 9, 0xe2, 0x03, 6, 0x08, 0x89, 0x06, 0x12, 1, name]
    }

    /// The generated fixtures (descriptors, clock snapshots, interning, several sequences)
    /// over and over, past [`MIN_BYTES`]; track 777 named "b" first, "a" last.
    fn big() -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/proto/");
        let parts: Vec<Vec<u8>> = ["tracks", "clocks", "interning", "locations"]
            .iter()
            .map(|n| std::fs::read(format!("{dir}{n}.pftrace")).unwrap())
            .collect();
        let mut b = named_track(b'b').to_vec();
        while b.len() < MIN_BYTES + (1 << 20) {
            for p in &parts {
                b.extend_from_slice(p);
            }
        }
        b.extend_from_slice(&named_track(b'a'));
        b
    }

    /// What a pass found, as text: the clocks' hash maps as sorted lines.
    fn text(f: &Found<'_>) -> String {
        let mut clocks: Vec<String> = format!("{:#?}", f.clocks)
            .lines()
            .map(str::to_string)
            .collect();
        clocks.sort();
        let bufs: Vec<_> = f
            .bufs
            .iter()
            .map(|b| (b.bytes.len(), b.at, b.packed))
            .collect();
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{bufs:?}\n{:?}\n{clocks:?}",
            f.tracks, f.processes, f.threads, f.runs, f.compressed
        )
    }

    fn both(b: &[u8]) -> ((String, String), (String, String)) {
        let (mut d1, mut d2) = (Diagnostics::default(), Diagnostics::default());
        let one = text(&scan(b, &[], &mut d1).unwrap());
        let two = text(&scan_parallel(b, &mut d2).unwrap());
        ((one, format!("{d1:?}")), (two, format!("{d2:?}")))
    }

    #[test]
    fn two_halves_find_what_one_pass_finds() {
        let b = big();
        assert!(split(&b).is_some());
        let (one, two) = both(&b);
        assert!(one.0.contains("777: Track { parent: 0, name: Some([97])"));
        assert_eq!(one, two);
    }

    #[test]
    fn a_file_cut_mid_packet_warns_as_one_pass_does() {
        let b = big();
        let cut = &b[..b.len() - 3];
        let (one, two) = both(cut);
        assert!(one.1.contains("ProtoTruncated"), "{}", one.1);
        assert_eq!(one, two);
    }

    #[test]
    fn a_wrong_guess_at_the_middle_is_caught() {
        // The middle falls in one packet's field whose bytes look like packets.
        let mut b = {
            let mut v = big();
            let cut = (0..v.len())
                .scan(Reader::new(&v, 0), |r, _| {
                    r.next_packet().map(|_| r.offset() as usize)
                })
                .find(|&o| o >= 5 << 20)
                .unwrap();
            v.truncate(cut);
            v
        };
        let fake: Vec<u8> = [0x0a, 1, 0].repeat(2 << 20);
        let mut field = vec![0xa2, 0x06];
        varint(fake.len() as u64, &mut field);
        field.extend_from_slice(&fake);
        b.push(0x0a);
        varint(field.len() as u64, &mut b);
        b.extend_from_slice(&field);
        let mid = split(&b).unwrap();
        assert!(
            mid > b.len() - fake.len(),
            "the guess is inside the big packet"
        );
        let (one, two) = both(&b);
        assert_eq!(one, two);
    }
}
