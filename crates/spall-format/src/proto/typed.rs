//! Chrome's typed TrackEvent fields as JSON args, by their descriptors.
//!
//! trace_processor turns every TrackEvent field it does not read itself into args by
//! reflection over Perfetto's descriptors: `chrome_mojo_event_info.mojo_interface_tag`,
//! `chrome_frame_reporter.state`, `chrome_active_processes.pid[0]`. The descriptors of the
//! messages Chrome writes are compiled in (`typed_fields.rs`, generated); an enum is written
//! as its value's name, as trace_processor writes it.

use super::annot::{self, escape_into};
use super::descriptor::Ty;
use super::hash::IdMap;
use super::typed_enums::ENUMS;
use super::typed_fields::{MESSAGES, TRACK_EVENT};
use super::wire::{Reader, Value, WireError};
use crate::diag::Diagnostics;
use crate::tagged;

/// The message a TrackEvent field `num` holds when it is one written as args, with its name.
pub(super) fn track_event_field(num: u32) -> Option<(&'static str, u16)> {
    let i = TRACK_EVENT.binary_search_by_key(&num, |t| t.0).ok()?;
    Some((TRACK_EVENT[i].1, TRACK_EVENT[i].2))
}

/// The sequence's interned `UnsymbolizedSourceLocation`s, undecoded, by iid.
pub(super) type Unsymbolized<'s, 'a> = &'s IdMap<u64, &'a [u8]>;

/// Writes `"name":{...}`: the message `msg` (`b`, at offset `at`) as a JSON object.
pub(super) fn write_field(
    out: &mut String,
    name: &str,
    msg: u16,
    b: &[u8],
    at: u64,
    unsym: Unsymbolized<'_, '_>,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    escape_into(out, name);
    out.push(':');
    message(out, msg, b, at, 0, unsym, d)
}

/// trace_processor's one override among these fields: a Mojo method's interned native
/// symbol, written as `mojo_interface_method.native_symbol.{mapping_id,rel_pc}` instead of
/// its iid. False (nothing written) when the iid is not interned.
fn native_symbol(out: &mut String, iid: Option<u64>, unsym: Unsymbolized<'_, '_>) -> bool {
    let Some(loc) = iid.and_then(|i| unsym.get(&i)) else {
        return false;
    };
    let (mut mapping, mut pc) = (0, 0);
    for f in Reader::new(loc, 0).map_while(Result::ok) {
        match f.num {
            2 => mapping = f.value.uint().unwrap_or(0),
            3 => pc = f.value.uint().unwrap_or(0),
            _ => {}
        }
    }
    out.push_str("\"mojo_interface_method\":{\"native_symbol\":{\"mapping_id\":");
    tagged::write_uint(out, mapping);
    out.push_str(",\"rel_pc\":");
    tagged::write_uint(out, pc);
    out.push_str("}}");
    true
}

/// A message's known fields, kept in file order as read (by their index in the
/// message's descriptor), on the stack up to this many.
const KEPT: usize = 16;

fn message(
    out: &mut String,
    msg: u16,
    b: &[u8],
    at: u64,
    depth: usize,
    unsym: Unsymbolized<'_, '_>,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    if depth >= annot::MAX_DEPTH {
        annot::deep(d, at);
        out.push_str("null");
        return Ok(());
    }
    let fields = MESSAGES[msg as usize];
    // The message read once: its known fields kept, and a bit for each present, so they
    // are written in the order of their numbers, a repeated field's values gathered into
    // one array. A wire error ends the message where it is, and is returned once the JSON
    // value is complete.
    let mut err = Ok(());
    let mut present: u128 = 0;
    let mut stack = [(0u8, Value::Varint(0), 0u64); KEPT];
    let (mut n, mut heap) = (0, Vec::new());
    for f in Reader::new(b, at) {
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                err = Err(e);
                break;
            }
        };
        let Ok(i) = fields.binary_search_by_key(&f.num, |x| x.num) else {
            continue;
        };
        present |= 1 << i;
        let kept = (i as u8, f.value, f.offset);
        if n < KEPT {
            stack[n] = kept;
        } else {
            if n == KEPT {
                heap.extend_from_slice(&stack);
            }
            heap.push(kept);
        }
        n += 1;
    }
    let kept = if n <= KEPT { &stack[..n] } else { &heap[..] };
    out.push('{');
    let mut k = 0;
    while present != 0 {
        let i = present.trailing_zeros() as usize;
        let field = &fields[i];
        present &= present - 1;
        if k > 0 {
            out.push(',');
        }
        k += 1;
        let mut all = kept.iter().filter(|x| x.0 as usize == i);
        if field.name == "mojo_interface_method_iid" {
            let iid = all.clone().next_back().and_then(|x| x.1.uint());
            if native_symbol(out, iid, unsym) {
                continue;
            }
        }
        // A plain identifier (`every_message_fits_a_mask`): nothing to escape.
        out.push('"');
        out.push_str(field.name);
        out.push_str("\":");
        if !field.repeated {
            // A singular field given more than once: the last one counts, as in protobuf.
            let &(_, v, at) = all.next_back().expect("present");
            err = err.and(scalar(out, field.ty, v, at, depth, unsym, d));
            continue;
        }
        out.push('[');
        let mut first = true;
        for &(_, v, at) in all {
            let values = match (v, field.ty) {
                (Value::Bytes(p), ty) if !matches!(ty, Ty::Str | Ty::Msg(_)) => packed(p, ty),
                (v, _) => vec![v],
            };
            for v in values {
                if !std::mem::take(&mut first) {
                    out.push(',');
                }
                err = err.and(scalar(out, field.ty, v, at, depth, unsym, d));
            }
        }
        out.push(']');
    }
    out.push('}');
    err
}

