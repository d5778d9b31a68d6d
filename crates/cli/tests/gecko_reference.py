#!/usr/bin/env python3
"""Per-function sample counts of a raw Gecko profile, computed independently of spall.

Usage: gecko_reference.py FILE.json[.gz]

Prints one line per function, "NAME<TAB>SELF<TAB>TOTAL<TAB>SAMPLES", sorted by name, over
every thread of the profile and of its nested `processes` (given as objects or as JSON
text). Each thread's tables are read through their `schema`; a sample's stack is the chain
of (prefix, frame) rows; a frame's function is its `location` string, a JavaScript one
("name (url:line:col)", maybe with "[source]" after it) cut to its name. A sample counts
1 (there is no weight column in these profiles): to SELF of its leaf function, and to
TOTAL and SAMPLES of each function on its stack once.
"""

import collections
import gzip
import json
import re
import sys

JS = re.compile(r"^(.*) \((.+):(\d+):(\d+)\)(\[\d+\])?$")


def threads(profile):
    for t in profile["threads"]:
        yield json.loads(t) if isinstance(t, str) else t
    for p in profile.get("processes", []):
        yield from threads(json.loads(p) if isinstance(p, str) else p)


def name_of(location):
    m = JS.match(location)
    return m.group(1) if m else location


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        profile = json.load(f)
    self_n, total, samples = (collections.Counter() for _ in range(3))
    for t in threads(profile):
        ss, st, ft = t["samples"]["schema"], t["stackTable"]["schema"], t["frameTable"]["schema"]
        stacks, frames, strings = t["stackTable"]["data"], t["frameTable"]["data"], t["stringTable"]
        for row in t["samples"]["data"]:
            s = row[ss["stack"]]
            names = []
            while s is not None:
                names.append(name_of(strings[frames[stacks[s][st["frame"]]][ft["location"]]]))
                s = stacks[s][st["prefix"]]
            if not names:
                continue
            self_n[names[0]] += 1
            for n in set(names):
                total[n] += 1
                samples[n] += 1
    for n in sorted(total):
        print(f"{n}\t{self_n[n]}\t{total[n]}\t{samples[n]}")


if __name__ == "__main__":
    main(sys.argv[1])
