#!/usr/bin/env python3
"""Checks what `genrepro bless --yes` left in a golden directory.

Exactly the expected files, no leftover temporary files (bless writes a hidden temp file and
renames it), each file valid evidence JSON without the volatile fields bless must strip.
"""
import json
import os
import sys


def main() -> int:
    directory, expected = sys.argv[1], sorted(sys.argv[2:])
    names = sorted(os.listdir(directory))
    problems = []
    if names != expected:
        problems.append(f"files {names}, expected {expected}")
    for name in names:
        if not name.endswith(".json"):
            continue
        with open(os.path.join(directory, name)) as f:
            doc = json.load(f)
        if doc.get("schema") != "genrepro.evidence/1":
            problems.append(f"{name}: schema {doc.get('schema')!r}")
        if "created_utc" in doc:
            problems.append(f"{name}: created_utc not stripped")
        if "runs_concurrently" in doc.get("environment", {}).get("threads", {}):
            problems.append(f"{name}: environment.threads.runs_concurrently not stripped")
        for i, run in enumerate(doc.get("runs", [])):
            if "timing" in run:
                problems.append(f"{name}: runs[{i}].timing not stripped")
            if run.get("experiment") + ".json" != name:
                problems.append(f"{name}: runs[{i}] belongs to experiment {run.get('experiment')!r}")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("ok:", directory, names)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
