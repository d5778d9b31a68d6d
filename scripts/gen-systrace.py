#!/usr/bin/env python3
"""Writes small Perfetto system traces (ftrace) for tests, and large ones for benchmarks.

The traces are built with the protobuf classes of PyPI's `perfetto` package (0.59.1:
`perfetto.protos.perfetto.trace.perfetto_trace_pb2`), so every field number is Perfetto's.

    python3 scripts/gen-systrace.py tests/fixtures/systrace      # the fixtures, gzipped
    python3 scripts/gen-systrace.py --big 300 /tmp/sched.pftrace   # ~300 MB of compact_sched

Fixtures (each gzipped; tests/fixtures/systrace/README.md says what each holds):
- `events.pftrace.gz`: kernel 6.1 (SystemInfo), a process tree, two CPUs' bundles written
  CPU after CPU (so out of time order across CPUs), with sched_switch (S, D, R+, I end
  states), sched_waking (with and without irq flags), sched_wakeup, sched_wakeup_new,
  task_newtask, task_rename, sched_blocked_reason, sched_process_exit/free, cpu_frequency,
  cpu_idle and atrace print markers (B/E on two threads, C, S/F, I).
- `compact.pftrace.gz`: no kernel version (4.4 bits), compact_sched switches and wakings
  on two CPUs, with an intern table, in two bundles per CPU.
- `hostile.pftrace.gz`: kernel 6.1, a state no such kernel defines, a switch back in time on one CPU, a CPU
  number of 4 billion, a cpu_frequency for CPU 3 billion, an atrace marker that breaks.
"""

import argparse
import gzip
import os
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SEQ = 1


def packet(trace):
    p = trace.packet.add()
    p.trusted_packet_sequence_id = SEQ
    return p


def ev(bundle, ts, pid, **kw):
    e = bundle.event.add()
    e.timestamp = ts
    e.pid = pid
    flags = kw.pop("flags", None)
    if flags is not None:
        e.common_flags = flags
    for name, fields in kw.items():
        msg = getattr(e, name)
        for k, v in fields.items():
            setattr(msg, k, v)
    return e


def switch(b, ts, prev, prev_comm, prev_state, nxt, next_comm, prev_prio=120, next_prio=120):
    ev(b, ts, prev, sched_switch=dict(
        prev_pid=prev, prev_comm=prev_comm, prev_prio=prev_prio, prev_state=prev_state,
        next_pid=nxt, next_comm=next_comm, next_prio=next_prio))


def mark(b, ts, tid, text):
    ev(b, ts, tid, print=dict(ip=0, buf=text + "\n"))


def process_tree(trace):
    p = packet(trace)
    p.timestamp = 500
    for pid, cmd in [(100, ["/system/bin/app", "--flag"]), (200, ["surfaceflinger"])]:
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.ppid = 1
        pr.cmdline.extend(cmd)
    for tid, tgid, name in [(100, 100, "app"), (101, 100, "RenderThread"), (201, 200, "binder:200_1")]:
        th = p.process_tree.threads.add()
        th.tid = tid
        th.tgid = tgid
        th.name = name


