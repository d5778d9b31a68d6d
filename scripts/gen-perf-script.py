#!/usr/bin/env python3
"""A large `perf script` file made of copies of a real one, each later in time.

Usage: gen-perf-script.py IN.perf OUT.perf COPIES

Every copy's sample headers have their `secs.usecs:` time moved past the previous copy's
last sample, so the output is one long recording of the same program (the bench file of
docs/PERFORMANCE.md, "Sampling profiles": 6,500 copies of
tests/fixtures/real/profiles/spin.perf, 408 MB).
"""
import re, sys
src = open(sys.argv[1]).read()
copies = int(sys.argv[3])
# Split into header lines with their times, so each copy can be shifted later in time.
pat = re.compile(r'^(\S.*?\s)(\d+)\.(\d+):', re.M)
times = [int(m.group(2)) * 1000000 + int(m.group(3)) for m in pat.finditer(src)]
span = max(times) - min(times) + 1000
with open(sys.argv[2], 'w') as out:
    for c in range(copies):
        off = c * span
        def shift(m):
            t = int(m.group(2)) * 1000000 + int(m.group(3)) + off
            return f"{m.group(1)}{t // 1000000}.{t % 1000000:06d}:"
        out.write(pat.sub(shift, src))
