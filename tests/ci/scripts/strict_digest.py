#!/usr/bin/env python3
"""The strict numerics' cross-machine check (docs/numerics.md, "Strict numerics").

Runs the article experiments on the tiny fixture with --numerics strict: all of them with the
vector code this CPU runs fastest, and two of them with GENREPRO_STRICT_ISA=plain (scalar C++). Each evidence must
equal tests/data/strict-digest.json run for run (the sha256 of each run's canonical form, as
portable_digest.py computes it) and the numerics identity must name the committed kernel
revision. Strict bits are set by the operation order alone, so every machine that builds genrepro,
whatever its CPU, must pass; a failure names the runs and the vector code that differ.

The digest is written only deliberately (--write), from evidence that was reviewed; the note
that blesses it records the machine. This test never writes it.

Exit 0 identical, 1 a run differs, 2 bad input.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portable_digest import compare_digests, cpu_model  # noqa: E402
from portable_digest import digest_of as portable_digest_of  # noqa: E402


def digest_of(evidence):
    """portable_digest's digest without each run's `index` (its place among the runs of the files
    given together), so that a run of a subset of the experiments hashes as in the whole."""
    runs = []
    for r in evidence["runs"]:
        r = dict(r)
        r.pop("index", None)
        runs.append(r)
    return portable_digest_of({**evidence, "runs": runs})


# The plain C++ kernels are several times slower: they recompute the greedy run (every step's whole
# sequence) and the sampled ones of eos, which is enough to catch a vector set
# that parts from them (tests/unit/strict/kernels_test.cpp compares every kernel, bit for bit).
PLAIN_SUBSET = ("greedy.json", "eos.json")


def run_strict(binary, model, source_dir, out, isa, only=None, emulator=()):
    experiments = sorted(os.path.join(source_dir, "experiments", "article", f)
                         for f in os.listdir(os.path.join(source_dir, "experiments", "article"))
                         if f.endswith(".json") and (only is None or f in only))
    return run_strict_files(binary, experiments, model, out, isa, emulator)


def run_strict_files(binary, experiments, model, out, isa=None, emulator=()):
    env = dict(os.environ)
    env.pop("GENREPRO_STRICT_ISA", None)
    if isa:
        env["GENREPRO_STRICT_ISA"] = isa
    cmd = [*emulator, binary, "run", *experiments, "--model", model, "--numerics", "strict", "--out", out]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
        sys.exit(2)
    with open(out) as f:
        return json.load(f)


def compare(mine, committed, label, subset=False):
    return [f"{label}: {f}" for f in compare_digests(mine, committed, subset)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True, help="the tiny fixture")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--digest", required=True)
    ap.add_argument("--evidence", help="this build's strict evidence of the article experiments, already made (the "
                    "regression gate's run): checked instead of running them again with the fastest vector code")
    ap.add_argument("--write", action="store_true", help="(re)write the digest from the fastest set's evidence (a deliberate act)")
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    if a.evidence and not a.write:
        try:
            with open(a.evidence) as f:
                fastest = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{a.evidence}: {e}")
            return 2
    else:
        fastest = run_strict(a.binary, a.model, a.source_dir, os.path.join(a.scratch, "strict-fastest.json"), None)
    isa = fastest["numerics"]["execution"]["kernel_isa"]
    if a.write:
        mine = {"schema": "genrepro.strict-digest/1",
                "made_on": {"cpu": cpu_model(), "kernel_isa": isa}, **digest_of(fastest)}
        with open(a.digest, "w") as f:
            json.dump(mine, f, indent=2)
            f.write("\n")
        print(f"wrote {a.digest} ({len(mine['runs'])} runs, {isa})")
        return 0
    try:
        with open(a.digest) as f:
            committed = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{a.digest}: {e}")
        return 2
    failures = compare(digest_of(fastest), committed, isa)
    labels = [isa]
    if isa != "plain":
        plain = run_strict(a.binary, a.model, a.source_dir, os.path.join(a.scratch, "strict-plain.json"), "plain",
                           PLAIN_SUBSET)
        failures += compare(digest_of(plain), committed, "plain", subset=True)
        labels.append(f"plain ({len(plain['runs'])} runs)")
    made_on = committed.get("made_on", {})
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(f"strict evidence on {cpu_model()} is not byte-identical to the digest made on {made_on}")
        return 1
    print(f"ok: {len(committed['runs'])} runs byte-identical to the digest made on {made_on.get('cpu')} "
          f"({made_on.get('kernel_isa')}), here with {' and '.join(labels)} on {cpu_model()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
