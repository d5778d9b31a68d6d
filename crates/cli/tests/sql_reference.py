#!/usr/bin/env python3
"""What a Chrome JSON trace's file says, computed independently of spall, for the SQL tests.

Usage: sql_reference.py TRACE.json[.gz]

Prints one JSON object:
  threads:   {"PID:TID": name} from thread_name metadata
  processes: {"PID": name} from process_name metadata
  counters:  {"PID|NAME|KEY": [samples, sum]} from C events' numeric args ("NAME id: ID"
             when the event has an id, as trace_processor names such tracks)
  args:      {NAME: [leaves, int_sum, real_sum]} over X events' args, for names that occur
             only in X events; leaves are the scalar values reached through objects and
             arrays, booleans counting as integers 0/1.
"""

import collections
import gzip
import json
import sys


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def leaves(v, out):
    if isinstance(v, dict):
        for x in v.values():
            leaves(x, out)
    elif isinstance(v, list):
        for x in v:
            leaves(x, out)
    else:
        out.append(v)


def main():
    events = load(sys.argv[1])
    threads, processes = {}, {}
    counters = collections.defaultdict(lambda: [0, 0.0])
    args = collections.defaultdict(lambda: [0, 0, 0.0])
    not_only_x = set()
    for e in events:
        ph, name = e.get("ph"), e.get("name", "")
        if ph == "M" and name == "thread_name":
            threads[f"{e['pid']}:{e['tid']}"] = e["args"]["name"]
        elif ph == "M" and name == "process_name":
            processes[str(e["pid"])] = e["args"]["name"]
        elif ph == "C":
            series = f"{name} id: {e['id']}" if "id" in e else name
            for k, v in (e.get("args") or {}).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    c = counters[f"{e['pid']}|{series}|{k}"]
                    c[0] += 1
                    c[1] += v
        elif ph == "X":
            vals = []
            leaves(e.get("args") or {}, vals)
            a = args[name]
            a[0] += len(vals)
            a[1] += sum(int(v) for v in vals if isinstance(v, (bool, int)))
            a[2] += sum(v for v in vals if isinstance(v, float))
        elif ph in ("B", "E"):
            not_only_x.add(name)
    for n in not_only_x:
        args.pop(n, None)
    print(json.dumps({
        "threads": threads,
        "processes": processes,
        "counters": counters,
        "args": args,
    }))


if __name__ == "__main__":
    main()
