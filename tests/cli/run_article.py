#!/usr/bin/env python3
"""genrepro run experiments/article/*.json on the tiny fixture, checked on the evidence of the
runs that ctest makes beforehand (tests/cli/run.cmake), so that it can spread them over the cores:
--first-evidence (the regression gate's golden.fixture.run: the same experiments, model and default
flags, so the article's 22 runs are not made again) and --merged-evidence (the two halves
--shard 1/2 and 2/2, each with --threads 2, merged).
- the first evidence validates against docs/schema/evidence.schema.json (python3-jsonschema);
- model.files' sha256 are those of the files on disk (hashlib, independent of genrepro's sha256);
- strict runs open no libtorch nor BLAS: the first evidence (strict, the default) names none, and
  the strict-only engine library and what it links need neither (readelf);
- reference evidence's environment.blas names the BLAS the dynamic loader really gives the engine
  library (ldd): --reference-evidence, the article in reference numerics (reference.draw_margin.run);
- the merged shards (--threads 2) give evidence identical to the first apart from the
  volatile fields (created_utc, runs[*].timing, environment.threads.runs_concurrently,
  numerics.execution), stripped
  here independently of genrepro; --threads 2 is recorded;
- the article's first-prediction runs record one step each with token_id null."""
import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

import jsonschema


def strip(e):
    e = json.loads(json.dumps(e))
    e.pop("created_utc")
    e["environment"]["threads"].pop("runs_concurrently")
    e["numerics"].pop("execution")  # batch, workers, threads, the probe's timing: volatile
    for r in e["runs"]:
        r.pop("timing")
    return e


