#!/usr/bin/env python3
"""Writes crates/spall-format/src/proto/typed_fields.rs: the descriptors of Chrome's typed
TrackEvent fields (`chrome_mojo_event_info`, `chrome_frame_reporter`, ...), which
trace_processor turns into args by reflection, taken from the PyPI package `perfetto`'s
compiled protos. Run again when that package's TrackEvent gains fields:

    pip install perfetto && scripts/gen-proto-fields.py
"""
import gzip
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FieldDescriptor as F

# The TrackEvent fields written as args: its Chrome-specific messages. The others are read
# by the decoder itself (names, tracks, counters, flows, annotations, locations) or are not
# args in trace_processor (log messages, callstacks, thread time, screenshots).
TOP = [24, 25, 26, 27, 28, 29, 32, 35, 38, 39, 40, 41, 43, 49]

TY = {
    F.TYPE_INT32: "Int", F.TYPE_INT64: "Int",
    F.TYPE_SINT32: "Sint", F.TYPE_SINT64: "Sint",
    F.TYPE_SFIXED32: "Sfixed32", F.TYPE_SFIXED64: "Sfixed64",
    F.TYPE_UINT32: "Uint", F.TYPE_UINT64: "Uint", F.TYPE_FIXED32: "Uint", F.TYPE_FIXED64: "Uint",
    F.TYPE_BOOL: "Bool", F.TYPE_DOUBLE: "Double", F.TYPE_FLOAT: "Float",
    F.TYPE_STRING: "Str",
}

# Chrome's own TrackEvent extensions (`ChromeTrackEvent`, fields 1000-1999) are not in the
# package: trace_processor compiles in Chrome's `chrome_track_event.proto` and adds the
# descriptor a trace carries (its `extension_descriptor` packet). They are taken from the
# descriptor Chromium 156 wrote into a fixture trace.
FIXTURE = "tests/fixtures/real/chromium156_script_toplevel.pftrace.gz"
SHARED = "protos/perfetto/trace/perfetto_trace.proto"


def chrome_extensions(root):
    """ChromeTrackEvent's extensions of TrackEvent, as (number, name, field descriptor)."""
    trace = pb.Trace()
    with gzip.open(os.path.join(root, FIXTURE)) as f:
        trace.ParseFromString(f.read())
    sets = [p.extension_descriptor.extension_set for p in trace.packet if p.HasField("extension_descriptor")]
    pool = descriptor_pool.DescriptorPool()
    shared = descriptor_pb2.FileDescriptorProto()
    pb.TrackEvent.DESCRIPTOR.file.CopyToProto(shared)
    pool.Add(shared)
    for raw in sets[-1].file:
        # Perfetto's own copy of descriptor.proto: read again as protobuf's.
        fd = descriptor_pb2.FileDescriptorProto.FromString(raw.SerializeToString())
        # The package has Perfetto's protos in one file: its TrackEvent, SourceLocation, ...
        deps = [d if d.startswith("base/") else SHARED for d in fd.dependency]
        del fd.dependency[:]
        fd.dependency.extend(dict.fromkeys(deps))
        del fd.public_dependency[:]
        pool.Add(fd)
    ext = pool.FindMessageTypeByName("perfetto.protos.ChromeTrackEvent").extensions
    return sorted((e.number, e.name, e) for e in ext if e.containing_type.full_name == te.full_name)


messages, enums, enum_names = [], [], []
msg_index, enum_index = {}, {}


def enum(e):
    if e.full_name not in enum_index:
        enum_index[e.full_name] = len(enums)
        enums.append(sorted((v.number, v.name) for v in e.values))
        enum_names.append(e.full_name)
    return enum_index[e.full_name]


def message(m):
    if m.full_name in msg_index:
        return msg_index[m.full_name]
    i = len(messages)
    msg_index[m.full_name] = i
    messages.append(None)
    fields = []
    for f in sorted(m.fields, key=lambda f: f.number):
        if f.type == F.TYPE_MESSAGE:
            ty = f"Msg({message(f.message_type)})"
        elif f.type == F.TYPE_ENUM:
            ty = f"Enum({enum(f.enum_type)})"
        elif f.type in TY:
            ty = TY[f.type]
        else:
            continue  # bytes and groups: not args
        fields.append((f.number, f.name, ty, f.is_repeated))
    messages[i] = (m.full_name, fields)
    return i


te = pb.TrackEvent.DESCRIPTOR
top = []
for n in TOP:
    f = te.fields_by_number[n]
    top.append((n, f.name, message(f.message_type)))
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
for n, name, f in chrome_extensions(root):
    if f.type == F.TYPE_MESSAGE:
        top.append((n, name, message(f.message_type)))
def packed(w, items, indent):
    """Writes `items` (each ending in a comma) as lines of at most 100 columns."""
    line = indent
    for it in items:
        if len(line) + len(it) + 1 > 100 and line.strip():
            w.write(line.rstrip() + "\n")
            line = indent
        line += it + " "
    if line.strip():
        w.write(line.rstrip() + "\n")


def slices(w, lists, notes):
    """Writes each list of items as a slice `&[...]`, on one line where it fits."""
    for items, note in zip(lists, notes):
        one_line = f"    &[{' '.join(items).rstrip(',')}], // {note}"
        if len(one_line) <= 100:
            w.write(one_line + "\n")
            continue
        w.write(f"    // {note}\n    &[\n")
        packed(w, items, "        ")
        w.write("    ],\n")


HEAD = """//! Generated by `scripts/gen-proto-fields.py` from the PyPI package `perfetto`'s
//! descriptors and the extension descriptor Chromium 156 writes into its traces:
//! Chrome's typed TrackEvent fields {what}. Do not edit by hand.
//! (Packed several to a line, unformatted: a table, not code to read.)

"""
d = os.path.join(root, "crates/spall-format/src/proto")
with open(os.path.join(d, "typed_fields.rs"), "w") as w:
    w.write(HEAD.format(what="and their messages"))
    w.write("use super::descriptor::{many, one, Field, Ty::*};\n\n")
    w.write("/// TrackEvent's typed fields written as args: (number, name, message).\n")
    w.write("#[rustfmt::skip]\n")
    w.write(f"pub(super) static TRACK_EVENT: [(u32, &str, u16); {len(top)}] = [\n")
    packed(w, [f"({n}, \"{name}\", {m})," for n, name, m in top], "    ")
    w.write("];\n\n")
    w.write("/// Each message's fields, by number.\n")
    w.write("#[rustfmt::skip]\n")
    w.write(f"pub(super) static MESSAGES: [&[Field]; {len(messages)}] = [\n")
    slices(w, [[f"{'many' if rep else 'one'}({n}, \"{fname}\", {ty})," for n, fname, ty, rep in fields]
               for _, fields in messages], [f"{i}: {name}" for i, (name, _) in enumerate(messages)])
    w.write("];\n")
with open(os.path.join(d, "typed_enums.rs"), "w") as w:
    w.write(HEAD.format(what="(their enums)"))
    w.write("/// Each enum's values, by number.\n")
    w.write("#[rustfmt::skip]\n")
    w.write(f"pub(super) static ENUMS: [&[(i32, &str)]; {len(enums)}] = [\n")
    slices(w, [[f"({n}, \"{name}\")," for n, name in vals] for vals in enums],
           [f"{i}: {name}" for i, name in enumerate(enum_names)])
    w.write("];\n")
print(f"{d}: {len(top)} TrackEvent fields, {len(messages)} messages, {len(enums)} enums")
