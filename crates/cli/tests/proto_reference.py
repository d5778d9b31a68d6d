#!/usr/bin/env python3
"""An independent reading of a Perfetto protobuf trace, with the `perfetto` package's
protobuf classes (perfetto_trace_pb2), for comparison with spall's own reader.

    python3 proto_reference.py TRACE.pftrace[.gz]

Prints JSON: slices per name (count, and the sum of their start times in the trace clock's
ns), instants per name, counter samples per counter track name, flow ids and flow points,
the threads' (pid, tid, name), and slices and instants per kind of track (`by_kind`: a
thread's, below a thread's, a process's or below it, or neither: `global`). Events on a
track below a parent no descriptor defines are left out, as trace_processor leaves them.
"""

import bisect
import gzip
import json
import sys
from collections import Counter, defaultdict

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BOOTTIME = 6


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    trace.ParseFromString(data)
    packets = trace.packet

    # Tracks, thread names and clock snapshots come from anywhere in the file.
    tracks = {}
    threads = {}
    trace_clock = None
    snapshots = []
    for p in packets:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            tracks[d.uuid] = d
            if d.HasField("thread"):
                key = (d.thread.pid, d.thread.tid)
                name = d.thread.thread_name or d.name
                if name:
                    threads[key] = name
                elif key not in threads:
                    threads[key] = None
        if p.HasField("clock_snapshot"):
            s = p.clock_snapshot
            if trace_clock is None and s.primary_trace_clock:
                trace_clock = s.primary_trace_clock
            snapshots.append({c.clock_id: c.timestamp * (c.unit_multiplier_ns or 1)
                              for c in s.clocks if not c.is_incremental and c.clock_id < 64})
    trace_clock = trace_clock or BOOTTIME
    pairs = defaultdict(list)
    for s in snapshots:
        if trace_clock in s:
            for cid, ts in s.items():
                pairs[cid].append((ts, s[trace_clock]))
    for v in pairs.values():
        v.sort()

    def to_trace(cid, ns):
        if cid == trace_clock:
            return ns
        v = pairs[cid]
        i = max(bisect.bisect_right(v, (ns, float("inf"))) - 1, 0)
        return ns - v[i][0] + v[i][1]

    slices = Counter()
    starts = Counter()
    instants = Counter()
    counters = Counter()
    flow_ids = set()
    flow_points = 0
    seqs = defaultdict(dict)

    def kind(uuid):
        # The nearest thread or process among the track and its ancestors; None for a
        # track below a parent no descriptor defines.
        t = tracks.get(uuid)
        for _ in range(64):
            if t is None:
                return "global"
            if t.HasField("thread"):
                return "thread"
            if t.HasField("process"):
                return "process"
            if not t.parent_uuid:
                return "global"
            if t.parent_uuid not in tracks:
                return None
            t = tracks[t.parent_uuid]
        return "global"

    by_kind = defaultdict(Counter)

    def counter_name(uuid):
        # A counter under a thread's track is that thread's series: "NAME TID".
        t = tracks.get(uuid)
        if t is None:
            return "counter %d" % uuid
        name = t.name or t.static_name or "counter %d" % uuid
        for _ in range(64):
            if t.HasField("thread"):
                return "%s %d" % (name, t.thread.tid)
            if t.HasField("process") or t.parent_uuid not in tracks:
                break
            t = tracks[t.parent_uuid]
        return name

    for p in packets:
        s = seqs[p.trusted_packet_sequence_id]
        if p.previous_packet_dropped:
            s["valid"] = False
        if p.incremental_state_cleared or p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            for k in ("names", "defaults", "inc"):
                s.pop(k, None)
            s["valid"] = True
        if p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE and not s.get("valid"):
            continue
        names = s.setdefault("names", {})
        for n in p.interned_data.event_names:
            names[n.iid] = n.name
        if p.HasField("trace_packet_defaults"):
            s["defaults"] = p.trace_packet_defaults
        inc = s.setdefault("inc", {})
        if p.HasField("clock_snapshot"):
            c = p.clock_snapshot.clocks
            other = [x for x in c if not x.is_incremental]
            other.sort(key=lambda x: x.clock_id != trace_clock)
            for x in c:
                if x.is_incremental:
                    m = x.unit_multiplier_ns or 1
                    via = (other[0].clock_id, other[0].timestamp * (other[0].unit_multiplier_ns or 1)) if other else None
                    inc[x.clock_id] = [x.timestamp, m, x.timestamp * m, via]
        defaults = s.get("defaults")
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (
            defaults.timestamp_clock_id if defaults is not None and defaults.HasField("timestamp_clock_id") else BOOTTIME)
        # Every packet's time moves its sequence's incremental clock (a track descriptor's
        # too), as trace_processor reads them.
        if clock in inc:
            inc[clock][0] += p.timestamp
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        if clock in inc:
            c = inc[clock]
            ns = c[0] * c[1]
            ts = to_trace(c[3][0], c[3][1] + ns - c[2]) if c[3] else ns
        else:
            ts = to_trace(clock, p.timestamp)
        default = defaults.track_event_defaults.track_uuid if defaults is not None else 0
        if te.HasField("track_uuid") and te.track_uuid == 0:
            # Chrome's legacy events on track 0 stay on their sequence's thread; its
            # typed instants there are global.
            where = "thread" if te.HasField("legacy_event") else "global"
        else:
            where = kind(te.track_uuid if te.HasField("track_uuid") else default)
        if where is None:
            continue
        name = te.name if te.HasField("name") else names.get(te.name_iid, "")
        if te.HasField("legacy_event") and te.legacy_event.HasField("name_iid"):
            name = names.get(te.legacy_event.name_iid, "")
        if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            slices[name] += 1
            starts[name] += ts
            by_kind[where]["slices"] += 1
        elif te.type == pb.TrackEvent.TYPE_INSTANT:
            instants[name] += 1
            by_kind[where]["instants"] += 1
        elif te.type == pb.TrackEvent.TYPE_COUNTER:
            uuid = te.track_uuid if te.HasField("track_uuid") else defaults.track_event_defaults.track_uuid
            counters[counter_name(uuid)] += 1
        elif te.HasField("legacy_event") and chr(te.legacy_event.phase) in "RIi":
            instants[name] += 1
            by_kind[where]["instants"] += 1
        extra = list(te.extra_counter_track_uuids) or (
            list(defaults.track_event_defaults.extra_counter_track_uuids) if defaults is not None else [])
        for uuid, _ in zip(extra, te.extra_counter_values):
            counters[counter_name(uuid)] += 1
        extra = list(te.extra_double_counter_track_uuids) or (
            list(defaults.track_event_defaults.extra_double_counter_track_uuids) if defaults is not None else [])
        for uuid, _ in zip(extra, te.extra_double_counter_values):
            counters[counter_name(uuid)] += 1
        ids = list(te.flow_ids) + list(te.flow_ids_old) + list(te.terminating_flow_ids) + list(te.terminating_flow_ids_old)
        flow_ids.update(ids)
        flow_points += len(ids)

    print(json.dumps({
        "slices": slices, "slice_starts": starts, "instants": instants, "counters": counters,
        "flow_ids": len(flow_ids), "flow_points": flow_points,
        "threads": sorted([pid, tid, n] for (pid, tid), n in threads.items() if n),
        "by_kind": by_kind,
    }, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
