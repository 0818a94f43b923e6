#!/usr/bin/env python3
"""Every genrepro command line in the CI recipes (ci/github, ci/gitlab) parses with the real CLI:
each YAML file is loaded (python3-yaml), every `run:` / `script:` line that calls genrepro is
taken, the CI variables are given sample values, and the line is checked with
`genrepro --parse-only ...` (verb, flags, value types; nothing runs). Control: the same check
refuses a line with a misspelled flag, so it can fail. Every recipe's report step passes --golden,
so the artifact opens with the verdict."""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

import yaml

SAMPLES = {"matrix.shard": "1", "env.SHARDS": "4", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}


def command_lines(node):
    """Strings under run:/script: keys, anywhere in the document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("run", "script", "before_script") and isinstance(value, (str, list)):
                for text in ([value] if isinstance(value, str) else value):
                    for line in str(text).splitlines():
                        yield line
            else:
                yield from command_lines(value)
    elif isinstance(node, list):
        for item in node:
            yield from command_lines(item)


def with_samples(line):
    line = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: SAMPLES[m.group(1)], line)
    return re.sub(r"\$\{(\w+)\}", lambda m: SAMPLES[m.group(1)], line)


def parses(binary, args, cwd):
    p = subprocess.run([binary, "--parse-only", *args], capture_output=True, text=True, cwd=cwd, timeout=30)
    return p.returncode, p.stderr.strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    failures, checked, reports = [], 0, 0
    files = sorted(glob.glob(os.path.join(a.source_dir, "ci", "*", "*.yml")))
    if len(files) < 2:
        failures.append(f"expected the GitHub and GitLab recipes, found {files}")
    for path in files:
        doc = yaml.safe_load(open(path))
        for line in command_lines(doc):
            if "build/genrepro " not in line:
                continue
            words = shlex.split(with_samples(line))
            args = words[words.index("build/genrepro") + 1:]
            rc, err = parses(a.binary, args, a.source_dir)
            checked += 1
            if args and args[0] == "report":
                reports += 1
                if "--golden" not in args:
                    failures.append(f"{os.path.relpath(path, a.source_dir)}: {line.strip()!r}: the report step has no --golden")
            if rc != 0:
                failures.append(f"{os.path.relpath(path, a.source_dir)}: {line.strip()!r} does not parse: {err}")
    rc, _ = parses(a.binary, ["diff", "golden/fixture", "evidence.json", "--junitt", "x.xml"], a.source_dir)
    if rc != 2:
        failures.append(f"control: a misspelled flag gave exit {rc}, not 2")
    if reports < 2:
        failures.append(f"expected a report step in each recipe, found {reports}")
    if checked < 6:
        failures.append(f"only {checked} genrepro command lines found in the recipes")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {checked} genrepro command lines in {len(files)} CI recipes parse")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
