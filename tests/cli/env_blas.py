#!/usr/bin/env python3
"""genrepro env reads the BLAS from the process, not from assumptions: with the loader pointed
at Netlib's reference BLAS (LD_LIBRARY_PATH), the environment block must name that library and
vendor; without, the one ldd resolves. Exit 77 (skip) when the reference BLAS is not installed."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

REFERENCE_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"


def env_block(binary, extra_env=None, flags=()):
    environ = dict(os.environ, **(extra_env or {}))
    p = subprocess.run([binary, "env", *flags], capture_output=True, text=True, env=environ, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: genrepro env exited {p.returncode}: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    # genrepro links no BLAS itself: the engine library it opens does (ldd that one).
    ap.add_argument("--engine-library", required=True)
    a = ap.parse_args()
    failures = []
    ldd = subprocess.run(["ldd", a.engine_library], capture_output=True, text=True).stdout
    m = re.search(r"^\s*libblas\.so\.3 => (\S+)", ldd, re.M)
    default = env_block(a.binary)
    if not m or default["blas"]["resolved"] != os.path.realpath(m.group(1)):
        failures.append(f"default: blas.resolved {default['blas']['resolved']}, ldd says {m and m.group(1)}")
    if default["threads"]["intra_op"] != 1:
        failures.append(f"intra_op threads {default['threads']['intra_op']}, runs use 1")
    if default["blas"]["vendor"] == "openblas" and default["blas"]["threads"] != 1:
        failures.append(f"OpenBLAS threads {default['blas']['threads']}, runs use 1")
    if not os.path.exists(REFERENCE_BLAS):
        print("reference BLAS not installed; checked the default only")
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 77
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(REFERENCE_BLAS, os.path.join(tmp, "libblas.so.3"))
        # Portable kernels (the default) refuse a BLAS that is not OpenBLAS: tests/cli/portable_kernels.py.
        swapped = env_block(a.binary, {"LD_LIBRARY_PATH": tmp}, ["--cpu-kernels", "native"])
    blas = swapped["blas"]
    if blas["resolved"] != os.path.realpath(REFERENCE_BLAS) or blas["vendor"] != "reference":
        failures.append(f"with the reference BLAS preferred: resolved {blas['resolved']}, vendor {blas['vendor']}")
    if swapped["numerics_env"].get("LD_LIBRARY_PATH") is None:
        failures.append("LD_LIBRARY_PATH is not recorded in numerics_env")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok: default", default["blas"]["resolved"], "| swapped", blas["resolved"])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
