#!/usr/bin/env python3
"""A fixture that can diverge (docs/sensitivity.md, "A fixture that can diverge").

scripts/near_tie_fixture.py plants near-ties in a copy of the tiny fixture (token 50201 within
float32 noise of 49167, the greedy pick at new token 4 of "the river bank was", and two more).
The matrix of the article's greedy run under the portable kernel (the reference) and OpenBLAS's
Sandybridge kernel must then show:

- the reference ties the planted pair exactly at new token 4 (logit margin 0) and keeps 49167;
- the Sandybridge cell diverges at new token 4, picking the planted twin 50201 (the reference's
  runner-up), by a logit margin below the matrix's noise floor; m* is 0 and "margin <= m*" recalls
  the flip;
- `diff REF SANDYBRIDGE --sensitivity` labels it known-fragile and still fails (exit 1), and
  `--allow-fragile` passes the gate (exit 0); a run diverging at an unplanted step would not.

Skips (exit 77, reason printed) when this CPU cannot run the Sandybridge kernel.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
CELLS = "kernels=portable,native:Sandybridge;threads=1;numerics=reference;batch=1;blas=openblas;cache=as-written"
PLANTED_STEP, PICK, TWIN = 3, 49167, 50201  # new token 4


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True, help="the tiny fixture")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.scratch, ignore_errors=True)
    os.makedirs(a.scratch)
    near_tie = os.path.join(a.scratch, "near-tie")
    made = run([sys.executable, os.path.join(a.source_dir, "scripts", "near_tie_fixture.py"), a.model, near_tie])
    if made.returncode != 0:
        fail("near_tie_fixture.py: " + made.stdout + made.stderr)

    matrix_dir = os.path.join(a.scratch, "matrix")
    greedy = os.path.join(a.source_dir, "experiments", "article", "greedy.json")
    m = run([a.binary, "sensitivity", greedy, "--model", near_tie, "--cells", CELLS, "--out", matrix_dir])
    if m.returncode == 2 and "Sandybridge" in m.stderr and "offer" in m.stderr:
        print("skipped: this CPU cannot run OpenBLAS's Sandybridge kernel: " + m.stderr.strip())
        sys.exit(SKIP)
    if m.returncode != 0:
        fail("genrepro sensitivity: exit %d: %s" % (m.returncode, m.stderr))
    matrix = json.load(open(os.path.join(matrix_dir, "sensitivity.json")))
    cells = {c["name"]: c for c in matrix["cells"]}
    ref_name = matrix["reference"]
    other = [n for n in cells if n != ref_name]
    if len(other) != 1 or "Sandybridge" not in other[0]:
        fail("expected the reference and one Sandybridge cell, got %s" % list(cells))
    sandy = other[0]

    ref_run = json.load(open(cells[ref_name]["evidence"]))["runs"][0]
    step = ref_run["steps"][PLANTED_STEP]
    if step["token_id"] != PICK or {t["id"] for t in step["top"][:2]} != {PICK, TWIN} or step["logit_margin"] != 0.0:
        fail("the reference does not tie the planted pair at new token 4: %s" % json.dumps(step)[:300])

    result = matrix["runs"][0]["cells"][sandy]
    if result["class"] != "diverged" or result["new_token"] != PLANTED_STEP + 1:
        fail("the Sandybridge cell: %s, expected diverged at new token 4" % result)
    if result["reference_logit_margin"] != 0.0 or result["rank_in_reference"] != 1:
        fail("the flip's margins or rank: %s" % result)
    sandy_run = json.load(open(cells[sandy]["evidence"]))["runs"][0]
    if sandy_run["steps"][PLANTED_STEP]["token_id"] != TWIN:
        fail("the Sandybridge run picked %s at new token 4, not the twin %d" % (sandy_run["steps"][PLANTED_STEP]["token_id"], TWIN))
    if sandy_run["output_ids"][:PLANTED_STEP] != ref_run["output_ids"][:PLANTED_STEP]:
        fail("the runs part before the planted step")
    p = matrix["predictor"]
    if p["m_star"] != 0.0 or p["flip_steps"] != 1 or p["recall"] != 1.0:
        fail("the predictor: %s" % p)
    held = matrix["held_out_predictor"]
    if held["cells_with_flips"] != 1 or held["enough_cells"] or held["recall"] is not None or held["cells"][0]["m_star"] is not None:
        fail("held out: one cell flips, so there is no held-out recall: %s" % held)
    if "not enough cells to hold one out" not in open(os.path.join(matrix_dir, "sensitivity.html"), encoding="utf-8").read():
        fail("sensitivity.html does not say there are not enough cells to hold one out")
    if not result["cell_logit_margin"] <= p["noise_floor_logit_margin"]:
        fail("the flip's margin %g is not within the noise floor %g" % (result["cell_logit_margin"], p["noise_floor_logit_margin"]))

    sens = os.path.join(matrix_dir, "sensitivity.json")
    base = [a.binary, "diff", cells[ref_name]["evidence"], cells[sandy]["evidence"], "--sensitivity", sens]
    gate = run(base)
    label = "new token 4: known-fragile (logit margin 0 <= m* 0; flipped there in 1 of 1 cells)"
    if gate.returncode != 1 or label not in gate.stdout:
        fail("diff --sensitivity: exit %d, expected 1 and %r in:\n%s" % (gate.returncode, label, gate.stdout))
    allowed = run(base + ["--allow-fragile"])
    if allowed.returncode != 0 or "known-fragile" not in allowed.stderr:
        fail("diff --allow-fragile: exit %d, expected 0: %s" % (allowed.returncode, allowed.stderr))
    print("near-tie fixture: the reference ties 49167/50201 at new token 4 (margin 0); Sandybridge picks 50201 "
          "(margin %g <= noise floor %g); m* 0, recall 1; diff labels it known-fragile, exit 1, and 0 with "
          "--allow-fragile" % (result["cell_logit_margin"], p["noise_floor_logit_margin"]))


if __name__ == "__main__":
    main()
