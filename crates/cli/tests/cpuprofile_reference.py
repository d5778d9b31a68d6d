#!/usr/bin/env python3
"""Self time per function of a V8 .cpuprofile, computed independently of spall.

Usage: cpuprofile_reference.py FILE.cpuprofile

Prints one line per function, "NAME<TAB>SELF_NS<TAB>SAMPLES", sorted by name. A sample's
time is startTime plus the running sum of timeDeltas (microseconds); samples are taken in
time order, and each weighs the time to the next one, the last the time to endTime, as
Chrome DevTools counts self time. A node's function is its callFrame.functionName, or
"(anonymous)" when empty. Also checks the samples per node against V8's own hitCount
(which leaves out the first sample in file order, taken as the profiler starts).
"""

import collections
import json
import sys


def main(path):
    with open(path, encoding="utf-8") as f:
        prof = json.load(f)
    nodes = {n["id"]: n for n in prof["nodes"]}
    clock = prof["startTime"]
    times = []
    for d in prof["timeDeltas"]:
        clock += d
        times.append(clock)
    samples = sorted(zip(times, prof["samples"]), key=lambda s: s[0])
    hits = collections.Counter(prof["samples"][1:])
    for node_id, node in nodes.items():
        if node.get("hitCount", 0) != hits.get(node_id, 0):
            sys.exit(f"node {node_id}: hitCount {node.get('hitCount')} but {hits.get(node_id, 0)} samples")
    self_ns = collections.Counter()
    count = collections.Counter()
    for i, (t, node_id) in enumerate(samples):
        nxt = samples[i + 1][0] if i + 1 < len(samples) else prof["endTime"]
        name = nodes[node_id]["callFrame"]["functionName"] or "(anonymous)"
        self_ns[name] += max(0, round(nxt * 1000) - round(t * 1000))
        count[name] += 1
    for name in sorted(self_ns):
        print(f"{name}\t{self_ns[name]}\t{count[name]}")


if __name__ == "__main__":
    main(sys.argv[1])
