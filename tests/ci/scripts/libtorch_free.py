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

With --emulator (qemu-aarch64 -L /usr/aarch64-linux-gnu) the same checks hold a cross-built
genrepro of another architecture to the same digest: the x86-64 and the aarch64 builds give the
same bytes (tests/ci/aarch64.cmake).

Exit 0 ok, 1 a check failed, 77 the build is not there (-DGENREPRO_TEST_LIBTORCH_FREE=OFF, or no
cross compiler): skipped, with the reason.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strict_digest import compare, digest_of, run_strict  # noqa: E402

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
    a = ap.parse_args()
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

    evidence = run_strict(a.binary, a.model, a.source_dir, os.path.join(a.scratch, "strict.json"), None, emulator=emulator)
    import json
    with open(a.digest) as f:
        committed = json.load(f)
    isa = evidence["numerics"]["execution"]["kernel_isa"]
    failures += compare(digest_of(evidence), committed, f"libtorch-free, {isa}")
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
    print(f"ok: {len(files)} files link no libtorch nor BLAS; {len(evidence['runs'])} strict runs byte-identical to the "
          f"digest ({isa}); reference numerics refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
