//! [`Synth`]'s spans as Perfetto protobuf: TrackEvent slices as Chrome's tracing writes
//! them (one packet a begin or an end, names interned on the packet sequence).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::synth::{Step, Synth};

/// `TracePacket.sequence_flags`: the sequence's interned data starts here, and is needed.
const CLEARED: u64 = 1;
const NEEDS: u64 = 2;
/// `TrackEvent.type`.
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
/// The one packet sequence.
const SEQUENCE: u64 = 1;

/// Appends varint `v` (the writers' and the protobuf tests' one encoder).
pub(crate) fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field.
fn num(field: u64, v: u64, out: &mut Vec<u8>) {
    varint(field << 3, out);
    varint(v, out);
}

/// A length-delimited field.
fn bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
    varint(field << 3 | 2, out);
    varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

impl Synth {
    /// Writes Perfetto protobuf: a track descriptor for each thread, then each span as a
    /// `TYPE_SLICE_BEGIN` and a `TYPE_SLICE_END` TrackEvent on its thread's track, its name
    /// interned in the first packet, times in nanoseconds. Returns the number of spans
    /// written.
    pub fn write_proto<W: Write>(&self, out: W) -> io::Result<u64> {
        let mut w = io::BufWriter::with_capacity(1 << 20, out);
        let packet = |p: &[u8], w: &mut io::BufWriter<W>| {
            let mut framed = Vec::with_capacity(p.len() + 4);
            bytes(1, p, &mut framed);
            w.write_all(&framed)
        };
        // Each thread's track uuid: its place in `walk`'s order, from 1.
        let mut uuids = HashMap::new();
        for (k, (pid, tid)) in self.thread_ids().enumerate() {
            let uuid = k as u64 + 1;
            uuids.insert((pid, tid), uuid);
            let (mut thread, mut track, mut pk) = (Vec::new(), Vec::new(), Vec::new());
            num(1, pid.into(), &mut thread);
            num(2, tid.into(), &mut thread);
            bytes(5, format!("worker-{tid}").as_bytes(), &mut thread);
            num(1, uuid, &mut track);
            bytes(4, &thread, &mut track);
            bytes(60, &track, &mut pk);
            packet(&pk, &mut w)?;
        }
        let (mut interned, mut entry) = (Vec::new(), Vec::new());
        for (i, name) in self.name_table().iter().enumerate() {
            entry.clear();
            num(1, i as u64 + 1, &mut entry);
            bytes(2, name.as_bytes(), &mut entry);
            bytes(2, &entry, &mut interned);
        }
        let mut first = Vec::new();
        num(10, SEQUENCE, &mut first);
        num(13, CLEARED | NEEDS, &mut first);
        bytes(12, &interned, &mut first);
        packet(&first, &mut w)?;
        let (mut count, mut result) = (0u64, Ok(()));
        let (mut pk, mut te) = (Vec::new(), Vec::new());
        self.walk(|step, s| {
            if result.is_err() {
                return;
            }
            pk.clear();
            te.clear();
            let (ts, ty) = match step {
                Step::Open => (s.start_ns, SLICE_BEGIN),
                Step::Close => (s.end_ns, SLICE_END),
            };
            num(9, ty, &mut te);
            if step == Step::Open {
                num(10, s.name as u64 + 1, &mut te);
            } else {
                count += 1;
            }
            num(11, uuids[&(s.pid, s.tid)], &mut te);
            num(8, ts, &mut pk);
            num(10, SEQUENCE, &mut pk);
            num(13, NEEDS, &mut pk);
            bytes(11, &te, &mut pk);
            result = packet(&pk, &mut w);
        });
        result?;
        w.flush()?;
        Ok(count)
    }
}
