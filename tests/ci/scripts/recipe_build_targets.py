#!/usr/bin/env python3
"""The CI recipes build only what their jobs run: every `scripts/build.sh` line in ci/github and
ci/gitlab names its targets, and they are exactly `genrepro` (the shard jobs run `genrepro run`,
the gate merges, diffs and reports: all verbs of the one command). A bare `scripts/build.sh`
builds every test binary, benchmark and side build too (257 build steps against 51 for genrepro,
in each of five jobs). Every job that calls build/genrepro builds it (or gets it from default.before_script)."""
import argparse
import glob
import os
import shlex
import sys

import yaml


def lines_of(node):
    if isinstance(node, str):
        yield from node.splitlines()
    elif isinstance(node, list):
        for x in node:
            yield from lines_of(x)


def github_jobs(doc):
    for name, job in (doc.get("jobs") or {}).items():
        lines = []
        for step in job.get("steps", []):
            if isinstance(step, dict) and "run" in step:
                lines += list(lines_of(step["run"]))
        yield name, lines


def gitlab_jobs(doc):
    default = list(lines_of((doc.get("default") or {}).get("before_script", [])))
    for name, job in doc.items():
        if not isinstance(job, dict) or "script" not in job:
            continue
        before = list(lines_of(job["before_script"])) if "before_script" in job else default
        yield name, before + list(lines_of(job["script"]))


def build_targets(line):
    """The targets of each `bash scripts/build.sh ...` in a line ([] for a bare one)."""
    out = []
    for part in line.split("&&"):
        words = shlex.split(part)
        for i, w in enumerate(words):
            if w.endswith("scripts/build.sh"):
                out.append(words[i + 1:])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    failures, jobs = [], 0
    for path in sorted(glob.glob(os.path.join(a.source_dir, "ci", "*", "*.yml"))):
        doc = yaml.safe_load(open(path))
        found = list(github_jobs(doc)) if "jobs" in doc else list(gitlab_jobs(doc))
        for name, lines in found:
            jobs += 1
            builds = [t for line in lines for t in build_targets(line)]
            runs = any("build/genrepro " in line for line in lines)
            where = f"{os.path.relpath(path, a.source_dir)} job {name}"
            for targets in builds:
                if targets != ["genrepro"]:
                    failures.append(f"{where}: scripts/build.sh {' '.join(targets) or '(no target: everything)'}; "
                                    "build only `genrepro`, what the job runs")
            if runs and not builds:
                failures.append(f"{where}: calls build/genrepro without building it")
            print(f"{where}: builds {builds}, runs genrepro: {runs}")
    if jobs < 4:
        failures.append(f"expected the GitHub and GitLab recipes' jobs, found {jobs}")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
