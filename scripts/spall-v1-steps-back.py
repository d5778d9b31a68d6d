#!/usr/bin/env python3
"""A generated `.spall` version 1 file for load measurements (docs/PERFORMANCE.md, "One
decode of every file"): 16 threads of one process, groups of 1 to 23 nested spans with
names of 16 to 35 bytes, 1 ns ticks.

    python3 scripts/spall-v1-steps-back.py OUT.spall MEGABYTES [BACK]

With BACK (say 2000), one group in BACK ends with its thread's clock stepping back 5 µs.
"""
import random
import struct
import sys

out_path, megabytes = sys.argv[1], int(sys.argv[2])
back = int(sys.argv[3]) if len(sys.argv) > 3 else 0
random.seed(1)
names = [("func_%d_%s" % (i, "x" * (10 + i % 20))).encode() for i in range(300)]
with open(out_path, "wb") as out:
    out.write(struct.pack("<QQdQ", 0x0BADF00D, 1, 0.001, 0))
    size, buf, ts = 32, bytearray(), [1000.0] * 16
    while size < megabytes * 1_000_000:
        tid = random.randrange(16)
        depth, t = random.randrange(1, 24), ts[tid]
        for _ in range(depth):
            n = names[random.randrange(300)]
            buf += struct.pack("<BBIId", 3, 0, 1, tid, t) + bytes([len(n), 0]) + n
            t += random.randrange(1, 50)
        for _ in range(depth):
            t += random.randrange(1, 50)
            buf += struct.pack("<BIId", 4, 1, tid, t)
        ts[tid] = t + 10 - (5000 if back and random.randrange(back) == 0 else 0)
        if len(buf) > 1 << 20:
            out.write(buf)
            size, buf = size + len(buf), bytearray()
    out.write(buf)