def first_difference(a, b, where=""):
    if type(a) is not type(b):
        return where or "(top)"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{where} (length {len(a)} vs {len(b)})"
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def loader_blas(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    m = re.search(r"^\s*libblas\.so\.3 => (\S+)", out, re.M)
    return os.path.realpath(m.group(1)) if m else None


def needed_libraries(library):
    """The DT_NEEDED entries of a library and of the genrepro libraries beside it that it needs."""
    seen, todo = set(), [os.path.basename(library)]
    here = os.path.dirname(library)
    while todo:
        name = todo.pop()
        done = subprocess.run(["readelf", "-d", os.path.join(here, name)], capture_output=True, text=True)
        for lib in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", done.stdout):
            if lib not in seen:
                seen.add(lib)
                if lib.startswith("libgenrepro_"):
                    todo.append(lib)
    return seen


def load(path):
    with open(path) as f:
        return json.load(f)


def main() -> int:
    ap = argparse.ArgumentParser()
    # genrepro links no BLAS itself: the engine library it opens does (ldd that one).
    ap.add_argument("--engine-library", required=True)
    ap.add_argument("--strict-engine-library", required=True, help="what a strict run opens instead")
    ap.add_argument("--reference-evidence", required=True, help="the article experiments in reference numerics")
    ap.add_argument("--model", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--first-evidence", required=True,
                    help="evidence of `genrepro run experiments/article/*.json --model MODEL` (default flags)")
    ap.add_argument("--merged-evidence", required=True, help="the same as --shard 1/2 and 2/2 with --threads 2, merged")
    a = ap.parse_args()
    experiments = sorted(glob.glob(os.path.join(a.source_dir, "experiments/article/*.json")))
    assert experiments, "no article experiments found"
    failures = []

    first = load(a.first_evidence)
    n = len(first["runs"])
    # The comparisons below mean something only if the first evidence ran what this script runs.
    real = os.path.realpath
    if ([real(x["path"]) for x in first["experiments"]] != [real(x) for x in experiments]
            or real(first["model"]["path"]) != real(a.model)):
        failures.append(f"{a.first_evidence} is not of {experiments} on {a.model}")
    asked = first.get("numerics", {}).get("execution", {}).get("threads", {}).get("asked")
    if asked != "default":
        failures.append(f"{a.first_evidence} was not made with the default --threads (asked: {asked})")

    # Schema.
    schema_dir = os.path.join(a.source_dir, "docs/schema")
    with open(os.path.join(schema_dir, "evidence.schema.json")) as f:
        evidence_schema = json.load(f)
    with open(os.path.join(schema_dir, "experiment.schema.json")) as f:
        experiment_schema = json.load(f)
    resolver = jsonschema.RefResolver.from_schema(evidence_schema, store={experiment_schema["$id"]: experiment_schema})
    validator = jsonschema.Draft202012Validator(evidence_schema, resolver=resolver)
    errors = sorted(validator.iter_errors(first), key=lambda e: list(e.path))
    for e in errors[:5]:
        failures.append(f"schema: {'/'.join(map(str, e.path))}: {e.message[:200]}")

    # Model files hashed by hashlib.
    weights = os.path.join(a.model, "model.safetensors")
    if first["model"]["files"]["model.safetensors"]["sha256"] != sha256_of(weights):
        failures.append("model.files[model.safetensors].sha256 is not the sha256 of the weights on disk")
    for name, rec in first["model"]["files"].items():
        path = os.path.join(first["model"]["path"], name)
        if rec["sha256"] != sha256_of(path) or rec["bytes"] != os.path.getsize(path):
            failures.append(f"model.files[{name}] does not describe {path}")
    if first["model"]["source"] != "fixture":
        failures.append(f"model.source is {first['model']['source']}, expected fixture")

    # Strict: nothing of libtorch's or a BLAS's loaded, recorded, or needed by the library it opens.
    env = first["environment"]
    if (first["numerics"]["mode"] != "strict" or env["libtorch_version"] != "none (strict numerics: not loaded)"
            or env["blas"]["vendor"] != "none" or env["blas"]["loaded"] != [] or env["cpu_capability"] != "none"):
        failures.append(f"strict evidence names libtorch {env['libtorch_version']!r}, BLAS {env['blas']['vendor']!r} "
                        f"{env['blas']['loaded']}, ATen {env['cpu_capability']!r}: expected none of them")
    strict_needs = needed_libraries(a.strict_engine_library)
    if not strict_needs or any(re.search(r"lib(torch|c10|gomp|openblas|blas|lapack)\b", lib) for lib in strict_needs):
        failures.append(f"{a.strict_engine_library} and its genrepro libraries need {sorted(strict_needs)}")

    # BLAS: what the loader resolves libblas.so.3 to for the engine library, in reference evidence.
    blas = load(a.reference_evidence)["environment"]["blas"]
    expected_blas = loader_blas(a.engine_library)
    if expected_blas is None or blas["resolved"] != expected_blas:
        failures.append(f"blas.resolved is {blas['resolved']}, the loader maps {expected_blas}")
    if expected_blas not in blas["loaded"]:
        failures.append(f"blas.loaded {blas['loaded']} lacks {expected_blas}")

    # Article shapes: every experiment recorded, first-prediction runs have one null step.
    names = {x["name"] for x in first["experiments"]}
    if len(names) != len(experiments):
        failures.append(f"experiments recorded: {sorted(names)}")
    for r in first["runs"]:
        if r["params"]["max_new_tokens"] == 0 and (len(r["steps"]) != 1 or r["steps"][0]["token_id"] is not None):
            failures.append(f"{r['id']}: a first-prediction run must record one step with token_id null")
    if [r["index"] for r in first["runs"]] != list(range(n)):
        failures.append("runs are not in index order")

    # Determinism: a second making of the same runs, as two shards with --threads 2 each, merged:
    # the evidence depends neither on the split nor on the number of runs at a time.
    reference = strip(first)
    merged = load(a.merged_evidence)
    if merged["environment"]["threads"]["runs_concurrently"] != 2:
        failures.append("--threads 2 is not recorded in threads.runs_concurrently of the merged shards")
    d = first_difference(reference, strip(merged))
    if d:
        failures.append(f"merged shards (--threads 2) differ from the first run at {d}")
    print(f"{n} runs: first and merged shards (--threads 2) compared")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