def events_trace():
    t = pb.Trace()
    si = packet(t)
    si.system_info.utsname.sysname = "Linux"
    si.system_info.utsname.release = "6.1.25-android14"
    process_tree(t)
    p = packet(t)
    b = p.ftrace_events
    b.cpu = 0
    switch(b, 1000, 0, "swapper/0", 0, 100, "app")
    mark(b, 1500, 100, "B|100|doFrame")
    ev(b, 2000, 100, flags=0, sched_waking=dict(comm="RenderThread", pid=101, prio=110, target_cpu=1, success=1))
    mark(b, 2500, 100, "C|100|queue|3")
    mark(b, 3000, 100, "E|100")
    switch(b, 3500, 100, "app", 1, 0, "swapper/0")
    ev(b, 4000, 0, cpu_frequency=dict(state=1800000, cpu_id=0))
    ev(b, 4500, 0, cpu_idle=dict(state=1, cpu_id=0))
    ev(b, 6000, 0, cpu_idle=dict(state=4294967295, cpu_id=0))
    ev(b, 6000, 0, flags=0x10, sched_waking=dict(comm="app", pid=100, prio=120, target_cpu=0, success=1))
    switch(b, 6500, 0, "swapper/0", 0, 100, "app")
    ev(b, 7000, 100, task_newtask=dict(pid=102, comm="app", clone_flags=0x10000 | 0x100, oom_score_adj=0))
    ev(b, 7100, 100, sched_wakeup_new=dict(comm="app", pid=102, prio=120, target_cpu=0, success=1))
    ev(b, 7200, 102, task_rename=dict(pid=102, oldcomm="app", newcomm="pool-1", oom_score_adj=0))
    mark(b, 7500, 100, "S|100|load|7")
    switch(b, 8000, 100, "app", 0x100, 102, "pool-1")
    mark(b, 8500, 102, "I|100|tick")
    switch(b, 9000, 102, "pool-1", 2, 100, "app")
    ev(b, 9100, 100, sched_blocked_reason=dict(pid=102, caller=0xffff0000, io_wait=1))
    mark(b, 9500, 100, "F|100|load|7")
    switch(b, 10000, 100, "app", 0x80, 0, "swapper/0")
    ev(b, 10500, 0, sched_process_exit=dict(comm="pool-1", pid=102, tgid=100, prio=120))
    ev(b, 10600, 0, sched_process_free=dict(comm="pool-1", pid=102, prio=120))
    p = packet(t)
    b = p.ftrace_events
    b.cpu = 1
    switch(b, 1200, 0, "swapper/1", 0, 201, "binder:200_1")
    switch(b, 2200, 201, "binder:200_1", 1, 101, "RenderThread", next_prio=110)
    mark(b, 2300, 101, "B|100|draw")
    mark(b, 2600, 101, "E|100")
    ev(b, 2800, 0, cpu_frequency=dict(state=1200000, cpu_id=1))
    switch(b, 3200, 101, "RenderThread", 0, 0, "swapper/1", prev_prio=110)
    ev(b, 5000, 0, sched_wakeup=dict(comm="binder:200_1", pid=201, prio=120, target_cpu=1, success=1))
    ev(b, 5200, 0, flags=0x08, sched_waking=dict(comm="binder:200_1", pid=201, prio=120, target_cpu=1, success=1))
    switch(b, 5500, 0, "swapper/1", 0, 201, "binder:200_1")
    return t


def compact_bundle(t, cpu, switches, wakings):
    """switches: (ts, prev_state, next_pid, next_prio, comm); wakings: (ts, pid, target, prio, comm, flags)."""
    p = packet(t)
    b = p.ftrace_events
    b.cpu = cpu
    cs = b.compact_sched
    table = []

    def idx(s):
        if s not in table:
            table.append(s)
        return table.index(s)

    last = 0
    for ts, st, pid, prio, comm in switches:
        cs.switch_timestamp.append(ts - last)
        last = ts
        cs.switch_prev_state.append(st)
        cs.switch_next_pid.append(pid)
        cs.switch_next_prio.append(prio)
        cs.switch_next_comm_index.append(idx(comm))
    last = 0
    for ts, pid, target, prio, comm, flags in wakings:
        cs.waking_timestamp.append(ts - last)
        last = ts
        cs.waking_pid.append(pid)
        cs.waking_target_cpu.append(target)
        cs.waking_prio.append(prio)
        cs.waking_comm_index.append(idx(comm))
        cs.waking_common_flags.append(flags)
    cs.intern_table.extend(table)


def compact_trace():
    t = pb.Trace()
    process_tree(t)
    compact_bundle(t, 0, [(1000, 0, 100, 120, "app"), (3000, 1, 0, 120, "swapper/0")],
                   [(2000, 101, 1, 110, "RenderThread", 0)])
    compact_bundle(t, 1, [(1500, 0, 101, 110, "RenderThread"), (2500, 2, 0, 120, "swapper/1"),
                          (6000, 0, 100, 120, "app")],
                   [(5800, 100, 1, 120, "app", 0x10)])
    compact_bundle(t, 0, [(5000, 0, 101, 110, "RenderThread"), (7000, 0x800, 0, 120, "swapper/0")],
                   [(4500, 100, 1, 120, "app", 0)])
    compact_bundle(t, 1, [(8000, 1, 0, 120, "swapper/1")], [(7500, 101, 0, 110, "RenderThread", 0)])
    return t


