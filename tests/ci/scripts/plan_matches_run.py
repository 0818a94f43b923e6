#!/usr/bin/env python3
"""`genrepro plan` lists exactly the run ids that `genrepro run` then writes: for the article's
experiments (all 22, against the golden evidence the regression gate proves run writes) and for
one shard of a small grid, where `run --shard 2/3` is executed and its evidence compared."""
import argparse
import glob
import json
import os
import subprocess
import sys

SMALL = ["experiments/article/first_prediction_top5.json", "experiments/article/nucleus_sizes.json"]


def plan(binary, args, cwd):
    p = subprocess.run([binary, "plan", *args, "--json"], capture_output=True, text=True, cwd=cwd, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: plan {args} exited {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    failures = []
    article = sorted(glob.glob(os.path.join(a.source_dir, "experiments/article/*.json")))
    doc = plan(a.binary, [*article, "--model", a.model], a.source_dir)
    planned = [r["id"] for r in doc["runs"]]
    golden = [r["id"] for f in sorted(glob.glob(os.path.join(a.source_dir, "golden/fixture/*.json")))
              for r in json.load(open(f))["runs"]]
    if sorted(planned) != sorted(golden) or len(planned) != len(set(planned)):
        failures.append(f"article: plan lists {len(planned)} ids, golden holds {len(golden)}; they differ")

    doc = plan(a.binary, [*SMALL, "--model", a.model, "--shard", "2/3"], a.source_dir)
    selected = [r["id"] for r in doc["runs"] if r["selected"]]
    out = os.path.join(a.work, "shard.json")
    subprocess.run([a.binary, "run", *SMALL, "--model", a.model, "--shard", "2/3", "--out", out], cwd=a.source_dir,
                   check=True, capture_output=True, timeout=300)
    written = [r["id"] for r in json.load(open(out))["runs"]]
    if selected != written or not selected:
        failures.append(f"shard 2/3: plan selects {selected}, run wrote {written}")
    if doc["total"]["selected"] != len(selected) or doc["total"]["runs"] != len(doc["runs"]):
        failures.append(f"totals {doc['total']} do not count the runs listed")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: plan lists the {len(planned)} article runs run writes, and shard 2/3's {len(selected)} runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
