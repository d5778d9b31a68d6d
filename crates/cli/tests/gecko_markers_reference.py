#!/usr/bin/env python3
"""The markers of a raw Gecko profile as slices, computed independently of spall.

Usage: gecko_markers_reference.py FILE.json[.gz]

Prints one line per marker, "NAME<TAB>TS<TAB>DUR" (nanoseconds), sorted, over every thread
of the profile and of its nested `processes`, as the Firefox Profiler derives them from the
raw `markers` table (read through its `schema`):
- phase 0, an instant: DUR 0;
- phase 1, an interval from `startTime` to `endTime`;
- phase 2 and 3, an interval's start and end: paired by name, each end with the latest
  start not yet ended; an end with no start is dropped; a start never ended lasts to the
  thread's last sample (or its start, if later).
Times are milliseconds from the process's `meta.startTime`; a nested process's are moved
onto the root's clock by the difference of the two start times.
"""

import gzip
import json
import sys


def processes(profile, root_start):
    shift = profile["meta"]["startTime"] - root_start
    yield profile, shift
    for p in profile.get("processes", []):
        yield from processes(json.loads(p) if isinstance(p, str) else p, root_start)


def markers(t, shift):
    ns = lambda ms: int((ms + shift) * 1e6)
    ss = t["samples"]["schema"]
    times = [r[ss["time"]] for r in t["samples"]["data"]]
    last = max(times) if times else float("-inf")
    m = t["markers"]
    ms, strings = m["schema"], t["stringTable"]
    open_starts = {}
    for r in m["data"]:
        name, phase = strings[r[ms["name"]]], r[ms["phase"]]
        start, end = r[ms["startTime"]], r[ms["endTime"]]
        if phase == 0:
            yield name, ns(start), 0
        elif phase == 1:
            yield name, ns(start), max(ns(end) - ns(start), 0)
        elif phase == 2:
            open_starts.setdefault(name, []).append(start)
        elif phase == 3 and open_starts.get(name):
            s = open_starts[name].pop()
            e = end if end is not None else start
            yield name, ns(s), max(ns(e) - ns(s), 0)
    for name, starts in open_starts.items():
        for s in starts:
            yield name, ns(s), max(ns(max(last, s)) - ns(s), 0)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        profile = json.load(f)
    rows = []
    for p, shift in processes(profile, profile["meta"]["startTime"]):
        for t in p["threads"]:
            t = json.loads(t) if isinstance(t, str) else t
            rows.extend(markers(t, shift))
    for name, ts, dur in sorted(rows):
        print(f"{name}\t{ts}\t{dur}")


if __name__ == "__main__":
    main(sys.argv[1])
