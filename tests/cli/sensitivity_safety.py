"""genrepro sensitivity as a process, for what only a process shows (tests/cli/sensitivity_safety.cmake):

- a second matrix into a --out that holds one, failing in its first cell, leaves the first matrix
  whole: its sensitivity.json and every file of its cells/ as they were, the failed cell's log in
  cells.failed/;
- SIGTERM to sensitivity reaches its child `genrepro run`: sensitivity exits 143 and no child is
  left writing;
- the engine verbs refuse OMP_NUM_THREADS=0 and, with --cpu-kernels native, an OPENBLAS_CORETYPE
  this CPU cannot execute, in one line with exit 2, before libtorch or OpenBLAS loads (no
  backtrace, no SIGILL).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ONE_CELL = "kernels=portable;threads=1;numerics=reference;batch=1;cache=as-written;blas=openblas"


def files_of(directory):
    out = {}
    for root, _, names in os.walk(directory):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, directory)] = f.read()
    return out


def children_writing(marker):
    """Processes (other than this one) whose command line names `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and " run " in cmd:
            found.append((pid, cmd))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.scratch, ignore_errors=True)
    os.makedirs(a.scratch)
    failures = []
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS")}

    # The environment, refused before anything loads.
    for extra, args, want in [({"OMP_NUM_THREADS": "0"}, ["env"], "OMP_NUM_THREADS=\"0\": allowed: unset, or a whole number >= 1"),
                              ({"OPENBLAS_CORETYPE": "Bulldozer"}, ["env", "--cpu-kernels", "native"],
                               "OPENBLAS_CORETYPE=\"Bulldozer\" with --cpu-kernels native: this CPU has no fma4")]:
        p = subprocess.run([a.binary, *args], capture_output=True, text=True, env={**env, **extra}, timeout=60)
        if p.returncode != 2 or p.stderr.count("\n") != 1 or want not in p.stderr:
            failures.append(f"{extra} genrepro {' '.join(args)}: exit {p.returncode}, stderr {p.stderr[-600:]!r}")

    experiment = os.path.join(a.scratch, "experiment.json")
    with open(experiment, "w") as f:
        json.dump({"name": "safety", "prompts": ["the river bank was"], "max_new_tokens": 3, "use_cache": False,
                   "runs": [{"mode": "greedy"}], "record": {"top_candidates": 2}}, f)
    out = os.path.join(a.scratch, "matrix")
    p = subprocess.run([a.binary, "sensitivity", experiment, "--model", a.model, "--out", out, "--cells", ONE_CELL],
                       capture_output=True, text=True, env=env, timeout=120)
    if p.returncode == 2 and "--cpu-kernels portable" in p.stderr:
        print("skip: this machine cannot honour portable kernels:", p.stderr.strip())
        return 77
    if p.returncode != 0:
        print(f"FAIL: the first matrix exited {p.returncode}: {p.stderr[-1500:]}")
        return 1
    before = files_of(out)

    # A second matrix whose cell fails (its child refuses OMP_NUM_THREADS=0 at once).
    q = subprocess.run([a.binary, "sensitivity", experiment, "--model", a.model, "--out", out, "--cells", ONE_CELL],
                       capture_output=True, text=True, env={**env, "OMP_NUM_THREADS": "0"}, timeout=120)
    if q.returncode != 2 or "genrepro run exited 2" not in q.stderr or "cells.failed" not in q.stderr:
        failures.append(f"the failing second matrix: exit {q.returncode}, stderr {q.stderr[-800:]!r}")
    after = {k: v for k, v in files_of(out).items() if not k.startswith("cells.failed" + os.sep)}
    if after != before:
        changed = sorted(set(before) ^ set(after) | {k for k in before if k in after and before[k] != after[k]})
        failures.append(f"the first matrix was not kept whole: {changed[:10]}")
    if not any(k.endswith(".log") for k in files_of(os.path.join(out, "cells.failed"))):
        failures.append("cells.failed/ does not hold the failed cell's log")

    # SIGTERM while a cell's child runs.
    slow = os.path.join(a.scratch, "slow.json")
    with open(slow, "w") as f:
        json.dump({"name": "slow", "prompts": ["the river bank was"], "max_new_tokens": 40, "use_cache": False,
                   "runs": [{"mode": "sample", "seed": list(range(40))}], "record": {"top_candidates": 2}}, f)
    out2 = os.path.join(a.scratch, "stopped")
    proc = subprocess.Popen([a.binary, "sensitivity", slow, "--model", a.model, "--out", out2, "--cells", ONE_CELL],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    marker = os.path.join(out2, "cells")
    deadline = time.time() + 60
    while time.time() < deadline and not children_writing(marker):
        time.sleep(0.05)
    if not children_writing(marker):
        failures.append("no child genrepro run appeared within 60 s")
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        failures.append("sensitivity did not end within 60 s of SIGTERM")
    if proc.returncode != 143 or "stopped by SIGTERM" not in err:
        failures.append(f"SIGTERM: exit {proc.returncode}, stderr {err[-600:]!r}")
    time.sleep(0.2)
    left = children_writing(marker)
    if left:
        for pid, _ in left:
            os.kill(int(pid), signal.SIGKILL)
        failures.append(f"a child genrepro run outlived sensitivity's SIGTERM: {left}")
    if os.path.exists(os.path.join(out2, "sensitivity.json")):
        failures.append("a stopped matrix wrote sensitivity.json")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
