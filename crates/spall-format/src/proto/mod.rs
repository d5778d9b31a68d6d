//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`): what Chrome, Android and the
//! Perfetto SDK write.
//!
//! A trace is a `Trace` message: field 1, `TracePacket`, repeated, each length-delimited.
//! The wire reader ([`wire`]) hands every field out as a slice of the input, so names and
//! arguments borrow from it. Decoding takes two passes over the packets: the first gathers
//! what any event may refer to (track descriptors, clock snapshots, process and thread
//! names) and where each packet sequence's packets lie; the second walks each sequence's
//! incremental state (interned strings, defaults, incremental clocks), sequences grouped
//! into parts decoded apart, in parallel when the input is large (the `parts` module), and emits
//! [`RawEvent`](crate::RawEvent)s in the vocabulary of the JSON decoder: thread-track slices are `B`/`E`, slices on any other track are async
//! (`b`/`e`, with the track's uuid as id), instants `i` (or `n` on async tracks), counters
//! `C` with a `value` argument, flows as flow v2 on their slice, names as `M` events.
//!
//! System traces' packets (ftrace bundles, process trees, the kernel version) are read in
//! `ftrace` into scheduler records and atrace events.
//!
//! Packets of kinds not modelled (system stats, profiles...) are counted per kind
//! ([`WarningKind::ProtoUnmodelled`]), never dropped silently.
//!
//! [`ProtoStream`] decodes the packets as the file's bytes arrive, with one decoder over
//! all sequences and the facts seen so far; it keeps only what later packets may refer to
//! (descriptors, interned data in use) and asks for this whole decode when a later fact
//! would change an event it already gave out (see its module, `stream`).
//!
//! ```
//! use spall_format::{decode, Format, Phase, RawEvent};
//!
//! // One TracePacket: timestamp 1000, a TrackEvent "hi" of type INSTANT (3), no track.
//! let event = [0x48, 3, 0xba, 0x01, 2, b'h', b'i'];
//! let mut packet = vec![0x40, 0xe8, 0x07, 0x5a, event.len() as u8];
//! packet.extend_from_slice(&event);
//! let mut trace = vec![0x0a, packet.len() as u8];
//! trace.extend_from_slice(&packet);
//! let mut got = Vec::new();
//! let summary = decode(&trace, &mut |ev: &RawEvent<'_>| {
//!     got.push((ev.ph, ev.name.to_string(), ev.ts))
//! })
//! .unwrap();
//! assert_eq!(summary.format, Format::Proto);
//! assert_eq!(got, [(Phase::INSTANT, "hi".to_string(), 1000)]);
//! ```

mod ahead;
mod annot;
mod base;
mod clock;
mod compact;
mod compressed;
mod descriptor;
mod events;
mod fast;
mod ftrace;
pub(crate) mod hash;
mod kinds;
mod named;
mod parts;
mod scan;
mod scan_par;
mod seq;
mod stream;
mod track_event;
mod typed;
mod typed_enums;
mod typed_fields;
mod usual;
pub mod wire;

use crate::diag::{Diagnostics, WarningKind};
use crate::error::{Error, ErrorKind};
use crate::event::EventSink;
use wire::{Reader, Value};

pub use stream::ProtoStream;
pub use wire::{WireError, WireErrorKind};

/// Whether `b` starts like a `Trace`: a field-1 length-delimited packet whose first fields
/// parse. JSON cannot pass: its brackets are wire type 3, which no packet field has.
pub(crate) fn looks_like(b: &[u8]) -> bool {
    if b.first() != Some(&0x0a) {
        return false;
    }
    let Ok((len, n)) = wire::varint(&b[1..]) else {
        return false;
    };
    if len == 0 {
        return false;
    }
    let start = 1 + n;
    let end = (start as u64).saturating_add(len).min(b.len() as u64) as usize;
    let packet = &b[start..end];
    let mut fields = 0;
    for f in Reader::new(packet, 0).take(64) {
        match f {
            Ok(_) => fields += 1,
            // A packet cut short by the end of a short input still counts.
            Err(e) if end == b.len() && is_truncation(e.kind) => break,
            Err(_) => return false,
        }
    }
    fields > 0
}

