#!/usr/bin/env python3
"""Shards from two machines merge and diff (docs/evidence-format.md, "Shards and merge").

Takes the two article shards run.article.shard1/2 wrote, gives the second another machine's
environment (CPU model and flags, as an AMD runner of a CI matrix would record), and checks that
genrepro merge accepts them, that the merged file says which runs came from the other machine
(run_environments), that it reads back (genrepro diff against the unsharded evidence: every run
agrees, the other machine's differences named by its runs), and that shards whose numerics differ
are still refused."""
import argparse
import json
import os
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--shards", nargs=2, required=True)
    ap.add_argument("--unsharded", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    failures = []
    with open(a.shards[1]) as f:
        other = json.load(f)
    other["environment"]["cpu"]["model"] = "AMD EPYC 9R14"
    other["environment"]["cpu"]["flags"] = "fpu sse2 avx avx2 fma"
    amd = os.path.join(a.scratch, "shard2-amd.json")
    with open(amd, "w") as f:
        json.dump(other, f)
    merged = os.path.join(a.scratch, "merged.json")
    p = subprocess.run([a.binary, "merge", a.shards[0], amd, "--out", merged], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: merge of mixed-machine shards exited {p.returncode}: {p.stderr}")
        return 1
    with open(merged) as f:
        m = json.load(f)
    listed = [r["runs"] for r in m.get("run_environments", [])]
    shard2_runs = sorted(r["index"] for r in other["runs"])
    if listed != [shard2_runs]:
        failures.append(f"run_environments lists {listed}, the second shard ran {shard2_runs}")
    elif m["run_environments"][0]["environment"]["cpu"]["model"] != "AMD EPYC 9R14":
        failures.append("run_environments[0] is not the second shard's environment")
    d = subprocess.run([a.binary, "diff", a.unsharded, merged], capture_output=True, text=True)
    first_id = min(other["runs"], key=lambda r: r["index"])["id"]
    label = f"environment[runs {first_id}, "
    if d.returncode != 0 or " 0 differ" not in d.stdout or label not in d.stdout or "AMD EPYC 9R14" not in d.stdout:
        failures.append(f"diff unsharded vs merged: exit {d.returncode}, output {d.stdout[-1500:]}")
    other["numerics"]["cpu_kernels"] = {"setting": "native", "blas_core": "SkylakeX", "aten_capability": "AVX2"}
    with open(amd, "w") as f:
        json.dump(other, f)
    r = subprocess.run([a.binary, "merge", a.shards[0], amd, "--out", os.path.join(a.scratch, "refused.json")],
                       capture_output=True, text=True)
    if r.returncode != 2 or "numerics.cpu_kernels" not in r.stderr:
        failures.append(f"shards of different kernels: exit {r.returncode}, stderr {r.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: mixed-machine shards merged ({len(shard2_runs)} runs from the other machine), diff agrees")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
