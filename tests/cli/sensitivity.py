#!/usr/bin/env python3
"""genrepro sensitivity (docs/sensitivity.md), as a user's process runs it: five cells (the
reference, a native BLAS kernel, tiled numerics, every run forced to the KV cache, Netlib's
reference BLAS) of a small experiment, each a child `genrepro run` whose evidence is kept in DIR/cells/.

- each cell's evidence records the kernel, numerics mode and BLAS library its cell asked for (the
  child's environment reached OpenBLAS, and the loader, before they loaded); the reference-BLAS
  cell's ATen kernels are the reference cell's, so only the BLAS changed;
- every run's class in sensitivity.json equals the class this script computes from the cells'
  evidence files on its own (identical / same_tokens / diverged at new token N);
- the KV-cache cell ran every run with use_cache true and is paired with the reference by the id
  each run has with use_cache false (computed here from docs/experiments.md's formula);
- --compare on the same evidence files gives the same classes (and pairs that cell the same way);
- an axis value the machine does not offer is exit 2 with one line naming it;
- sensitivity.json validates against docs/schema/sensitivity.schema.json (python3-jsonschema).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

EXPERIMENT = {
    "name": "sensitivity_check",
    "prompts": ["the river bank was"],
    "max_new_tokens": 8,
    "stop_at_eos": True,
    "use_cache": False,
    "runs": [{"mode": "greedy", "replicas": 3},
             {"mode": "sample", "temperature": 1.0, "top_p": 0.9, "seed": [1, 2],
              "sampler_order": ["temperature", "top_p"], "top_p_rule": "article", "rng": "torch"}],
    "record": {"top_candidates": 5},
}
CELLS = "kernels=portable,native:Sandybridge;threads=1;numerics=reference,tiled;batch=1;cache=as-written,cached"
REFERENCE_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"  # Debian's libblas3 (scripts/setup.sh)
STEP_FIELDS = ["token_id", "prob", "prob_t1", "kept", "rest_mass", "margin", "logit_margin", "entropy", "top", "logits_digest"]


def classify(ref, other):
    """The class of one run of a cell against the reference, from the two run records alone."""
    a, b = ref["steps"], other["steps"]
    for k in range(min(len(a), len(b))):
        if a[k]["token_id"] != b[k]["token_id"]:
            return "diverged", k + 1
    if len(a) != len(b):
        return "diverged", min(len(a), len(b)) + 1
    same = all(x.get(f) == y.get(f) for x, y in zip(a, b) for f in STEP_FIELDS) and ref["stop"] == other["stop"]
    return ("identical" if same else "same_tokens"), None


def logits_check(ref, other):
    """What the per-step float32 logits digests say over the steps both runs have."""
    a, b = ref["steps"], other["steps"]
    if not a or not b or "logits_digest" not in a[0] or "logits_digest" not in b[0]:
        return "not_recorded"
    return "equal" if all(x["logits_digest"] == y["logits_digest"] for x, y in zip(a, b)) else "differ"


def id_ignoring_use_cache(run):
    """The id the run would have with use_cache false, by docs/experiments.md's formula (not genrepro's code)."""
    params = dict(run["params"])
    params["use_cache"] = False
    text = json.dumps({"params": params, "prompt": run["prompt"]}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return run["id"].rsplit("-", 1)[0] + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]


def runs_by_pairing(matrix, cell, evidence):
    paired_by = next(c["paired_by"] for c in matrix["cells"] if c["name"] == cell)
    key = id_ignoring_use_cache if paired_by == "id_ignoring_use_cache" else (lambda r: r["id"])
    return {key(r): r for r in evidence["runs"]}


def check_replica_groups(matrix, evidence_by_cell, failures):
    """The copies of the greedy run: their distinct completions per cell, counted here from the evidence."""
    ref = evidence_by_cell[matrix["reference"]]
    copies = [r for r in ref["runs"] if r["params"]["mode"] == "greedy"]
    groups = matrix.get("replica_groups", [])
    if len(groups) != 1 or groups[0]["copies"] != 3 or groups[0]["run"] != copies[0]["id"] or "replica" in copies[0]["params"]:
        failures.append(f"replica_groups {groups}: expected one group of 3 copies, copy 0 {copies[0]['id']} (no params.replica)")
        return
    if [r["params"].get("replica", 0) for r in copies] != [0, 1, 2]:
        failures.append(f"the copies' params.replica: {[r['params'].get('replica') for r in copies]}")
    for cell, got in groups[0]["cells"].items():
        runs = runs_by_pairing(matrix, cell, evidence_by_cell[cell])
        outputs = [tuple(runs[r["id"]]["output_ids"]) for r in copies if r["id"] in runs]
        want = {"copies": len(outputs), "distinct_completions": len(set(outputs)),
                "most_common": max((outputs.count(o) for o in outputs), default=0),
                "unlike_reference": sum(o != tuple(copies[0]["output_ids"]) for o in outputs)}
        if got != want:
            failures.append(f"replica group in {cell}: sensitivity.json says {got}, the evidence says {want}")
        # Each copy alone, or in no batch: the same input gives the same bits, so one completion.
        if want["distinct_completions"] != 1:
            failures.append(f"{cell}: {want['distinct_completions']} distinct completions of 3 copies decoded alone")


def load(path):
    with open(path) as f:
        return json.load(f)


def check_matrix(matrix, evidence_by_cell, failures, label):
    ref_name = matrix["reference"]
    ref_runs = {r["id"]: r for r in evidence_by_cell[ref_name]["runs"]}
    for run in matrix["runs"]:
        for cell, got in run["cells"].items():
            other = runs_by_pairing(matrix, cell, evidence_by_cell[cell]).get(run["id"])
            if other is None:
                expected = ("missing", None)
            else:
                expected = classify(ref_runs[run["id"]], other)
            found = (got["class"], got.get("new_token"))
            if found != expected:
                failures.append(f"{label}: {run['id']} in {cell}: sensitivity.json says {found}, the evidence says {expected}")
            if other is not None and got["class"] in ("identical", "same_tokens"):
                want = logits_check(ref_runs[run["id"]], other)
                if got.get("logits") != want:
                    failures.append(f"{label}: {run['id']} in {cell}: logits {got.get('logits')}, the digests say {want}")
                if want == "not_recorded":
                    failures.append(f"{label}: {run['id']} in {cell}: this build records logits digests, the evidence has none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--schema", required=True)
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    experiment = os.path.join(a.scratch, "experiment.json")
    with open(experiment, "w") as f:
        json.dump(EXPERIMENT, f)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY")}
    out = os.path.join(a.scratch, "matrix")
    with_reference_blas = os.path.exists(REFERENCE_BLAS)
    cells = CELLS + (";blas=openblas,reference" if with_reference_blas else ";blas=openblas")
    p = subprocess.run([a.binary, "sensitivity", experiment, "--model", a.model, "--out", out, "--cells", cells],
                       capture_output=True, text=True, env=env, timeout=300)
    if p.returncode == 2 and "--cpu-kernels portable" in p.stderr:
        print("skip: this machine cannot honour portable kernels:", p.stderr.strip())
        return 77
    failures = []
    if p.returncode != 0:
        print(f"FAIL: sensitivity exited {p.returncode}: {p.stderr[-2000:]}")
        return 1
    matrix = load(os.path.join(out, "sensitivity.json"))
    import jsonschema
    try:
        jsonschema.validate(matrix, load(a.schema))
    except jsonschema.ValidationError as err:
        failures.append(f"sensitivity.json does not validate against {a.schema}: {err.message} at {list(err.absolute_path)}")
    if matrix.get("schema") != "genrepro.sensitivity/1":
        failures.append(f"schema is {matrix.get('schema')!r}")
    names = [c["name"] for c in matrix["cells"]]
    want_cells = 5 if with_reference_blas else 4
    if len(names) != want_cells or matrix["reference"] != names[0]:
        failures.append(f"cells {names}, reference {matrix['reference']}: expected {want_cells} cells, the first the reference")
    evidence = {}
    for c in matrix["cells"]:
        e = load(c["evidence"])
        evidence[c["name"]] = e
        blas = e["environment"]["blas"]
        core = blas["core"]
        mode = e["numerics"]["mode"]
        want_core = "Sandybridge" if c["axes"]["kernels"] == "native:Sandybridge" else "Haswell"
        if c["axes"]["blas"] == "reference":
            want_core = None  # Netlib's BLAS has no core types
            if blas["vendor"] != "reference" or blas["resolved"] != os.path.realpath(REFERENCE_BLAS):
                failures.append(f"{c['name']}: blas {blas['vendor']} {blas['resolved']}, the cell asked for {REFERENCE_BLAS}")
            if any("openblas" in lib for lib in blas["loaded"]):
                failures.append(f"{c['name']}: OpenBLAS is mapped beside the reference BLAS: {blas['loaded']}")
            if os.path.exists(blas["library"]):
                failures.append(f"{c['name']}: the loader's directory {os.path.dirname(blas['library'])} was not removed")
        elif blas["vendor"] != "openblas":
            failures.append(f"{c['name']}: blas {blas['vendor']}, the cell asked for OpenBLAS (the default)")
        if core != want_core:
            failures.append(f"{c['name']}: the child's OpenBLAS loaded {core}, the cell asked for {want_core}")
        forced = c["axes"].get("cache", "as-written")
        want_cache = [forced == "cached"] * len(e["runs"])
        if [r["params"]["use_cache"] for r in e["runs"]] != want_cache:
            failures.append(f"{c['name']}: use_cache {[r['params']['use_cache'] for r in e['runs']]}, the cell asked for {forced}")
        if c["paired_by"] != ("id" if forced == "as-written" else "id_ignoring_use_cache"):
            failures.append(f"{c['name']}: paired_by {c['paired_by']} with cache={forced}")
        if mode != c["axes"]["numerics"]:
            failures.append(f"{c['name']}: numerics.mode {mode}, the cell asked for {c['axes']['numerics']}")
    atens = {n: evidence[n]["numerics"]["cpu_kernels"]["aten_capability"] for n in names
             if evidence[n]["environment"]["blas"]["vendor"] == "reference" or n == names[0]}
    if len(set(atens.values())) != 1:
        failures.append(f"ATen kernels differ between the reference cell and the reference-BLAS cell: {atens}")
    # The cells' evidence (copies with params.replica, a spec with replicas, forced use_cache) against
    # the evidence schema, as every evidence file must be.
    schema_dir = os.path.dirname(a.schema)
    evidence_schema, experiment_schema = (load(os.path.join(schema_dir, n)) for n in ("evidence.schema.json", "experiment.schema.json"))
    validator = jsonschema.Draft202012Validator(
        evidence_schema, resolver=jsonschema.RefResolver.from_schema(evidence_schema, store={experiment_schema["$id"]: experiment_schema}))
    for name, e in evidence.items():
        for err in list(validator.iter_errors(e))[:3]:
            failures.append(f"{name}'s evidence does not validate: {'/'.join(map(str, err.path))}: {err.message[:200]}")
    check_matrix(matrix, evidence, failures, "sensitivity")
    if len(matrix["runs"]) != 5:
        failures.append(f"{len(matrix['runs'])} runs in the matrix; the experiment has 5 (3 copies of the greedy run)")
    check_replica_groups(matrix, evidence, failures)
    for page in ("sensitivity.md", "sensitivity.html"):
        if not os.path.exists(os.path.join(out, page)):
            failures.append("no " + page)

    # The same matrix from the evidence files alone.
    files = [c["evidence"] for c in matrix["cells"]]
    out2 = os.path.join(a.scratch, "compared")
    q = subprocess.run([a.binary, "sensitivity", "--compare", *files, "--out", out2], capture_output=True, text=True, timeout=120)
    if q.returncode != 0:
        failures.append(f"--compare exited {q.returncode}: {q.stderr[-1000:]}")
    else:
        compared = load(os.path.join(out2, "sensitivity.json"))
        by_stem = {os.path.splitext(os.path.basename(f))[0]: evidence[n] for f, n in zip(files, names)}
        check_matrix(compared, by_stem, failures, "--compare")
        classes = lambda m: sorted((r["id"], sorted(c["class"] for c in r["cells"].values())) for r in m["runs"])
        if classes(compared) != classes(matrix):
            failures.append("--compare classifies the runs differently from the matrix run")

    # --plan: every cell's child command and a rough time, nothing run or written.
    planned_dir = os.path.join(a.scratch, "planned")
    plan = subprocess.run([a.binary, "sensitivity", experiment, "--model", a.model, "--out", planned_dir, "--cells", cells, "--plan"],
                          capture_output=True, text=True, env=env, timeout=60)
    want_line = f"plan: {want_cells} cells, {5 * want_cells} runs, roughly "
    if plan.returncode != 0 or want_line not in plan.stdout or os.path.exists(planned_dir):
        failures.append(f"--plan: exit {plan.returncode}, wrote {planned_dir}: {os.path.exists(planned_dir)}, stdout {plan.stdout[-600:]!r}")
    for c in matrix["cells"]:
        if f" {c['name']}" not in plan.stdout:
            failures.append(f"--plan does not list the cell {c['name']}")
    if "OPENBLAS_CORETYPE=Sandybridge genrepro run" not in plan.stdout or "(the experiment files copied with use_cache forced: sensitivity writes them" not in plan.stdout:
        failures.append(f"--plan does not show the children's environment and the forced copies: {plan.stdout[:1500]!r}")

    bad = subprocess.run([a.binary, "sensitivity", experiment, "--model", a.model, "--out", os.path.join(a.scratch, "bad"),
                          "--cells", "kernels=native:Bogus"], capture_output=True, text=True, env=env, timeout=60)
    if bad.returncode != 2 or "native:Bogus" not in bad.stderr or "allowed: portable" not in bad.stderr or bad.stderr.count("\n") != 1:
        failures.append(f"--cells kernels=native:Bogus: exit {bad.returncode}, stderr {bad.stderr!r}")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        summary = {c["name"]: c["runs"] for c in matrix["cells"]}
        print("ok:", json.dumps(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
