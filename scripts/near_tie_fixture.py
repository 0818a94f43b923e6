#!/usr/bin/env python3
"""A near-tie copy of the tiny fixture (docs/sensitivity.md, "A fixture that can diverge").

For each planted pair A:X, token X's row of wte (GPT-2 ties the output layer to it) becomes token
A's row plus EPS times a unit direction drawn with splitmix64 (computed in double, rounded once to
float32, no BLAS or libm beyond a correctly rounded sqrt: byte-identical on every machine).
Nothing else changes, so every other logit keeps its bits; X is within float32 noise of A whenever
A leads, and which of the two wins then depends on how the kernel rounds the two dot products. The
defaults plant the tiny fixture's greedy picks at new tokens 1, 4 and 8 of "the river bank was"
(ids 2413, 49167, 17875) next to ids 50200-50202.

usage: /usr/bin/python3 scripts/near_tie_fixture.py TINY_DIR OUT_DIR [--pairs A:X,...] [--eps 1e-7]
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys

DEFAULT_PAIRS = "2413:50200,49167:50201,17875:50202"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tiny", help="the tiny fixture's directory (genrepro fixture --preset tiny --out DIR)")
    ap.add_argument("out", help="where to write the near-tie copy")
    ap.add_argument("--pairs", default=DEFAULT_PAIRS, help="A:X,... (X's row becomes A's, nudged); default " + DEFAULT_PAIRS)
    ap.add_argument("--eps", type=float, default=1e-7, help="the nudge's length (default 1e-7)")
    a = ap.parse_args(argv)
    import numpy as np  # python3-numpy comes with python3-torch (scripts/setup.sh --tests)

    raw = open(os.path.join(a.tiny, "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    if "wte.weight" not in header or header["wte.weight"]["dtype"] != "F32":
        sys.exit("near_tie_fixture: %s/model.safetensors has no F32 wte.weight" % a.tiny)
    vocab, width = header["wte.weight"]["shape"]
    lo, hi = header["wte.weight"]["data_offsets"]
    wte = np.frombuffer(raw[8 + n + lo: 8 + n + hi], dtype="<f4").reshape(vocab, width).copy()
    state = [0x6E656172746965]  # splitmix64's state, seeded with "neartie"

    def splitmix64():
        state[0] = (state[0] + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = state[0]
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    planted = []
    for pair in a.pairs.split(","):
        left, right = (int(v) for v in pair.split(":"))
        if not (0 <= left < vocab and 0 <= right < vocab) or left == right:
            sys.exit("near_tie_fixture: --pairs %s: ids must be distinct and below %d" % (pair, vocab))
        direction = [(splitmix64() >> 11) / float(1 << 53) - 0.5 for _ in range(width)]
        length = math.sqrt(math.fsum(d * d for d in direction))
        nudged = [float(v) + a.eps * d / length for v, d in zip(wte[left].tolist(), direction)]
        wte[right] = np.array(nudged, dtype=np.float64).astype(np.float32)
        planted.append([left, right])

    os.makedirs(a.out, exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(a.tiny, name), os.path.join(a.out, name))
    body = bytearray(raw)
    body[8 + n + lo: 8 + n + hi] = wte.astype("<f4").tobytes()
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(body)
    config = json.load(open(os.path.join(a.tiny, "config.json")))
    config["genrepro_near_tie"] = {"pairs": planted, "eps": a.eps,
                                   "made_by": "scripts/near_tie_fixture.py"}
    with open(os.path.join(a.out, "config.json"), "w") as f:  # last: a config.json means a complete copy
        json.dump(config, f, indent=2)
        f.write("\n")
    print("wrote %s: %d planted pair(s) %s" % (a.out, len(planted), planted))


if __name__ == "__main__":
    main(sys.argv[1:])
