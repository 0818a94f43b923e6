#!/usr/bin/env python3
"""The bit-exact cross-machine check (docs/numerics.md, "The committed digest").

tests/data/portable-digest.json holds, for the article experiments on the tiny fixture with
portable kernels, the sha256 of each run's canonical form (the run record without its timing,
keys sorted, no whitespace) and of the numerics identity and model. A machine whose portable
evidence is not byte-identical to the one that made it fails, naming the runs that differ. The
digest is written only deliberately, with --write, on a machine whose evidence was reviewed
(the note records which CPU made it); this test never writes it.

Exit 0 identical, 1 a run differs, 2 bad input, 77 (skip) when the evidence is not portable.
"""
import argparse
import hashlib
import json
import subprocess
import sys


def canonical_bytes(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sha(value):
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def digest_of(evidence):
    numerics = dict(evidence.get("numerics", {}))
    numerics.pop("execution", None)
    runs = {}
    for r in evidence["runs"]:
        r = dict(r)
        r.pop("timing", None)
        runs[f"{r['experiment']}/{r['id']}"] = sha(r)
    model = dict(evidence["model"])
    model.pop("path", None)  # where the fixture was made, not what it is
    return {"numerics": numerics, "numerics_sha256": sha(numerics), "model_sha256": sha(model),
            "runs": runs}


def compare_digests(mine, committed, subset=False):
    """What differs between this evidence's digest and the committed one, a line each. `subset`:
    the evidence holds some of the digest's runs on purpose, so a run it lacks is no failure."""
    failures = []
    if committed.get("numerics_sha256") != mine["numerics_sha256"]:
        failures.append(f"numerics: committed {committed.get('numerics')}, this machine {mine['numerics']}")
    if committed.get("model_sha256") != mine["model_sha256"]:
        failures.append("model: the tiny fixture's model block differs (another fixture generator?)")
    theirs = committed.get("runs", {})
    for run in sorted(set(theirs) | set(mine["runs"])):
        if run not in mine["runs"]:
            if not subset:
                failures.append(f"{run}: in the digest, not in this evidence")
        elif run not in theirs:
            failures.append(f"{run}: in this evidence, not in the digest")
        elif theirs[run] != mine["runs"][run]:
            failures.append(f"{run}: bits differ from the digest's")
    return failures


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--evidence", required=True, help="evidence of experiments/article/*.json on the tiny fixture, portable")
    ap.add_argument("--digest", required=True)
    ap.add_argument("--write", action="store_true", help="(re)write the digest from this evidence (a deliberate act)")
    a = ap.parse_args()
    with open(a.evidence) as f:
        evidence = json.load(f)
    kernels = evidence.get("numerics", {}).get("cpu_kernels", {})
    if kernels.get("setting") != "portable":
        print(f"skip: {a.evidence} was not made with portable kernels ({kernels})")
        return 77
    mine = digest_of(evidence)
    if a.write:
        env = evidence["environment"]
        mine = {"schema": "genrepro.portable-digest/1",
                "made_on": {"cpu": cpu_model(), "cpu_model_name": env["cpu"]["model"],
                            "avx512f": " avx512f " in f" {env['cpu']['flags']} ",
                            "libtorch": env["libtorch_version"],
                            "blas": env["blas"]["resolved"]},
                **mine}
        with open(a.digest, "w") as f:
            json.dump(mine, f, indent=2, sort_keys=False)
            f.write("\n")
        print(f"wrote {a.digest} ({len(mine['runs'])} runs)")
        return 0
    try:
        with open(a.digest) as f:
            committed = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{a.digest}: {e}")
        return 2
    failures = compare_digests(mine, committed)
    made_on = committed.get("made_on", {}).get("cpu", "unknown")
    here = cpu_model()
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(f"portable evidence on {here} is not byte-identical to the digest made on {made_on}")
        return 1
    print(f"ok: {len(mine['runs'])} runs byte-identical to the digest made on {made_on} (this machine: {here})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