fn is_truncation(k: WireErrorKind) -> bool {
    matches!(
        k,
        WireErrorKind::Truncated | WireErrorKind::LengthPastEnd { .. }
    )
}

/// Calls `f` with each packet, its offset in `b` and the offset of its framing; stops at the
/// first framing error, which becomes a warning (a trace cut off mid-packet keeps what is
/// complete) or, when no packet came before it, an error. Warnings and errors count offsets
/// from `base`.
pub(crate) fn packets<'a>(
    b: &'a [u8],
    base: u64,
    d: &mut Diagnostics,
    mut f: impl FnMut(&'a [u8], u64, u64, &mut Diagnostics),
) -> Result<(), Error> {
    let mut r = Reader::new(b, 0);
    let mut n = 0u64;
    loop {
        let frame = r.offset();
        if let Some(p) = r.next_packet() {
            n += 1;
            f(p, r.offset_of(p), frame, d);
            continue;
        }
        let Some(field) = r.next_field() else {
            break;
        };
        match field {
            Ok(field) => match (field.num, field.value) {
                (1, Value::Bytes(p)) => {
                    n += 1;
                    f(p, r.offset_of(p), field.offset, d);
                }
                _ => d.warn(WarningKind::ProtoMalformed, base + field.offset, || {
                    format!(
                        "a top-level field {} that is not a TracePacket; skipped",
                        field.num
                    )
                }),
            },
            Err(e) => {
                if n == 0 && !is_truncation(e.kind) {
                    return Err(Error::new(
                        ErrorKind::Protobuf(e.to_string()),
                        base + e.offset,
                    ));
                }
                let left = b.len() as u64 - e.offset;
                if is_truncation(e.kind) {
                    d.warn(WarningKind::ProtoTruncated, base + e.offset, || {
                        format!("the trace ends inside a packet ({e}); the {left} bytes from there were not decoded, the {n} packets before them were")
                    });
                } else {
                    d.warn(WarningKind::ProtoMalformed, base + e.offset, || {
                        format!("the packet framing breaks ({e}); the {left} bytes from there were not decoded")
                    });
                }
                break;
            }
        }
    }
    Ok(())
}

/// Decodes a whole (uncompressed) trace into `sink`; returns the number of events. The
/// parts ([`parts`]) are decoded one after the other, as [`decode_parallel`] decodes them
/// at once: the events are those of its sinks, in order.
pub(crate) fn decode<S: EventSink>(
    b: &[u8],
    sink: &mut S,
    d: &mut Diagnostics,
    max_decompressed: u64,
) -> Result<u64, Error> {
    let mut bundles = Vec::new();
    let found = first_pass(b, &mut bundles, d, max_decompressed, false)?;
    let total = b.len() as u64;
    let mut events = events::names(&found, sink) + named::track_names(&found, sink);
    let mut lefts = Vec::new();
    let mut done = 0;
    // One sink takes every part: its keys go on from one part to the next.
    let mut next_key = 1;
    for ranges in parts::plan(&found) {
        let mut dec = events::Decoder::new(&found, next_key);
        dec.run(&ranges, sink, d, &mut |n, s: &mut S| {
            done += n;
            s.progress(done, total);
        });
        next_key = dec.next_key;
        events += dec.events;
        lefts.push(dec.left());
    }
    events += parts::resolve(lefts, sink, d);
    Ok(events)
}

