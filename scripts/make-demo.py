#!/usr/bin/env python3
"""Cuts the built-in demo trace out of a real Chrome trace.

    scripts/make-demo.py ../shared/corpus/real/catapult_lthi_cats.json.gz 2400 2650 \
        > tests/fixtures/real/demo_lthi_excerpt.json

Keeps the events of [START, END] ms (relative to the first timestamp) that are whole inside
it: X slices, matched B/E pairs, async operations from their first to their last event,
flows whose points are all inside, counters, instants and samples; and every M event
(object snapshots, N/O/D, are left out: the viewer does not draw them). The
events are otherwise unchanged, so the excerpt is still the tool's own output.
"""
import gzip
import json
import sys
from collections import defaultdict


def main():
    path, a_ms, b_ms = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    t0 = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
    lo, hi = t0 + a_ms * 1000, t0 + b_ms * 1000
    inside = lambda e: lo <= e["ts"] <= hi
    keep = set()
    # B/E pairs, per thread, by a stack over the whole file in time order.
    stacks = defaultdict(list)
    order = sorted(range(len(events)), key=lambda i: events[i].get("ts", 0))
    for i in order:
        e = events[i]
        ph = e.get("ph")
        if ph == "B":
            stacks[(e.get("pid"), e.get("tid"))].append(i)
        elif ph == "E":
            st = stacks[(e.get("pid"), e.get("tid"))]
            if st:
                b = st.pop()
                if inside(events[b]) and inside(e):
                    keep.update((b, i))
    groups = defaultdict(list)
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph == "M" or (ph in "XCiIRPn" and "ts" in e and inside(e)):
            if ph != "X" or e["ts"] + e.get("dur", 0) <= hi:
                keep.add(i)
        elif ph in "bneSTpF":
            groups[("async", e.get("cat"), str(e.get("id", e.get("id2"))))].append(i)
        elif ph in "stf":
            groups[("flow", e.get("cat"), str(e.get("id", e.get("bind_id"))))].append(i)
    for members in groups.values():
        if all(inside(events[i]) for i in members):
            keep.update(members)
    out = [events[i] for i in sorted(keep)]
    json.dump({"traceEvents": out}, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


main()
