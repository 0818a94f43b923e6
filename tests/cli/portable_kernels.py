#!/usr/bin/env python3
"""--cpu-kernels portable (docs/numerics.md, "CPU kernels"), as a user's process sees it.

- Portable evidence is byte-identical, volatile fields aside, whatever OPENBLAS_CORETYPE and
  ATEN_CPU_CAPABILITY the user set (SkylakeX/avx512, an invalid core name), and the user's values
  are recorded as overridden.
- native honours the user's OPENBLAS_CORETYPE (so the first check could fail: the variable does
  reach OpenBLAS), and diff names the kernel change as a numerics cause of its own.
- The default --threads gives the evidence of --threads 1, in reference and tiled.
- An unhonourable portable request is exit 2 with one line: a CPU claimed to lack AVX2, a BLAS
  that is not OpenBLAS (Netlib's reference BLAS, preferred through LD_LIBRARY_PATH).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REFERENCE_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"
# The article's greedy and top-p runs, shortened: every check below compares whole evidence files
# or reads recorded names, so 12 tokens show what 50 do, and the test runs eight processes.
EXPERIMENT = {
    "name": "portable_check",
    "prompts": ["the river bank was"],
    "max_new_tokens": 12,
    "stop_at_eos": True,
    "use_cache": False,
    "runs": [{"mode": "greedy"},
             {"mode": "sample", "temperature": 1.0, "top_p": 0.9, "seed": [41, 42],
              "sampler_order": ["temperature", "top_p"], "top_p_rule": "article", "rng": "torch"}],
    "record": {"top_candidates": 5},
}


def canonical(path):
    """The evidence without what may differ between two runs of the same bits."""
    with open(path) as f:
        e = json.load(f)
    e.pop("created_utc", None)
    e["environment"]["threads"].pop("runs_concurrently", None)
    e.get("numerics", {}).pop("execution", None)
    for r in e["runs"]:
        r.pop("timing", None)
    return json.dumps(e, sort_keys=True, indent=1)


class Checks:
    def __init__(self, a):
        self.a = a
        self.failures = []
        self.refused_portable = None  # the stderr of a run refused because portable kernels cannot be had
        path = os.path.join(a.scratch, "portable_check.json")
        with open(path, "w") as f:
            json.dump(EXPERIMENT, f, indent=1)
        self.experiments = [path]

    def genrepro(self, args, env=None):
        environ = {k: v for k, v in os.environ.items()
                   if k not in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "GENREPRO_TEST_HIDE_CPU_FEATURES")}
        environ.update(env or {})
        return subprocess.run([self.a.binary, *args], capture_output=True, text=True, env=environ, timeout=240)

    def run(self, name, flags=(), env=None):
        out = os.path.join(self.a.scratch, name + ".json")
        # The library kernels are reference's and tiled's; run's default numerics (strict) has none.
        mode = [] if "--numerics" in flags else ["--numerics", "reference"]
        p = self.genrepro(["run", *self.experiments, "--model", self.a.model, "--out", out, *mode, *flags], env)
        if p.returncode == 2 and "--cpu-kernels portable" in p.stderr:
            self.refused_portable = p.stderr.strip()
        if p.returncode != 0:
            self.failures.append(f"{name}: run exited {p.returncode}: {p.stderr[-1500:]}")
            return None
        return out

    def fail_unless(self, ok, what):
        if not ok:
            self.failures.append(what)


def numerics(path):
    with open(path) as f:
        return json.load(f)["numerics"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    c = Checks(a)

    # The first run is also the probe (a process that opens the engine costs about half a second):
    # where the machine cannot honour portable kernels, it is refused with exit 2 naming them.
    plain = c.run("portable", ["--threads", "1"])
    if plain is None and c.refused_portable:
        print("skip: this machine cannot honour portable kernels:", c.refused_portable)
        return 77
    if plain is None:
        print("\n".join("FAIL: " + f for f in c.failures))
        return 1
    k = numerics(plain).get("cpu_kernels")
    c.fail_unless(k == {"setting": "portable", "blas_core": "Haswell", "aten_capability": "AVX2"},
                  f"portable evidence names cpu_kernels {k}")
    base = canonical(plain)

    for name, env in [("user_skylakex", {"OPENBLAS_CORETYPE": "SkylakeX", "ATEN_CPU_CAPABILITY": "avx512"}),
                      ("user_bogus", {"OPENBLAS_CORETYPE": "Bogus", "ATEN_CPU_CAPABILITY": "default"})]:
        out = c.run(name, ["--threads", "1"], env)
        if out is None:
            continue
        c.fail_unless(canonical(out) == base, f"{name}: portable evidence differs from the run without the variables")
        overrode = numerics(out).get("execution", {}).get("cpu_kernels_overrode")
        c.fail_unless(overrode == env, f"{name}: execution.cpu_kernels_overrode is {overrode}, the user set {env}")

    # Default threads = --threads 1, byte for byte, in both modes.
    default_threads = c.run("portable_default_threads")
    if default_threads is not None:
        c.fail_unless(canonical(default_threads) == base, "default --threads: evidence differs from --threads 1 (reference)")
        t = numerics(default_threads)["execution"].get("threads", {})
        c.fail_unless(t.get("asked") == "default" and t.get("used", 0) >= 1, f"default --threads recorded as {t}")
    tiled1 = c.run("tiled_threads1", ["--numerics", "tiled", "--threads", "1"])
    tiled_default = c.run("tiled_default_threads", ["--numerics", "tiled"])
    if tiled1 and tiled_default:
        c.fail_unless(canonical(tiled1) == canonical(tiled_default), "default --threads: evidence differs from --threads 1 (tiled)")

    # native: the libraries choose, and the user's variable reaches OpenBLAS. The core must be one
    # this CPU runs (genrepro refuses the others) and not portable's Haswell, so diff has a cause.
    flags = set(open("/proc/cpuinfo").read().split())
    core = "SkylakeX" if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags else "Sandybridge"
    native = c.run("native_" + core.lower(), ["--threads", "1", "--cpu-kernels", "native"], {"OPENBLAS_CORETYPE": core})
    if native is not None:
        k = numerics(native).get("cpu_kernels")
        c.fail_unless(k is not None and k["setting"] == "native" and k["blas_core"] == core,
                      f"native with OPENBLAS_CORETYPE={core} names cpu_kernels {k}")
        d = c.genrepro(["diff", plain, native])
        c.fail_unless(d.returncode in (0, 1) and "numerics" in d.stdout and "cpu_kernels.blas_core" in d.stdout,
                      f"diff portable vs native (exit {d.returncode}) does not name cpu_kernels.blas_core: {d.stdout[-1500:]}")

    # Unhonourable requests: exit 2, one line naming the setting.
    hidden = c.genrepro(["run", c.experiments[0], "--model", a.model, "--numerics", "reference",
                         "--out", os.path.join(a.scratch, "x.json")], {"GENREPRO_TEST_HIDE_CPU_FEATURES": "avx2"})
    c.fail_unless(hidden.returncode == 2 and "no avx2" in hidden.stderr and hidden.stderr.count("\n") == 1,
                  f"portable on a CPU without AVX2: exit {hidden.returncode}, stderr {hidden.stderr!r}")
    # Strict numerics (the default) pin nothing: such a CPU runs them.
    strict = c.genrepro(["run", c.experiments[0], "--model", a.model, "--out", os.path.join(a.scratch, "strict.json")],
                        {"GENREPRO_TEST_HIDE_CPU_FEATURES": "avx2"})
    c.fail_unless(strict.returncode == 0 and "numerics strict" in strict.stderr,
                  f"strict (the default) on a CPU without AVX2: exit {strict.returncode}, stderr {strict.stderr!r}")
    native_ok = c.genrepro(["env", "--cpu-kernels", "native"], {"GENREPRO_TEST_HIDE_CPU_FEATURES": "avx2"})
    c.fail_unless(native_ok.returncode == 0, f"native on a CPU without AVX2: exit {native_ok.returncode}")
    if os.path.exists(REFERENCE_BLAS):
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(REFERENCE_BLAS, os.path.join(tmp, "libblas.so.3"))
            ref = c.genrepro(["env"], {"LD_LIBRARY_PATH": tmp})
        c.fail_unless(ref.returncode == 2 and "not OpenBLAS" in ref.stderr and ref.stderr.count("\n") == 1,
                      f"portable with the reference BLAS: exit {ref.returncode}, stderr {ref.stderr!r}")
    else:
        print("reference BLAS not installed: the non-OpenBLAS refusal is not checked")

    for f in c.failures:
        print("FAIL:", f)
    if not c.failures:
        print("ok: portable evidence independent of OPENBLAS_CORETYPE/ATEN_CPU_CAPABILITY; default threads = 1; refusals exit 2")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
