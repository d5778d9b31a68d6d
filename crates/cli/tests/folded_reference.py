#!/usr/bin/env python3
"""Folded stacks of a Chrome JSON trace, computed independently of spall's model.

Usage: folded_reference.py TRACE.json[.gz] [--per-thread]

Prints one line per stack, "frame;frame;... SELF_NS", sorted, with threads merged (or,
with --per-thread, "pid N" and "tid N" as the first two frames, as spall-cli writes them
for unnamed processes and threads). Only complete (X) and begin/end (B/E) events count;
times are decimal microseconds converted exactly to nanoseconds (ties to even).

Nesting is rebuilt per thread from the spans sorted by start, longest first: a span is a
child of the innermost open span that has not ended by its start. Self time is the span's
duration minus its direct children's; a child that outlives its parent counts (for its
own time too) only up to the parent's end, so no frame is wider than its parent. For files
where spans overlap without nesting (which spall repairs and counts as warnings) the two
computations may differ: the tests use traces that nest.
"""

import collections
import decimal
import gzip
import json
import sys


def ns(value):
    d = decimal.Decimal(str(value)) if not isinstance(value, decimal.Decimal) else value
    return int((d * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace").rstrip()
    # Traces may end without their closing bracket, or with a trailing comma.
    try:
        doc = json.loads(text, parse_float=decimal.Decimal)
    except json.JSONDecodeError:
        doc = json.loads(text.rstrip(",") + "]", parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def clean(name):
    return str(name).replace(";", ":").replace("\n", " ").replace("\r", " ")


def spans_by_thread(events):
    threads = collections.defaultdict(list)
    open_b = collections.defaultdict(list)
    for i, e in enumerate(events):
        ph = e.get("ph")
        key = (str(e.get("pid", "")), str(e.get("tid", "")))
        if ph == "X":
            start = ns(e["ts"])
            threads[key].append((start, start + ns(e.get("dur", 0)), i, e.get("name", "")))
        elif ph == "B":
            open_b[key].append((ns(e["ts"]), i, e.get("name", "")))
        elif ph == "E" and open_b[key]:
            start, i0, name = open_b[key].pop()
            threads[key].append((start, ns(e["ts"]), i0, name))
    return threads


def folded(events, per_thread):
    out = collections.Counter()
    for (pid, tid), spans in spans_by_thread(events).items():
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[2]))
        prefix = [f"pid {pid}", f"tid {tid}"] if per_thread else []
        # Open spans: [start, end, path, child time, end its time is counted to].
        stack = []

        def close(top):
            s, _, path, child, cut = top
            out[path] += (cut - s) - child

        for start, end, _, name in spans:
            while stack and stack[-1][1] < start or (
                stack and stack[-1][1] == start and start < end
            ):
                close(stack.pop())
            cut = end
            if stack:
                parent = stack[-1]
                # A child that outlives its parent counts up to the parent's end.
                cut = max(start, min(end, parent[4]))
                parent[3] += cut - start
                path = parent[2] + ";" + clean(name)
            else:
                path = ";".join(prefix + [clean(name)])
            stack.append([start, end, path, 0, cut])
        while stack:
            close(stack.pop())
    return sorted(f"{k} {v}" for k, v in out.items() if v > 0)


def main():
    per_thread = "--per-thread" in sys.argv[2:]
    for line in folded(load(sys.argv[1]), per_thread):
        print(line)


if __name__ == "__main__":
    main()
