#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/*) from the
conformance vectors (testdata/vectors). Deterministic; run from anywhere:
    python3 fuzz/make_corpus.py
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "testdata", "vectors")
SKIP = {"checkpoint-first"}  # 1.2 MB: too large for a seed


def archive(files):
    """[name byte][length, 2 bytes big-endian][bytes]... (fuzz_input.h)."""
    out = b""
    for kind, idx, data in files:
        assert len(data) < 65536
        out += bytes([(idx << 2) | kind]) + len(data).to_bytes(2, "big") + data
    return out


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for v in sorted(os.listdir(VECTORS)):
        log = os.path.join(VECTORS, v, "log")
        if v in SKIP or not os.path.isdir(log):
            continue
        segs = []
        for n in sorted(os.listdir(log)):
            with open(os.path.join(log, n), "rb") as f:
                segs.append(f.read())
        files = [(0, 0, s) for s in segs]
        # Mode byte: 1 open for writing, 2 recover, 4 apply it, 8 force.
        write("reader", v + ".open", bytes([0x01]) + archive(files))
        write("reader", v + ".recover-force", bytes([0x0F]) + archive(files))
        write("frames", v + ".first", segs[0])
        write("frames", v + ".last", segs[-1])
        if v == "multi-segment":
            # Leftovers and a misnamed segment.
            write("reader", v + ".leftovers",
                  bytes([0x03]) + archive(files[:3] + [(2, 4, segs[3]), (2, 5, b""), (1, 9, segs[4])]))
        if v == "seed-append":
            # Hostile shapes for fuzz_tools (fuzz_tools.cc): FIFOs and links
            # where segments and alog.json should be, first so that -max_len
            # keeps them. Mode 0x7f: every command, a segment file too.
            for name, shapes in [
                ("fifo-segment", [(1, 63, b"@fifo")]),
                ("fifo-options", [(3, 1, b"@fifo")]),
                ("link-outside", [(1, 62, b"@link:../target")]),
                ("link-sibling", [(1, 61, b"@link:00000000000000000000.seg")]),
                ("dangling-links", [(2, 2, b"@link:../missing"), (3, 0, b"@link:../missing")]),
                # Targets symlink(2) refuses: stay plain files (a CI run's find).
                ("unlinkable-targets", [(1, 60, b"@link:"), (1, 59, b"@link:\0x"), (1, 58, b"@link:" + b"a" * 4100)]),
            ]:
                write("reader", "hostile-" + name, bytes([0x7F]) + archive(shapes + files))
    rng = random.Random(20260101)
    for i in range(16):
        write("model", "random-%02d" % i, bytes(rng.randrange(256) for _ in range(200 + 150 * i)))


if __name__ == "__main__":
    main()
