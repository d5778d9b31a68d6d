#!/usr/bin/env python3
"""Writes one `perf script` profile's samples in the other sampling formats, for the page's
load benchmarks beside speedscope (docs/PERFORMANCE.md, "Sampling profiles").

Usage: gen-profiles.py IN.perf OUTDIR MB

Reads IN's samples (a `perf script` header line, then its frames, innermost first), again
from its start, each time after the last, as often as it takes, until each output has about
MB megabytes, and writes, from the same samples in the same order:

- OUTDIR/profile.perf: IN's records, cut at a record's end (a repeated record's time
  moved on);
- OUTDIR/profile.folded: collapsed stacks, one line a sample (`comm;outer;...;inner 1`);
- OUTDIR/profile.speedscope.json: speedscope's file format, one sampled profile in
  nanoseconds, each sample weighing the time to the next one;
- OUTDIR/profile.gecko.json: a Firefox DevTools recording (`{systemHost, profile, duration}`) of a raw
  Gecko profile with one thread, the tables speedscope's Firefox import reads
  (`stackTable` [prefix, frame], `frameTable` [location], `samples` [stack, time] in ms),
  each frame's location `function (dso)`.

A frame is its symbol without the `+0x...` offset; `[unknown]` frames are kept.
"""

import json
import os
import re
import sys
from array import array

FRAME = re.compile(r"^\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$")
HEAD = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?(\d+\.\d+):")


def records(path):
    """(raw text, comm, time in s, [(symbol, dso)] innermost first) per sample, the file
    read again and again, each time shifted after the last."""
    shift, last = 0.0, 0.0
    while True:
        first = None
        for raw, comm, t, frames in records_once(path):
            first = t if first is None else first
            if shift:
                raw = raw.replace(f"{t:.6f}:", f"{t + shift:.6f}:", 1)
            last = t + shift
            yield raw, comm, t + shift, frames
        if first is None:
            return
        shift = last - first + 0.001


def records_once(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        raw, head, frames = [], None, []
        for line in f:
            if line.strip() == "":
                if head:
                    raw.append(line)
                    yield "".join(raw), head[0], head[1], frames
                raw, head, frames = [], None, []
                continue
            raw.append(line)
            if head is None:
                m = HEAD.match(line)
                if m:
                    head = (m.group(1), float(m.group(4)))
            else:
                m = FRAME.match(line)
                if m:
                    frames.append((m.group(1), m.group(2)))


def main():
    src, out, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    limit = int(mb * 1e6)
    os.makedirs(out, exist_ok=True)
    perf = open(os.path.join(out, "profile.perf"), "w")
    folded = open(os.path.join(out, "profile.folded"), "w")
    sizes = {"perf": 0, "folded": 0, "speedscope": 0, "gecko": 0}
    # speedscope's and Gecko's tables, shared by both; a sample is its stack's index.
    frame_ix, frames = {}, []
    stack_ix, prefixes, stack_frames = {}, array("i"), array("i")
    samples, times = array("i"), array("d")
    ss_n = gecko_n = 0
    for raw, comm, t, fr in records(src):
        if sizes["perf"] < limit:
            perf.write(raw)
            sizes["perf"] += len(raw)
        if sizes["folded"] < limit:
            line = ";".join([comm] + [s for s, _ in reversed(fr)]) + " 1\n"
            folded.write(line)
            sizes["folded"] += len(line)
        if sizes["speedscope"] < limit or sizes["gecko"] < limit:
            prefix, depth = -1, 0
            for s, dso in reversed(fr):
                key = (s, dso)
                if key not in frame_ix:
                    frame_ix[key] = len(frames)
                    frames.append(key)
                    sizes["speedscope"] += len(s) + len(dso) + 21
                    sizes["gecko"] += len(s) + len(dso) + 10
                f = frame_ix[key]
                sizes["speedscope"] += len(str(f)) + 1
                depth += 1
                k = (prefix, f)
                if k not in stack_ix:
                    stack_ix[k] = len(prefixes)
                    prefixes.append(prefix)
                    stack_frames.append(f)
                    sizes["gecko"] += len(f"[{prefix},{f}],")
                prefix = stack_ix[k]
            samples.append(prefix)
            times.append(t)
            if sizes["speedscope"] < limit:
                ss_n += 1
                sizes["speedscope"] += 9
            if sizes["gecko"] < limit:
                gecko_n += 1
                sizes["gecko"] += len(f"[{prefix},{(t - times[0]) * 1e3:.3f}],")
        if all(v >= limit for v in sizes.values()):
            break
    perf.close()
    folded.close()

    def path(stack):
        ids = []
        while stack >= 0:
            ids.append(stack_frames[stack])
            stack = prefixes[stack]
        ids.reverse()
        return ids

    t0 = times[0] if times else 0
    ns = [round((t - t0) * 1e9) for t in times[:ss_n]]
    weights = [max(b - a, 0) for a, b in zip(ns, ns[1:])] + [0]
    with open(os.path.join(out, "profile.speedscope.json"), "w") as f:
        shared = {"frames": [{"name": s, "file": d} for s, d in frames]}
        f.write('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":')
        f.write(json.dumps(shared, separators=(",", ":")))
        f.write(f',"profiles":[{{"type":"sampled","name":"deep","unit":"nanoseconds",'
                f'"startValue":0,"endValue":{sum(weights)},"samples":[')
        f.write(",".join(json.dumps(path(s), separators=(",", ":")) for s in samples[:ss_n]))
        f.write('],"weights":[' + ",".join(map(str, weights)) + "]}]")
        f.write(',"name":"deep","activeProfileIndex":0,"exporter":"gen-profiles.py"}')
    used = max((s for s in samples[:gecko_n]), default=-1) + 1
    thread = {
        "name": "GeckoMain", "processType": "default", "pid": 1, "tid": 1,
        "samples": {"schema": {"stack": 0, "time": 1},
                    "data": [[s, round((t - t0) * 1e3, 3)]
                             for s, t in zip(samples[:gecko_n], times[:gecko_n])]},
        "stackTable": {"schema": {"prefix": 0, "frame": 1},
                       "data": [[None if p < 0 else p, f]
                                for p, f in zip(prefixes[:used], stack_frames[:used])]},
        "frameTable": {"schema": {"location": 0}, "data": [[i] for i in range(len(frames))]},
        "stringTable": [f"{s} ({d})" for s, d in frames],
        "markers": {"schema": {"name": 0, "time": 1, "data": 2}, "data": []},
    }
    dur = (times[gecko_n - 1] - t0) * 1e3 if gecko_n else 0
    # speedscope takes a Firefox recording by its systemHost.
    gecko = {"systemHost": {"name": "Firefox"}, "profile": {"meta": {"interval": 0.2, "startTime": 0, "version": 24,
                                  "processType": 0, "product": "gen-profiles.py"},
                         "threads": [thread], "processes": [], "libs": []},
             "duration": dur}
    with open(os.path.join(out, "profile.gecko.json"), "w") as f:
        json.dump(gecko, f, separators=(",", ":"))


main()