/// Decodes the parts on every core, each into a sink of its own: returns the number of
/// events and the sinks (names first, then one per part, then the ends paired across
/// parts). `add` is called with bytes decoded, from any thread.
pub(crate) fn decode_parallel<S, F>(
    b: &[u8],
    d: &mut Diagnostics,
    max_decompressed: u64,
    new_sink: &F,
    add: &(dyn Fn(u64) + Sync),
) -> Result<(u64, Vec<S>), Error>
where
    S: EventSink + Send,
    F: Fn() -> S + Sync,
{
    use rayon::prelude::*;
    let mut bundles = Vec::new();
    let mut found = first_pass(b, &mut bundles, d, max_decompressed, true)?;
    spall_util::timing::stage("protobuf first pass");
    let mut sinks = vec![new_sink()];
    let mut events =
        events::names(&found, &mut sinks[0]) + named::track_names(&found, &mut sinks[0]);
    let plan = parts::plan(&found);
    // The runs (24 bytes for every dozen packets of a dense file), and each part's ranges
    // once decoded, are freed for the sinks' spans to take their pages, not fresh ones.
    drop(std::mem::take(&mut found.runs));
    let read_ahead = ahead::worth_it(plan.len());
    let done: Vec<_> = plan
        .into_par_iter()
        .map(|ranges| {
            let mut sink = new_sink();
            let mut pd = Diagnostics::default();
            let mut dec = events::Decoder::new(&found, 1);
            let mut run = |dec: &mut events::Decoder<'_>| {
                dec.run(&ranges, &mut sink, &mut pd, &mut |n, _| add(n));
            };
            if read_ahead {
                ahead::with_reader(&found, &ranges, |a| {
                    dec.ftrace.ahead = Some(a);
                    run(&mut dec);
                    dec.ftrace.ahead = None;
                });
            } else {
                run(&mut dec);
            }
            drop(ranges);
            (sink, pd, dec.events, dec.left())
        })
        .collect();
    spall_util::timing::stage("protobuf parts decoded");
    let mut lefts = Vec::with_capacity(done.len());
    for (sink, pd, n, left) in done {
        sinks.push(sink);
        d.merge(pd);
        events += n;
        lefts.push(left);
    }
    let mut last = new_sink();
    events += parts::resolve(lefts, &mut last, d);
    sinks.push(last);
    Ok((events, sinks))
}

/// The first pass ([`scan`]; on two threads if `parallel`, [`scan_par`]), over the file
/// and, where it holds compressed packets, over them too, inflated into `bundles` (see
/// [`compressed`]).
fn first_pass<'a>(
    b: &'a [u8],
    bundles: &'a mut Vec<compressed::Bundle>,
    d: &mut Diagnostics,
    max_decompressed: u64,
    parallel: bool,
) -> Result<scan::Found<'a>, Error> {
    let mut first = Diagnostics::default();
    let found = if parallel {
        scan_par::scan_parallel(b, &mut first)?
    } else {
        scan::scan(b, &[], &mut first)?
    };
    if found.compressed.is_empty() {
        d.merge(first);
        return Ok(found);
    }
    // Walked again with the bundles in their places, so that everything is read in file
    // order: files that hold compressed packets hold little else, so this pass is short.
    *bundles = compressed::inflate(&found.compressed, compressed::limit(max_decompressed), d);
    drop(found);
    let bundles: &'a [compressed::Bundle] = bundles;
    scan::scan(b, bundles, d)
}

/// The name of a packet kind (a `TracePacket` field) for the count of unmodelled packets.
pub(crate) fn packet_kind(field: u32) -> &'static str {
    match field {
        1 => "proto_unmodelled_ftrace_events",
        2 => "proto_unmodelled_process_tree",
        5 => "proto_unmodelled_chrome_events",
        7 => "proto_unmodelled_sys_stats",
        9 => "proto_unmodelled_process_stats",
        33 => "proto_unmodelled_trace_config",
        34 => "proto_unmodelled_ftrace_stats",
        35 => "proto_unmodelled_trace_stats",
        37 => "proto_unmodelled_profile_packet",
        39 => "proto_unmodelled_android_log",
        45 => "proto_unmodelled_system_info",
        51 => "proto_unmodelled_chrome_metadata",
        54 => "proto_unmodelled_streaming_profile_packet",
        66 => "proto_unmodelled_perf_sample",
        67 => "proto_unmodelled_cpu_info",
        69 => "proto_unmodelled_service_event",
        72 => "proto_unmodelled_extension_descriptor",
        82 => "proto_unmodelled_translation_table",
        89 => "proto_unmodelled_trace_uuid",
        124 => "proto_unmodelled_trace_provenance",
        133 => "proto_unmodelled_zstd_compressed_packets",
        135 => "proto_unmodelled_stack_sample",
        _ => "proto_unmodelled_other",
    }
}

#[cfg(test)]
mod args_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod tests;
