#!/usr/bin/env python3
"""genrepro links no libtorch, and the verbs that need no model never load it: the dynamic
loader's own trace (LD_DEBUG=libs) of --help, --version, diff, report, merge, check-article,
tokenize, sample (JSON lines, .npy, standard input, every framework) and env --no-engine must
name no libtorch/libc10 object, and each must succeed. As a control, `env` (which needs libtorch)
must show libtorch in the same trace, so the check can fail."""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

TORCH_OBJECT = re.compile(r"(?:file=|calling init: )\S*/lib(?:torch|c10)[^/\s]*\.so")


def trace(binary, args, cwd, stdin=None):
    env = dict(os.environ, LD_DEBUG="libs")
    env.pop("LD_DEBUG_OUTPUT", None)  # the trace must come on stderr, not into files
    p = subprocess.run([binary, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                       input=stdin if stdin is not None else "")
    return p.returncode, p.stderr


def write_npy(path, rows):
    """float32 rows as numpy.save writes them (format 1.0, '<f4', C order)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), len(rows[0]))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("ascii"))
        for row in rows:
            f.write(struct.pack("<%df" % len(row), *row))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    diff_data = os.path.join(a.source_dir, "tests/cli/data/diff")
    report_evidence = os.path.join(a.source_dir, "tests/cli/data/report-evidence.json")
    tokenizer = os.environ["GENREPRO_TOKENIZER_DIR"]
    jsonl = os.path.join(a.source_dir, "tests/cli/data/sample/logits.jsonl")
    npy = os.path.join(a.work, "logits.npy")
    write_npy(npy, [[0.5, 1.5, -0.25, 1.0], [2.0, 0.0, 0.0, -1.0]])
    cases = {
        "--help": ["--help"],
        "--version": ["--version"],
        "generate --help": ["generate", "--help"],
        "diff": ["diff", f"{diff_data}/golden.json", f"{diff_data}/same.json"],
        "report": ["report", report_evidence, "--out", os.path.join(a.work, "report")],
        "merge (bad input)": ["merge", os.path.join(a.work, "missing.json"), "--out", os.path.join(a.work, "merged.json")],
        "check-article": ["check-article", os.path.join(a.source_dir, "golden/article/article-facts.json"),
                          f"{diff_data}/golden.json"],
        "tokenize": ["tokenize", "--model", tokenizer, "the river bank was"],
        "env --no-engine": ["env", "--no-engine"],
        "bad flag of an engine verb": ["generate", "--prompt", "x", "--temperature", "-1"],
        "sample (article, JSON lines)": ["sample", jsonl, "--params", '{"mode": "sample", "top_p": 0.7, "seed": 42}'],
        "sample (hf, .npy)": ["sample", npy, "--params", '{"mode": "sample", "framework": "hf", "typical_p": 0.9, '
                              '"repetition_penalty": 1.3, "seed": 1}', "--history", "[0, 1]"],
        "sample (llama.cpp, stdin)": ["sample", "-", "--params", '{"mode": "sample", "framework": "llama.cpp", "seed": 7}'],
        "sample (bad input)": ["sample", os.path.join(a.work, "missing.jsonl"), "--params", '{"mode": "greedy"}'],
    }
    with open(jsonl) as f:
        stdin = {"sample (llama.cpp, stdin)": f.read()}
    # check-article on non-article evidence reports mismatches (exit 1); a bad flag is exit 2.
    expected_exit = {"check-article": 1, "bad flag of an engine verb": 2, "merge (bad input)": 2, "sample (bad input)": 2}
    failures = []
    for name, args in cases.items():
        rc, err = trace(a.binary, args, a.work, stdin.get(name))
        if rc != expected_exit.get(name, 0):
            failures.append(f"{name}: exit {rc}, expected {expected_exit.get(name, 0)}: {err[-500:]}")
        hits = TORCH_OBJECT.findall(err)
        if hits:
            failures.append(f"{name}: loaded libtorch: {hits[0]}")
    rc, err = trace(a.binary, ["env"], a.work)
    if rc != 0 or not TORCH_OBJECT.search(err):
        failures.append(f"control: `env` exit {rc} and its trace shows no libtorch, so the check proves nothing")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(cases)} model-free invocations loaded no libtorch; `env` did")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
