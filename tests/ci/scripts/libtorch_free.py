#!/usr/bin/env python3
"""The libtorch-free genrepro (-DGENREPRO_LIBTORCH=OFF) as a user without libtorch gets it.

- Nothing of libtorch, OpenMP or a BLAS is linked: the binary and every library beside it (the
  engine verbs it opens included) need (ELF DT_NEEDED) no libtorch, libc10, libgomp, BLAS or LAPACK.
- `--version` says so.
- Its strict evidence of the article experiments on the tiny fixture is byte-identical, run for
  run, to the committed strict digest (tests/data/strict-digest.json) that the libtorch build
  matches too (strict.digest): the two builds give the same bytes.
- `run --numerics reference` and `--cpu-kernels native` are refused with exit 2 and one line
  naming the libtorch build.

With --emulator (qemu-aarch64) the same checks hold a cross-built genrepro of another
architecture to the same digest: the x86-64 and the aarch64 builds give the same bytes
(tests/ci/aarch64.cmake). Emulation costs about 0.2 CPU-s a decoding step, so that entry may name
the article experiments it runs (--only: their runs are held to the digest, the others are not
run) and an experiment of its own (--cross-check FILE, run by --reference-binary on this machine
too: the two evidence files must be byte-identical run for run).

Exit 0 ok, 1 a check failed, 77 the build is not there (-DGENREPRO_TEST_LIBTORCH_FREE=OFF, or no
cross compiler): skipped, with the reason.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strict_digest import compare, digest_of, run_strict, run_strict_files  # noqa: E402


FORBIDDEN = re.compile(r"lib(torch|c10|gomp|openblas|blas|lapack|cblas)\b[^ ]*\.so")


def linked_libraries(path):
    """The DT_NEEDED entries: what the dynamic loader will load for it, on any architecture."""
    done = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--digest", required=True)
    ap.add_argument("--emulator", default="", help="runs the binary under this command (words split as a shell does)")
    ap.add_argument("--expect-isa", help="the strict vector code the evidence must name (neon on aarch64)")
    ap.add_argument("--skip-reason", default="configure with -DGENREPRO_TEST_LIBTORCH_FREE=ON")
    ap.add_argument("--only", help="comma-separated article experiment files to run (default: all of them)")
    ap.add_argument("--cross-check", help="an experiment file run by both --binary and --reference-binary")
    ap.add_argument("--reference-binary", help="the genrepro of this machine that --cross-check compares with")
    ap.add_argument("--long", action="store_true",
                    help="a long check: skipped unless GENREPRO_TEST_LONG=1 (scripts/test.sh sets it in CI)")
    a = ap.parse_args()
    if a.long and os.environ.get("GENREPRO_TEST_LONG") != "1":
        print("skip: a long check (about 100 CPU-s); CI runs it after the suite, or: GENREPRO_TEST_LONG=1 ctest -L long")
        return 77
    if not os.path.exists(a.binary):
        print(f"skip: {a.binary} was not built ({a.skip_reason})")
        return 77
    emulator = a.emulator.split()
    os.makedirs(a.scratch, exist_ok=True)
    failures = []

    files = [a.binary] + sorted(glob.glob(os.path.join(os.path.dirname(a.binary), "libgenrepro_*.so")))
    if not any(f.endswith("libgenrepro_engine_verbs.so") for f in files):
        failures.append("no libgenrepro_engine_verbs.so beside the binary")
    for f in files:
        bad = [lib for lib in linked_libraries(f) if FORBIDDEN.search(lib)]
        if bad:
            failures.append(f"{os.path.basename(f)} links {bad}")

    version = subprocess.run([*emulator, a.binary, "--version"], capture_output=True, text=True)
    if "libtorch: none" not in version.stdout:
        failures.append(f"--version does not say it has no libtorch: {version.stdout!r}")

    only = set(a.only.split(",")) if a.only else None
    for name in sorted(only or ()):
        if not os.path.isfile(os.path.join(a.source_dir, "experiments", "article", name)):
            print(f"--only: experiments/article/{name} does not exist")
            return 2
    evidence = run_strict(a.binary, a.model, a.source_dir, os.path.join(a.scratch, "strict.json"), None, only, emulator)
    with open(a.digest) as f:
        committed = json.load(f)
    isa = evidence["numerics"]["execution"]["kernel_isa"]
    failures += compare(digest_of(evidence), committed, f"libtorch-free, {isa}", subset=only is not None)
    cross_runs = 0
    if a.cross_check:
        here = run_strict_files(a.reference_binary, [a.cross_check], a.model, os.path.join(a.scratch, "cross-here.json"))
        there = run_strict_files(a.binary, [a.cross_check], a.model, os.path.join(a.scratch, "cross-there.json"),
                                 emulator=emulator)
        mine, theirs = digest_of(there), digest_of(here)
        failures += compare(mine, theirs, f"{os.path.basename(a.cross_check)}, {isa} vs this machine's "
                            f"{here['numerics']['execution']['kernel_isa']}")
        cross_runs = len(theirs["runs"])
    if a.expect_isa and isa != a.expect_isa:
        failures.append(f"the evidence names vector code {isa}, expected {a.expect_isa}")
    if not evidence["environment"]["libtorch_version"].startswith("none"):
        failures.append(f"environment.libtorch_version {evidence['environment']['libtorch_version']!r}")

    greedy = os.path.join(a.source_dir, "experiments", "article", "greedy.json")
    for flags in (["--numerics", "reference"], ["--cpu-kernels", "native"]):
        p = subprocess.run([*emulator, a.binary, "run", greedy, "--model", a.model, "--out", os.path.join(a.scratch, "x.json"), *flags],
                           capture_output=True, text=True)
        if p.returncode != 2 or p.stderr.count("\n") != 1 or "need the libtorch build" not in p.stderr:
            failures.append(f"run {' '.join(flags)}: exit {p.returncode}, stderr {p.stderr!r}")

    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    cross = f"; {cross_runs} runs of {os.path.basename(a.cross_check)} byte-identical to this machine's" if a.cross_check else ""
    print(f"ok: {len(files)} files link no libtorch nor BLAS; {len(evidence['runs'])} strict runs byte-identical to the "
          f"digest ({isa}){cross}; reference numerics refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
