#!/usr/bin/env python3
"""Makes a large pprof profile from a real one, for load benchmarks.

Usage: gen-pprof.py IN.pb[.gz] OUT.pb COPIES

Writes IN's fields (its tables and samples, decompressed) followed by COPIES more copies
of its samples (field 2), uncompressed: the same stacks and values, COPIES + 1 times as
many samples, so each function's weight grows by that factor.
"""

import gzip
import sys


def varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, the field's bytes with its tag) of a message's top level."""
    i = 0
    while i < len(b):
        start = i
        tag, i = varint(b, i)
        wire = tag & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            n, i = varint(b, i)
            i += n
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield tag >> 3, b[start:i]


def main(src, dst, copies):
    with open(src, "rb") as f:
        b = f.read()
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    samples = b"".join(raw for num, raw in fields(b) if num == 2)
    with open(dst, "wb") as f:
        f.write(b)
        for _ in range(int(copies)):
            f.write(samples)


if __name__ == "__main__":
    main(*sys.argv[1:4])
