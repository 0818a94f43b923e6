#!/usr/bin/env python3
"""Runs a command and checks its exit code and output.

CTest alone cannot tell exit 1 from exit 2, nor check both streams; the CLI's exit codes are a
contract (0 agree/ok, 1 differ, 2 bad input, 3 internal error), so each CLI test states the exact
code it expects. --absent PATH: PATH is removed before the command runs and must not exist after
it (a refusal wrote nothing).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exit", type=int, required=True)
    ap.add_argument("--stdout")
    ap.add_argument("--stderr")
    ap.add_argument("--one-line-stderr", action="store_true")
    ap.add_argument("--absent")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if a.absent:
        shutil.rmtree(a.absent, ignore_errors=True)
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=280)
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode != a.exit:
        problems.append(f"exit code {p.returncode}, expected {a.exit}")
    if a.stdout is not None and not re.search(a.stdout, out, re.S):
        problems.append(f"stdout does not match /{a.stdout}/")
    if a.stderr is not None and not re.search(a.stderr, err, re.S):
        problems.append(f"stderr does not match /{a.stderr}/")
    if a.one_line_stderr:
        lines = [l for l in err.splitlines() if l.strip()]
        if len(lines) != 1:
            problems.append(f"stderr has {len(lines)} non-empty lines, expected exactly 1")
    if a.absent and os.path.lexists(a.absent):
        problems.append(f"{a.absent} exists after the command")
    if problems:
        print("command:", " ".join(cmd))
        print("--- stdout ---\n" + out[-4000:])
        print("--- stderr ---\n" + err[-4000:])
        for pr in problems:
            print("FAIL:", pr)
        return 1
    print("ok:", " ".join(cmd[1:])[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main())