def hostile_trace():
    t = pb.Trace()
    si = packet(t)
    si.system_info.utsname.release = "6.1.0"
    process_tree(t)
    p = packet(t)
    b = p.ftrace_events
    b.cpu = 0
    switch(b, 1000, 0, "swapper/0", 0, 100, "app")
    switch(b, 2000, 100, "app", 0xfe00, 101, "RenderThread")
    switch(b, 1500, 101, "RenderThread", 1, 100, "app")  # back in time
    mark(b, 2100, 100, "B|nope|x")
    ev(b, 2200, 0, cpu_frequency=dict(state=1000, cpu_id=3000000000))
    switch(b, 3000, 100, "app", 1, 0, "swapper/0")
    p = packet(t)
    b = p.ftrace_events
    b.cpu = 4000000000
    switch(b, 1200, 0, "swapper", 0, 201, "binder:200_1")
    switch(b, 2200, 201, "binder:200_1", 1, 0, "swapper")
    return t


def write_gz(path, t):
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(t.SerializeToString())


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def big(path, mb, cpus=8, per_bundle=4096):
    """Compact_sched bundles, `per_bundle` switches and as many wakings each, round robin over
    `cpus` CPUs, until `mb` megabytes: each CPU runs tasks 1000..1063 in turn."""
    comms = [("task-%d" % i).encode() for i in range(64)]
    deltas = b"".join(varint(d) for d in ([37, 911, 12000, 4097] * per_bundle)[: per_bundle - 1])
    states = b"".join(varint(s) for s in ([1, 0, 2, 0x800] * per_bundle)[:per_bundle])
    pids = b"".join(varint(1000 + (i % 64)) for i in range(per_bundle))
    prios = b"".join(varint(120) for _ in range(per_bundle))
    cidx = b"".join(varint(i % 64) for i in range(per_bundle))
    wpids = b"".join(varint(1000 + ((i * 7) % 64)) for i in range(per_bundle))
    wtarget = b"".join(varint(i % cpus) for i in range(per_bundle))
    wflags = b"".join(varint(0) for _ in range(per_bundle))
    interned = b"".join(field(5, 2, c) for c in comms)
    size = mb * 1_000_000
    step = (37 + 911 + 12000 + 4097) * per_bundle // 4
    written = 0
    n = 0
    with open(path, "wb") as f:
        while written < size:
            cpu = n % cpus
            start = 1_000_000 + (n // cpus) * step
            ts = varint(start) + deltas
            wts = varint(start + 5) + deltas
            cs = (interned + field(1, 2, ts) + field(2, 2, states) + field(3, 2, pids)
                  + field(4, 2, prios) + field(6, 2, cidx) + field(7, 2, wts)
                  + field(8, 2, wpids) + field(9, 2, wtarget) + field(10, 2, prios)
                  + field(11, 2, cidx) + field(12, 2, wflags))
            bundle = field(1, 0, varint(cpu)) + field(4, 2, cs)
            pkt = field(10, 0, varint(SEQ)) + field(1, 2, bundle)
            out = field(1, 2, pkt)
            f.write(out)
            written += len(out)
            n += 1
    print(f"{path}: {written} bytes, {n} bundles, {n * per_bundle} switches")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="a folder for the fixtures, or with --big a file")
    ap.add_argument("--big", type=int, metavar="MB", help="write one large compact_sched trace")
    a = ap.parse_args()
    if a.big:
        return big(a.out, a.big)
    os.makedirs(a.out, exist_ok=True)
    for name, t in [("events", events_trace()), ("compact", compact_trace()),
                    ("hostile", hostile_trace())]:
        write_gz(os.path.join(a.out, f"{name}.pftrace.gz"), t)
        print(f"{a.out}/{name}.pftrace.gz: {len(t.SerializeToString())} bytes")


if __name__ == "__main__":
    sys.exit(main())
