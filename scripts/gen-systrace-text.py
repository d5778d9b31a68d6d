#!/usr/bin/env python3
"""Writes tests/fixtures/systrace/events.trace (tracefs `trace` text, as Android's atrace
prints it: the tgid and irq-info columns, every fourth line without them as plain tracefs
prints it) and events.html (a systrace page holding it in a trace-data block after a JSON
one): the events of events.pftrace.gz (scripts/gen-systrace.py), their times 1000x, as
microseconds. Run from the repository root: python3 scripts/gen-systrace-text.py

Also the same text in the other wrappings system traces come in:
- events.ctrace: `adb shell atrace -z ... > events.ctrace`: atrace's `capturing trace...
  done` and `TRACE:` lines, then the text zlib-deflated (atrace's default level);
- android.html: a systrace page as catapult's systrace writes one from a device: a JSON
  block, a `PROCESS DUMP` block (android_process_data_agent's two `ps` snapshots: processes
  with their NAME column, then threads with their names), and the trace text as base64
  gzip (catapult's trace2html encoding of a block); dump.html, the same with the text as
  text;
- chrome-system.json: a Chrome JSON trace (spans on the app's threads, as Chrome's own
  tracing writes them) whose `systemTraceEvents` string holds the text."""
import base64
import gzip
import json
import zlib
rows = [
 (1000,0,"<idle>",0,None,"d..2","sched_switch","prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120"),
 (1200,1,"<idle>",0,None,"d..2","sched_switch","prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=binder:200_1 next_pid=201 next_prio=120"),
 (1500,0,"app",100,100,"....","tracing_mark_write","B|100|doFrame"),
 (2000,0,"app",100,100,"d..4","sched_waking","comm=RenderThread pid=101 prio=110 target_cpu=001"),
 (2200,1,"binder:200_1",201,200,"d..2","sched_switch","prev_comm=binder:200_1 prev_pid=201 prev_prio=120 prev_state=S ==> next_comm=RenderThread next_pid=101 next_prio=110"),
 (2300,1,"RenderThread",101,100,"....","tracing_mark_write","B|100|draw"),
 (2500,0,"app",100,100,"....","tracing_mark_write","C|100|queue|3"),
 (2600,1,"RenderThread",101,100,"....","tracing_mark_write","E|100"),
 (2800,1,"RenderThread",101,100,"....","cpu_frequency","state=1200000 cpu_id=1"),
 (3000,0,"app",100,100,"....","tracing_mark_write","E|100"),
 (3200,1,"RenderThread",101,100,"d..2","sched_switch","prev_comm=RenderThread prev_pid=101 prev_prio=110 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120"),
 (3500,0,"app",100,100,"d..2","sched_switch","prev_comm=app prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"),
 (4000,0,"<idle>",0,None,"d..2","cpu_frequency","state=1800000 cpu_id=0"),
 (4500,0,"<idle>",0,None,"d..2","cpu_idle","state=1 cpu_id=0"),
 (5000,1,"<idle>",0,None,"dNs4","sched_wakeup","comm=binder:200_1 pid=201 prio=120 target_cpu=001"),
 (5200,1,"<idle>",0,None,"dNs4","sched_waking","comm=binder:200_1 pid=201 prio=120 target_cpu=001"),
 (5500,1,"<idle>",0,None,"d..2","sched_switch","prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=binder:200_1 next_pid=201 next_prio=120"),
 (6000,0,"<idle>",0,None,"d..2","cpu_idle","state=4294967295 cpu_id=0"),
 (6000,0,"<idle>",0,None,"dNh4","sched_waking","comm=app pid=100 prio=120 target_cpu=000"),
 (6500,0,"<idle>",0,None,"d..2","sched_switch","prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=app next_pid=100 next_prio=120"),
 (7000,0,"app",100,100,"....","task_newtask","pid=102 comm=app clone_flags=10100 oom_score_adj=0"),
 (7100,0,"app",100,100,"d..3","sched_wakeup_new","comm=app pid=102 prio=120 target_cpu=000"),
 (7200,0,"app",100,100,"....","task_rename","pid=102 oldcomm=app newcomm=pool-1 oom_score_adj=0"),
 (7500,0,"app",100,100,"....","tracing_mark_write","S|100|load|7"),
 (8000,0,"app",100,100,"d..2","sched_switch","prev_comm=app prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=pool-1 next_pid=102 next_prio=120"),
 (8500,0,"pool-1",102,100,"....","tracing_mark_write","I|100|tick"),
 (9000,0,"pool-1",102,100,"d..2","sched_switch","prev_comm=pool-1 prev_pid=102 prev_prio=120 prev_state=D ==> next_comm=app next_pid=100 next_prio=120"),
 (9100,0,"app",100,100,"d..2","sched_blocked_reason","pid=102 iowait=1 caller=__lock_page+0x1c/0x30"),
 (9500,0,"app",100,100,"....","tracing_mark_write","F|100|load|7"),
 (10000,0,"app",100,100,"d..2","sched_switch","prev_comm=app prev_pid=100 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120"),
 (10500,0,"<idle>",0,None,"....","sched_process_exit","comm=pool-1 pid=102 prio=120"),
 (10600,0,"<idle>",0,None,"....","sched_process_free","comm=pool-1 pid=102 prio=120"),
]
head = """# tracer: nop
#
# entries-in-buffer/entries-written: %d/%d   #P:2
#
#                                      _-----=> irqs-off
#                                     / _----=> need-resched
#                                    | / _---=> hardirq/softirq
#                                    || / _--=> preempt-depth
#                                    ||| /     delay
#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION
#              | |        |      |   ||||       |         |
""" % (len(rows), len(rows))
lines = []
for i, (ns, cpu, comm, tid, tgid, flags, ev, f) in enumerate(rows):
    task = "%s-%d" % (comm, tid)
    g = "(%5d)" % tgid if tgid else "(-----)"
    ts = "%d.%06d" % (ns * 1000 // 10**9, (ns * 1000 % 10**9) // 1000)
    # Every fourth line as tracefs prints it without the tgid and irq-info columns.
    if i % 4 == 3:
        lines.append("%16s [%03d] %12s: %s: %s" % (task, cpu, ts, ev, f))
    else:
        lines.append("%16s %s [%03d] %s %12s: %s: %s" % (task, g, cpu, flags, ts, ev, f))
text = head + "\n".join(lines) + "\n"
open("tests/fixtures/systrace/events.trace", "w").write(text)
html = """<!DOCTYPE html>
<html>
<head i18n-values="dir:textdirection;">
<meta charset="utf-8"/>
<title>Android System Trace</title>
</head>
<body>
  <script class="trace-data" type="application/text">
{"traceEvents": [], "systemTraceEvents": ""}
  </script>
  <script class="trace-data" type="application/text">
%s  </script>
<!-- END TRACE -->
</body>
</html>
""" % text
open("tests/fixtures/systrace/events.html", "w").write(html)

open("tests/fixtures/systrace/events.ctrace", "wb").write(
    b"capturing trace... done\nTRACE:\n" + zlib.compress(text.encode()))

# `ps -A -o USER,PID,PPID,VSIZE,RSS,WCHAN,ADDR=PC,S,NAME,COMM && ps -AT -o USER,PID,TID,CMD`,
# at the start and at the end of the trace (pool-1 exited in between).
procs = [("root", 1, 0, "init"), ("system", 200, 1, "system_server"),
         ("u0_a123", 100, 1, "com.example.app")]
threads = [("root", 1, 1, "init"), ("system", 200, 200, "system_server"),
           ("system", 200, 201, "binder:200_1"), ("u0_a123", 100, 100, "com.example.app"),
           ("u0_a123", 100, 101, "RenderThread"), ("u0_a123", 100, 102, "pool-1")]
def ps(with_pool):
    out = ["USER           PID  PPID     VSZ    RSS WCHAN            PC S NAME                       COMMAND"]
    for user, pid, ppid, name in procs:
        out.append("%-10s %7d %5d %7d %6d %-16s %2d S %-26s %s" % (
            user, pid, ppid, 2105344 + pid, 4096 + pid, "do_epoll_wait", 0, name, name))
    out.append("USER           PID   TID CMD")
    for user, pid, tid, name in threads:
        if tid == 102 and not with_pool:
            continue
        out.append("%-10s %7d %5d %s" % (user, pid, tid, name))
    return "\n".join(out) + "\n"
dump = "PROCESS DUMP\n" + ps(True) + ps(False)
gz = gzip.compress(text.encode(), mtime=0)
page = """<!DOCTYPE html>
<html>
<head i18n-values="dir:textdirection;">
<meta charset="utf-8"/>
<title>Android System Trace</title>
</head>
<body>
<!-- BEGIN TRACE -->
  <script class="trace-data" type="application/text">
{"traceEvents": [], "metadata": {"clock-domain": "SYSTRACE"}}
  </script>
  <script class="trace-data" type="application/text">
%s  </script>
  <script class="trace-data" type="application/text">
%s
  </script>
<!-- END TRACE -->
</body>
</html>
""" % (dump, base64.b64encode(gz).decode())
open("tests/fixtures/systrace/android.html", "w").write(page)
# The same page with the text as text, which trace_processor reads too (it reads no base64
# block): its answers on this one are the parity suite's.
plain = page.replace(base64.b64encode(gz).decode() + "\n", text)
open("tests/fixtures/systrace/dump.html", "w").write(plain)

# Chrome's spans on the app's main thread and render thread, in the trace's microseconds
# (ftrace's clock: Chrome on Android traces on CLOCK_MONOTONIC, as the kernel does).
chrome = {"traceEvents": [
    {"name": "process_name", "ph": "M", "pid": 100, "tid": 100, "args": {"name": "com.example.app"}},
    {"name": "thread_name", "ph": "M", "pid": 100, "tid": 100, "args": {"name": "CrBrowserMain"}},
    {"name": "Looper.dispatch", "cat": "toplevel", "ph": "X", "ts": 1400, "dur": 1700, "pid": 100, "tid": 100},
    {"name": "RenderFrame", "cat": "gpu", "ph": "X", "ts": 2250, "dur": 400, "pid": 100, "tid": 101},
], "displayTimeUnit": "ns", "systemTraceEvents": text}
open("tests/fixtures/systrace/chrome-system.json", "w").write(json.dumps(chrome, indent=1) + "\n")
