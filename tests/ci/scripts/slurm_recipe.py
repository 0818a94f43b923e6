#!/usr/bin/env python3
"""The Slurm recipe (ci/slurm/) without Slurm: runs genrepro-shards.sbatch once per array task id,
as Slurm would (SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT), then genrepro-merge.sbatch. The
merged evidence must equal the unsharded run's, timing aside, and the merge job's diff against a
golden blessed from the unsharded run must agree (exit 0) and write a JUnit report."""
import argparse
import json
import os
import shutil
import subprocess
import sys

EXPERIMENTS = ["experiments/article/first_prediction_top5.json", "experiments/article/nucleus_sizes.json"]
# Sampled runs too, so that each shard draws its own runs' tokens: the article's temperature
# experiment with 6 new tokens instead of 50 (the shards' equality does not need the length, and
# four genrepro processes make these runs).
SHORT_TEMPERATURE = {
    "name": "temperature_short",
    "description": "experiments/article/temperature.json with 6 new tokens: sampled runs for the Slurm recipe test.",
    "prompts": ["the river bank was"],
    "max_new_tokens": 6,
    "stop_at_eos": False,
    "use_cache": False,
    "runs": [{"mode": "sample", "temperature": [0.001, 1.0, 2.0], "seed": 42, "sampler_order": ["temperature"],
              "rng": "torch"}],
    "record": {"top_candidates": 5},
}
SHARDS = 3


def stripped(path):
    doc = json.load(open(path))
    doc.pop("created_utc", None)
    doc["environment"]["threads"].pop("runs_concurrently", None)
    doc.get("numerics", {}).pop("execution", None)  # how the runs were scheduled: volatile
    for run in doc["runs"]:
        run.pop("timing", None)
    return doc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    short = os.path.join(os.path.abspath(a.work), "temperature_short.json")
    with open(short, "w") as f:
        json.dump(SHORT_TEMPERATURE, f, indent=2)
    experiments = EXPERIMENTS + [short]
    recipe = os.path.join(a.source_dir, "ci", "slurm")
    env = dict(os.environ, GENREPRO=a.binary, EXPERIMENTS=" ".join(experiments), MODEL=a.model,
               SHARD_DIR=os.path.join(a.work, "shards"), OUT_DIR=os.path.join(a.work, "out"),
               GOLDEN=os.path.join(a.work, "golden"))
    failures = []
    for task in range(1, SHARDS + 1):
        task_env = dict(env, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT=str(SHARDS))
        p = subprocess.run(["bash", os.path.join(recipe, "genrepro-shards.sbatch")], env=task_env, cwd=a.source_dir,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            failures.append(f"task {task}: exit {p.returncode}: {p.stderr[-500:]}")
    whole = os.path.join(a.work, "whole.json")
    subprocess.run([a.binary, "run", *experiments, "--model", a.model, "--out", whole], cwd=a.source_dir,
                   check=True, capture_output=True, timeout=300)
    subprocess.run([a.binary, "bless", whole, "--into", env["GOLDEN"], "--yes"], cwd=a.source_dir, check=True,
                   capture_output=True, timeout=60)
    p = subprocess.run(["bash", os.path.join(recipe, "genrepro-merge.sbatch")], env=env, cwd=a.source_dir,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        failures.append(f"merge job: exit {p.returncode}: {p.stdout[-500:]} {p.stderr[-500:]}")
    else:
        merged = os.path.join(env["OUT_DIR"], "evidence.json")
        if stripped(merged) != stripped(whole):
            failures.append("the merged shards differ from the unsharded run (timing aside)")
        for made in ("diff-junit.xml", "report/report.html"):
            if not os.path.isfile(os.path.join(env["OUT_DIR"], made)):
                failures.append(f"the merge job wrote no {made}")
        shards = sorted(os.listdir(env["SHARD_DIR"]))
        if shards != [f"shard-{i}.json" for i in range(1, SHARDS + 1)]:
            failures.append(f"shards written: {shards}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {SHARDS} array tasks merged equal the unsharded run; the merge job's diff agreed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
