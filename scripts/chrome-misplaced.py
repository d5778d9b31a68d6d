#!/usr/bin/env python3
"""A realistic Chrome JSON that trace_processor pairs otherwise (docs/PERFORMANCE.md, "One
decode of every file"): COPIES (8) copies of a real Chromium trace, each shifted after the
last, in one traceEvents array; in copy 3 (or the last), right after a thread's first B,
a B and an E of another name at its time: one misplaced end event, in time order.

    python3 scripts/chrome-misplaced.py OUT.json [SRC.json.gz [COPIES]]

SRC defaults to ../shared/corpus/real/catapult_lthi_cats.json.gz (from the project root).
"""
import gzip
import json
import sys

out_path = sys.argv[1]
src = sys.argv[2] if len(sys.argv) > 2 else "../shared/corpus/real/catapult_lthi_cats.json.gz"
evs = json.load(gzip.open(src))["traceEvents"]
ts = [e["ts"] for e in evs if isinstance(e.get("ts"), (int, float))]
span = max(ts) - min(ts) + 1000
copies = int(sys.argv[3]) if len(sys.argv) > 3 else 8
b0 = next(i for i, e in enumerate(evs) if e.get("ph") == "B")
with open(out_path, "w") as out:
    out.write('{"traceEvents":[\n')
    sep = ""
    for c in range(copies):
        for i, e in enumerate(evs):
            e2 = dict(e)
            if isinstance(e2.get("ts"), (int, float)):
                e2["ts"] += c * span
            out.write(sep + json.dumps(e2, separators=(",", ":")))
            sep = ",\n"
            if c == min(3, copies - 1) and i == b0:
                for ph, name in (("B", "misplaced"), ("E", "other")):
                    x = {"ph": ph, "name": name, "cat": e["cat"], "ts": e2["ts"],
                         "pid": e["pid"], "tid": e["tid"]}
                    out.write(sep + json.dumps(x, separators=(",", ":")))
    out.write("\n]}\n")
