#!/usr/bin/env python3
"""Prints the threads of a Perfetto protobuf trace in the order trace_processor numbers
them (its `thread` table's `utid`), by replaying what its importer meets and when.

    pip install perfetto protobuf
    python3 scripts/tp-thread-order.py TRACE.pftrace[.gz]

Output: a JSON list of [pid, tid], the list index being the utid (0 is the swapper).
`legacy_event.passthrough_utid` (docs/SQL.md) holds such a utid: this is the numbering a
reader must give it.

The replay: trace_processor parses the packets sorted by time (at one time, events before
track descriptors, then in file order) and meets, in that order,
- a thread descriptor's process, then its thread;
- a process descriptor's process, a descriptor below a process or thread (the track it
  hangs from), a pid of Chrome's `ActiveProcesses` list: a process met first brings its
  main thread (tid = pid) right after it;
- the writer of an event on a process's track (that process's thread) or on a global
  track: the thread its sequence's descriptor names.
Track uuids resolve through every descriptor of the file (trace_processor reads them all
before it parses). Timestamps: a sequence's incremental clock (Chrome's clock 64, in
microseconds from its snapshot), or clock 3 given per packet.

Checked against trace_processor's own `SELECT utid, tid, upid FROM thread` (recorded with
tests/web/record-sql-parity.mjs and a QUERIES file): equal on chromium148_script_{all,
toplevel,timeline} and chromium156_script_{toplevel,timeline}; on chromium148_startup
all but one thread.
"""

import gzip
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def packets(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    t = pb.Trace()
    t.ParseFromString(data)
    return t.packet


def timed(pks):
    """(ts, index, packet) for each packet with a time."""
    clocks = {}  # sequence -> [clock 3 at snapshot, clock 64 at snapshot, clock 64 now]
    out = []
    for i, p in enumerate(pks):
        s = p.trusted_packet_sequence_id
        snap = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
        if s and 64 in snap and 3 in snap:
            clocks[s] = [snap[3], snap[64], snap[64]]
        if p.HasField("timestamp_clock_id") and p.timestamp_clock_id == 3:
            out.append((p.timestamp, i, p))
        elif s in clocks and p.HasField("timestamp"):
            c = clocks[s]
            c[2] += p.timestamp
            out.append((c[0] + (c[2] - c[1]) * 1000, i, p))
        elif p.HasField("timestamp"):
            out.append((p.timestamp, i, p))
    return out


def order(pks):
    scope, parent, defaults, seq_thread, writer = {}, {}, {}, {}, {}
    # What trace_processor's tokenizer knows: every descriptor, each sequence's thread.
    for i, p in enumerate(pks):
        s = p.trusted_packet_sequence_id
        if p.trace_packet_defaults.HasField("track_event_defaults"):
            defaults[s] = p.trace_packet_defaults.track_event_defaults.track_uuid
        td = p.track_descriptor
        if p.HasField("track_descriptor"):
            if td.HasField("thread"):
                seq_thread[s] = (td.thread.pid, td.thread.tid)
                scope[td.uuid] = ("t", td.thread.pid, td.thread.tid)
            elif td.HasField("process"):
                scope[td.uuid] = ("p", td.process.pid)
            else:
                parent[td.uuid] = td.parent_uuid
        if p.HasField("track_event") and s in seq_thread:
            e = p.track_event
            u = e.track_uuid if e.HasField("track_uuid") else defaults.get(s, 0)
            k = resolve(scope, parent, u) if u else None
            pid = seq_thread[s][0]
            if k and (k[0] == "g" or k[0] == "p" and k[1] == pid):
                writer[i] = seq_thread[s]

    procs, threads = [0], [(0, 0)]

    def proc(pid):
        if pid not in procs:
            procs.append(pid)
            thread(pid, pid)

    def thread(pid, tid):
        proc(pid)
        if (pid, tid) not in threads:
            threads.append((pid, tid))

    key = lambda x: (x[0], x[2].HasField("track_descriptor"), x[1])
    for _, i, p in sorted(timed(pks), key=key):
        if i in writer:
            thread(*writer[i])
        for pid in p.track_event.chrome_active_processes.pid:
            proc(pid)
        td = p.track_descriptor
        if td.HasField("thread"):
            thread(td.thread.pid, td.thread.tid)
        elif td.HasField("process"):
            proc(td.process.pid)
        elif p.HasField("track_descriptor"):
            k = resolve(scope, parent, td.uuid)
            if k[0] == "p":
                proc(k[1])
            elif k[0] == "t":
                thread(k[1], k[2])
    return threads


def resolve(scope, parent, u):
    """The process or thread a track hangs from, else global."""
    seen = set()
    while u not in scope and u in parent and u not in seen:
        seen.add(u)
        u = parent[u]
    return scope.get(u, ("g",))


if __name__ == "__main__":
    print(json.dumps([list(t) for t in order(packets(sys.argv[1]))]))
