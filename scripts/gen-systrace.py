#!/usr/bin/env python3
"""Writes small Perfetto system traces (ftrace) for tests, and large ones for benchmarks.

The traces are built with the protobuf classes of PyPI's `perfetto` package (0.59.1:
`perfetto.protos.perfetto.trace.perfetto_trace_pb2`), so every field number is Perfetto's.

    python3 scripts/gen-systrace.py tests/fixtures/systrace      # the fixtures, gzipped
    python3 scripts/gen-systrace.py --big 300 /tmp/sched.pftrace   # ~300 MB of compact_sched
    python3 scripts/gen-systrace.py --big 100 --cpus 2 --tasks 5000 --per-bundle 512 F  # many threads
    python3 scripts/gen-systrace.py --android 1 /tmp/android.pftrace.gz  # an Android-like second

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


def big(path, mb, cpus=8, tasks=64, per_bundle=4096):
    """Compact_sched bundles, `per_bundle` switches and as many wakings each, round robin over
    `cpus` CPUs, until `mb` megabytes: each CPU runs tasks 1000.. (`tasks` of them) in turn,
    with the comms a bundle names in its intern table."""
    deltas = b"".join(varint(d) for d in ([37, 911, 12000, 4097] * per_bundle)[: per_bundle - 1])
    states = b"".join(varint(s) for s in ([1, 0, 2, 0x800] * per_bundle)[:per_bundle])
    prios = b"".join(varint(120) for _ in range(per_bundle))
    wtarget = b"".join(varint(i % cpus) for i in range(per_bundle))
    wflags = b"".join(varint(0) for _ in range(per_bundle))
    variants = []
    # Each bundle switches between 64 of the tasks (as a CPU's page of ftrace names a few
    # dozen); with more tasks, bundles take turns over groups of them.
    group = min(64, tasks)
    for v in range(-(-tasks // group)):
        run = [(v * group + i % group) % tasks for i in range(per_bundle)]
        woken = [(v * group + (i * 7) % group) % tasks for i in range(per_bundle)]
        index = {t: k for k, t in enumerate(dict.fromkeys(run + woken))}
        interned = b"".join(field(5, 2, ("task-%d" % t).encode()) for t in index)
        variants.append((interned, b"".join(varint(1000 + t) for t in run),
                         b"".join(varint(index[t]) for t in run),
                         b"".join(varint(1000 + t) for t in woken),
                         b"".join(varint(index[t]) for t in woken)))
    size = mb * 1_000_000
    step = (37 + 911 + 12000 + 4097) * per_bundle // 4
    written = 0
    n = 0
    with open(path, "wb") as f:
        while written < size:
            cpu = n % cpus
            interned, pids, cidx, wpids, widx = variants[(n // cpus) % len(variants)]
            start = 1_000_000 + (n // cpus) * step
            ts = varint(start) + deltas
            wts = varint(start + 5) + deltas
            cs = (interned + field(1, 2, ts) + field(2, 2, states) + field(3, 2, pids)
                  + field(4, 2, prios) + field(6, 2, cidx) + field(7, 2, wts)
                  + field(8, 2, wpids) + field(9, 2, wtarget) + field(10, 2, prios)
                  + field(11, 2, widx) + field(12, 2, wflags))
            bundle = field(1, 0, varint(cpu)) + field(4, 2, cs)
            pkt = field(10, 0, varint(SEQ)) + field(1, 2, bundle)
            out = field(1, 2, pkt)
            f.write(out)
            written += len(out)
            n += 1
    print(f"{path}: {written} bytes, {n} bundles, {n * per_bundle} switches")


# An Android-like system trace: a 60 Hz app with its RenderThread, surfaceflinger, binder
# calls into system_server, a garbage collector and kernel workers, placed on 8 CPUs by a
# small scheduler, with cpufreq and cpuidle, as an Android device records it.
ANDROID_THREADS = [
    # (tid, tgid, name, CPUs it may run on)
    (600, 600, "surfaceflinger", range(0, 8)),
    (610, 600, "RenderEngine", range(0, 8)),
    (1000, 1000, "system_server", range(0, 8)),
    (1011, 1000, "binder:1000_1", range(0, 8)),
    (1012, 1000, "binder:1000_2", range(0, 8)),
    (1020, 1000, "android.anim", range(0, 8)),
    (5000, 5000, "com.example.app", range(4, 8)),
    (5010, 5000, "RenderThread", range(4, 8)),
    (5011, 5000, "HeapTaskDaemon", range(0, 4)),
    (5012, 5000, "binder:5000_1", range(0, 8)),
    (80, 80, "kworker/u16:2", range(0, 8)),
    (400, 400, "logd", range(0, 4)),
]
ANDROID_PROCS = {600: ["/system/bin/surfaceflinger"], 1000: ["system_server"],
                 5000: ["com.example.app"], 80: ["kworker/u16:2"], 400: ["/system/bin/logd"]}


class Sched:
    """Places runs of tasks on CPUs: each run starts on the allowed CPU free first, no
    earlier than its wakeup, so the time between shows as runnable."""

    def __init__(self, rng):
        self.rng = rng
        self.free = [0] * 8
        self.runs = [[] for _ in range(8)]  # (start, end, tid, end_state, marks)
        self.wakes = []  # (cpu, ts, waker, tid, target_cpu)
        self.where = {}  # tid -> (cpu, end) of its last run
        self.blocked = []  # (end, tid): runs that ended blocked on I/O
        self.names = {t[0]: t[2] for t in ANDROID_THREADS}
        self.cpus = {t[0]: t[3] for t in ANDROID_THREADS}

    def run(self, tid, wake, dur, waker=None, end_state=1, marks=()):
        cpu = min(self.cpus[tid], key=lambda c: (max(self.free[c], wake), c))
        start = max(self.free[cpu], wake) + self.rng.randint(2, 40) * 1000
        if waker == 0:
            self.wakes.append((cpu, wake, 0, tid, cpu))
        elif waker is not None and waker in self.where:
            self.wakes.append((self.where[waker][0], wake, waker, tid, cpu))
        end = start + dur
        self.runs[cpu].append((start, end, tid, end_state, [(start + o, m) for o, m in marks]))
        self.free[cpu] = end
        self.where[tid] = (cpu, end)
        return end


def android_trace(seconds=0.5, seed=7):
    import random
    rng = random.Random(seed)
    s = Sched(rng)
    ms = 1_000_000
    frame = 16_666_667
    t0 = 10 * ms
    for tid in (5011, 80, 400, 1011, 5000, 5010, 600, 1000):
        s.where[tid] = (0, t0)
    gc_next = t0 + 40 * ms
    for k in range(int(seconds * 1e9 / frame)):
        v = t0 + k * frame
        # Vsync: surfaceflinger composes, then wakes the app's main thread.
        sf = s.run(600, v, rng.randint(1, 3) * ms, waker=0,
                   marks=[(0, "B|600|onMessageRefresh"), (ms // 2, "E|600")])
        work = rng.randint(3, 9) * ms
        half = work // 2
        # The app's frame: a binder call into system_server in the middle.
        m1 = s.run(5000, sf, half, waker=600, end_state=1,
                   marks=[(0, "B|5000|Choreographer#doFrame %d" % k), (1000, "B|5000|traversal"),
                          (half // 2, "E|5000"), (half // 2 + 1000, "B|5000|binder transaction")])
        b = s.run(1011, m1, rng.randint(3, 12) * 100_000, waker=5000,
                  marks=[(0, "B|1000|binder reply"), (50_000, "E|1000")])
        m2 = s.run(5000, b, work - half, waker=1011, end_state=1,
                   marks=[(0, "E|5000"), (1000, "B|5000|draw"), (work - half - 2000, "E|5000"),
                          (work - half - 1000, "E|5000")])
        # RenderThread draws, sometimes waiting on I/O (D) half way.
        draw = rng.randint(2, 6) * ms
        if rng.random() < 0.3:
            r1 = s.run(5010, m2, draw // 2, waker=5000, end_state=2,
                       marks=[(0, "B|5000|DrawFrame %d" % k)])
            s.blocked.append((r1, 5010))
            r = s.run(5010, r1 + rng.randint(5, 20) * 100_000, draw - draw // 2, waker=80,
                      marks=[(draw - draw // 2 - 1000, "E|5000")])
        else:
            r = s.run(5010, m2, draw, waker=5000,
                      marks=[(0, "B|5000|DrawFrame %d" % k), (draw - 1000, "E|5000")])
        s.run(610, r, rng.randint(5, 15) * 100_000, waker=5010)
        # Background: system_server's animation thread, kernel workers and logd.
        s.run(1020, v + 2 * ms, rng.randint(2, 8) * 100_000, waker=1000)
        for _ in range(rng.randint(1, 4)):
            s.run(80, v + rng.randint(0, 16) * ms, rng.randint(1, 3) * 50_000, waker=0)
        if rng.random() < 0.5:
            s.run(400, v + rng.randint(0, 16) * ms, rng.randint(1, 5) * 100_000, waker=5000)
        # The garbage collector: long runs, preempted (R+) and resumed.
        while gc_next < v + frame:
            e = s.run(5011, gc_next, rng.randint(2, 6) * ms, waker=5000, end_state=0x100,
                      marks=[(0, "B|5000|concurrent mark compact GC"), (1000_000, "E|5000")])
            gc_next = e + rng.randint(2, 30) * ms
    return android_packets(s, rng)


def android_packets(s, rng):
    t = pb.Trace()
    si = packet(t)
    si.system_info.utsname.sysname = "Linux"
    si.system_info.utsname.release = "6.1.25-android14"
    p = packet(t)
    p.timestamp = 1
    for pid, cmd in ANDROID_PROCS.items():
        pr = p.process_tree.processes.add()
        pr.pid, pr.ppid = pid, 1
        pr.cmdline.extend(cmd)
    for tid, tgid, name, _ in ANDROID_THREADS:
        th = p.process_tree.threads.add()
        th.tid, th.tgid, th.name = tid, tgid, name
    blocked = set(s.blocked)
    for cpu in range(8):
        b = packet(t).ftrace_events
        b.cpu = cpu
        wakes = sorted(w for w in s.wakes if w[0] == cpu)
        events = []
        for wcpu, ts, waker, tid, target in wakes:
            events.append((ts - 500, "w", (waker, tid, target)))
        runs = s.runs[cpu]
        idle = (0, "swapper/%d" % cpu)
        freq_at = 0
        for i, (start, end, tid, state, marks) in enumerate(runs):
            task = (tid, s.names[tid])
            events.append((start, "s", (idle, task, 0)))
            events.extend((ts, "m", (tid, m)) for ts, m in marks)
            events.append((end, "s", (task, idle, state)))
            if (end, tid) in blocked:
                events.append((end + 1000, "b", tid))
            nxt = runs[i + 1][0] if i + 1 < len(runs) else None
            if nxt is not None and nxt - end > 1_000_000:
                events.append((end + 20_000, "i", rng.choice([0, 1, 2])))
                events.append((nxt - 20_000, "i", 4294967295))
            if end >= freq_at:
                events.append((end + 5000, "f", rng.choice([300000, 1000000, 1800000, 2400000])))
                freq_at = end + rng.randint(20, 80) * 1_000_000
        for ts, kind, a in sorted(events, key=lambda e: (e[0], e[1] != "s")):
            if kind == "s":
                (p_tid, p_comm), (n_tid, n_comm), state = a
                switch(b, ts, p_tid, p_comm, state, n_tid, n_comm)
            elif kind == "m":
                mark(b, ts, a[0], a[1])
            elif kind == "w":
                waker, tid, target = a
                ev(b, ts, waker, flags=0x10 if waker == 0 else 0,
                   sched_waking=dict(comm=s.names.get(tid, ""), pid=tid, prio=120,
                                     target_cpu=target, success=1))
            elif kind == "b":
                ev(b, ts, 0, sched_blocked_reason=dict(pid=a, caller=0xffff0000, io_wait=1))
            elif kind == "i":
                ev(b, ts, 0, cpu_idle=dict(state=a, cpu_id=cpu))
            elif kind == "f":
                ev(b, ts, 0, cpu_frequency=dict(state=a, cpu_id=cpu))
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="a folder for the fixtures, or with --big a file")
    ap.add_argument("--big", type=int, metavar="MB", help="write one large compact_sched trace")
    ap.add_argument("--cpus", type=int, default=8, help="with --big: how many CPUs")
    ap.add_argument("--tasks", type=int, default=64, help="with --big: how many tasks take turns")
    ap.add_argument("--per-bundle", type=int, default=4096, help="with --big: switches a bundle")
    ap.add_argument("--android", type=float, metavar="SECONDS",
                    help="write one Android-like trace (60 Hz app, binder, GC) of this length, gzipped")
    a = ap.parse_args()
    if a.big:
        return big(a.out, a.big, a.cpus, a.tasks, a.per_bundle)
    if a.android:
        t = android_trace(a.android)
        write_gz(a.out, t)
        print(f"{a.out}: {len(t.SerializeToString())} bytes")
        return 0
    os.makedirs(a.out, exist_ok=True)
    for name, t in [("events", events_trace()), ("compact", compact_trace()),
                    ("hostile", hostile_trace())]:
        write_gz(os.path.join(a.out, f"{name}.pftrace.gz"), t)
        print(f"{a.out}/{name}.pftrace.gz: {len(t.SerializeToString())} bytes")


if __name__ == "__main__":
    sys.exit(main())
