#!/usr/bin/env python3
"""genrepro fixture --preset near-tie against scripts/near_tie_fixture.py, the documented recipe run
on the tiny fixture: every tensor's bytes equal (the planted wte rows included), the config equal but
for who made it, and the planted rows the only ones that differ from the tiny fixture's."""
import argparse
import json
import os
import struct
import subprocess
import sys


def tensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: raw[8 + n + v["data_offsets"][0]: 8 + n + v["data_offsets"][1]] for k, v in header.items()}, header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--tiny", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    preset, recipe = os.path.join(a.scratch, "preset"), os.path.join(a.scratch, "recipe")
    failures = []
    p = subprocess.run([a.binary, "fixture", "--preset", "near-tie", "--out", preset, "--force"], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: genrepro fixture --preset near-tie exited", p.returncode, p.stderr)
        return 1
    q = subprocess.run([sys.executable, os.path.join(a.source_dir, "scripts/near_tie_fixture.py"), a.tiny, recipe],
                       capture_output=True, text=True)
    if q.returncode != 0:
        print("FAIL: the recipe exited", q.returncode, q.stderr)
        return 1
    mine, mine_header = tensors(os.path.join(preset, "model.safetensors"))
    theirs, theirs_header = tensors(os.path.join(recipe, "model.safetensors"))
    tiny, _ = tensors(os.path.join(a.tiny, "model.safetensors"))
    if mine_header != theirs_header:
        failures.append("the tensor tables differ")
    for name in theirs:
        if mine.get(name) != theirs[name]:
            failures.append(f"{name}: the preset's bytes differ from the recipe's")
    compared = sum(len(v) for v in theirs.values())
    width = theirs_header["wte.weight"]["shape"][1]
    row = lambda b, r: b[r * width * 4:(r + 1) * width * 4]
    vocab = theirs_header["wte.weight"]["shape"][0]
    changed = [r for r in range(vocab) if row(mine["wte.weight"], r) != row(tiny["wte.weight"], r)]
    config, recipe_config = (json.load(open(os.path.join(d, "config.json"))) for d in (preset, recipe))
    planted = [r for _, r in recipe_config["genrepro_near_tie"]["pairs"]]
    if changed != sorted(planted):
        failures.append(f"wte rows changed from the tiny fixture's: {changed}; planted: {planted}")
    for c in (config, recipe_config):
        c["genrepro_near_tie"].pop("made_by")
        c["genrepro_fixture"].pop("preset")
    if config != recipe_config:
        failures.append(f"config.json differs from the recipe's beyond who made it: {config} vs {recipe_config}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(theirs)} tensors, {compared} bytes equal to the recipe's; planted rows {changed}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
