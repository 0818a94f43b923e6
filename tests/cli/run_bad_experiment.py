#!/usr/bin/env python3
"""A malformed experiment file gives one clear error line, exit code 2, and leaves an existing
--out file byte-identical (and no temporary file beside it)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SENTINEL = b'{"previous": "evidence, must survive"}\n'


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--stderr", required=True, help="regex the single stderr line must match")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "evidence.json")
        with open(out, "wb") as f:
            f.write(SENTINEL)
        cmd = [a.binary, "run", a.experiment, "--model", a.model, "--out", out]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        lines = [l for l in err.splitlines() if l.strip()]
        problems = []
        if p.returncode != 2:
            problems.append(f"exit code {p.returncode}, expected 2")
        if len(lines) != 1:
            problems.append(f"stderr has {len(lines)} non-empty lines, expected 1")
        elif not re.search(a.stderr, lines[0]):
            problems.append(f"stderr does not match /{a.stderr}/")
        with open(out, "rb") as f:
            if f.read() != SENTINEL:
                problems.append("the existing --out file was changed")
        if sorted(os.listdir(tmp)) != ["evidence.json"]:
            problems.append(f"files left beside --out: {sorted(os.listdir(tmp))}")
        if problems:
            print("command:", " ".join(cmd))
            print("--- stdout ---\n" + p.stdout.decode("utf-8", "replace")[-2000:])
            print("--- stderr ---\n" + err[-2000:])
            for pr in problems:
                print("FAIL:", pr)
            return 1
        print("ok:", lines[0])
        return 0


if __name__ == "__main__":
    sys.exit(main())