/// The values of a packed repeated scalar field.
fn packed(p: &[u8], ty: Ty) -> Vec<Value<'_>> {
    let mut out = Vec::new();
    match ty {
        Ty::Double | Ty::Sfixed64 => {
            for c in p.chunks_exact(8) {
                out.push(Value::Fixed64(u64::from_le_bytes(c.try_into().unwrap())));
            }
        }
        Ty::Float | Ty::Sfixed32 => {
            for c in p.chunks_exact(4) {
                out.push(Value::Fixed32(u32::from_le_bytes(c.try_into().unwrap())));
            }
        }
        _ => {
            let mut rest = p;
            while !rest.is_empty() {
                let Ok((v, n)) = super::wire::varint(rest) else {
                    break;
                };
                out.push(Value::Varint(v));
                rest = &rest[n..];
            }
        }
    }
    out
}

fn scalar(
    out: &mut String,
    ty: Ty,
    v: Value<'_>,
    at: u64,
    depth: usize,
    unsym: Unsymbolized<'_, '_>,
    d: &mut Diagnostics,
) -> Result<(), WireError> {
    let wrong = |out: &mut String, d: &mut Diagnostics| {
        annot::wrong_type(d, at);
        out.push_str("null");
    };
    match (ty, v) {
        (Ty::Int, Value::Varint(x)) => tagged::push_i64(out, x as i64),
        (Ty::Sint, Value::Varint(x)) => tagged::push_i64(out, (x >> 1) as i64 ^ -((x & 1) as i64)),
        (Ty::Uint, Value::Varint(x) | Value::Fixed64(x)) => tagged::write_uint(out, x),
        (Ty::Uint, Value::Fixed32(x)) => tagged::write_uint(out, x.into()),
        (Ty::Sfixed32, Value::Fixed32(x)) => tagged::push_i64(out, (x as i32).into()),
        (Ty::Sfixed64, Value::Fixed64(x)) => tagged::push_i64(out, x as i64),
        (Ty::Bool, Value::Varint(x)) => out.push_str(if x != 0 { "true" } else { "false" }),
        (Ty::Double, Value::Fixed64(x)) => tagged::write_f64(out, f64::from_bits(x)),
        (Ty::Float, Value::Fixed32(x)) => tagged::write_f64(out, f32::from_bits(x) as f64),
        (Ty::Str, Value::Bytes(s)) => annot::escape_bytes(out, s, at, d),
        (Ty::Enum(e), Value::Varint(x)) => {
            let values = ENUMS[e as usize];
            match values.binary_search_by_key(&(x as i32), |v| v.0) {
                // A plain identifier (`every_message_fits_a_mask`): nothing to escape.
                Ok(i) => {
                    out.push('"');
                    out.push_str(values[i].1);
                    out.push('"');
                }
                Err(_) => tagged::push_i64(out, (x as i32).into()),
            }
        }
        (Ty::Msg(m), Value::Bytes(s)) => message(out, m, s, at, depth + 1, unsym, d)?,
        _ => wrong(out, d),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`message`] counts on: each message's fields sorted by number (found by a
    /// binary search), at most 128 of them (a bit each), named by plain identifiers
    /// (written unescaped), as enums' values are.
    #[test]
    fn every_message_fits_a_mask() {
        for (m, fields) in MESSAGES.iter().enumerate() {
            assert!(fields.len() <= 128, "message {m}: {} fields", fields.len());
            assert!(
                fields.windows(2).all(|w| w[0].num < w[1].num),
                "message {m}"
            );
            for f in fields.iter() {
                let plain = (f.name.bytes()).all(|c| c.is_ascii_alphanumeric() || c == b'_');
                assert!(plain && !f.name.is_empty(), "message {m}: {:?}", f.name);
            }
        }
        for (e, values) in ENUMS.iter().enumerate() {
            for (_, name) in values.iter() {
                let plain = (name.bytes()).all(|c| c.is_ascii_alphanumeric() || c == b'_');
                assert!(plain && !name.is_empty(), "enum {e}: {name:?}");
            }
        }
    }
}
