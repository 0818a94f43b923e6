#!/usr/bin/env python3
"""report and check-article on shards merged from two machines.

Takes the two article shards run.article.shard1/2 wrote on this machine, gives the second an AMD
runner's environment (CPU model and flags, as merge_mixed_machines.py does), merges them, and
checks, against independent expectations computed here from the shards themselves:
  - report --golden (Markdown and HTML): one row per environment naming exactly the runs each
    shard ran, the AMD row naming cpu.model and cpu.flags, the field-by-field table folded;
  - check-article (text and --json): the AMD environment with exactly the second shard's runs,
    and every fact resting on one of those runs names it; no other fact does;
  - shards of one machine merged: no such line in either.
"""
import argparse
import json
import os
import re
import subprocess
import sys

AMD_MODEL = "AMD EPYC 9R14"
AMD_FLAGS = "fpu sse2 avx avx2 fma"


def run(cmd, expect_codes):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in expect_codes:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    return p


def runs_label(indices, shown_at_most=8):
    """What the report and check-article call a run list: 'run 3', 'runs 1, 3, 5', ... (8 shown;
    the report's table of environments shows 64)."""
    shown = ", ".join(str(i) for i in indices[:shown_at_most])
    more = f", ... ({len(indices)} runs)" if len(indices) > shown_at_most else ""
    return ("run " if len(indices) == 1 else "runs ") + shown + more


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--shards", nargs=2, required=True)
    ap.add_argument("--facts", required=True)
    ap.add_argument("--scratch", required=True)
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    failures = []

    with open(a.shards[0]) as f:
        first = json.load(f)
    with open(a.shards[1]) as f:
        other = json.load(f)
    first_runs = sorted(r["index"] for r in first["runs"])
    amd_runs = sorted(r["index"] for r in other["runs"])
    amd_ids = {r["id"] for r in other["runs"]}
    other["environment"]["cpu"]["model"] = AMD_MODEL
    other["environment"]["cpu"]["flags"] = AMD_FLAGS
    amd = os.path.join(a.scratch, "shard2-amd.json")
    with open(amd, "w") as f:
        json.dump(other, f)
    merged = os.path.join(a.scratch, "merged-mixed.json")
    run([a.binary, "merge", a.shards[0], amd, "--out", merged], {0})
    # The golden: the same runs from this machine alone (the first shard's environment), so the
    # first environment's row must say "nowhere" and the AMD row exactly the two changed fields.
    golden = os.path.join(a.scratch, "golden-this-machine.json")
    run([a.binary, "merge", a.shards[0], a.shards[1], "--out", golden], {0})

    # ---- report --golden ----
    out = os.path.join(a.scratch, "report-mixed")
    run([a.binary, "report", merged, "--golden", golden, "--out", out], {0})
    md = open(os.path.join(out, "report.md")).read()
    html = open(os.path.join(out, "report.html")).read()
    verdict = md[md.find("## Verdict against the golden"):md.find("\n## ", md.find("## Verdict against the golden") + 5)]
    expected_rows = [
        f"| {runs_label(first_runs, 64)} | 1: the file's environment | nowhere |",
        # Markdown escapes _ and [ ]; a differing cell is bold.
        f"| {runs_label(amd_runs, 64)} | 2: run\\_environments\\[0\\] | **cpu.model \"{AMD_MODEL}\"; cpu.flags \"{AMD_FLAGS}\"** |",
    ]
    for row in expected_rows:
        if row not in verdict:
            failures.append(f"report.md's verdict lacks the row {row!r}:\n{verdict[-3000:]}")
    if "The runs ran in 2 environments" not in verdict:
        failures.append("report.md's verdict does not say the runs ran in 2 environments")
    fold = verdict.find("<summary>Environment differences, run by run and field by field (2)</summary>")
    if fold < 0 or f"| {runs_label(amd_runs)} | cpu.model |" not in verdict[fold:]:
        failures.append("report.md does not fold the field-by-field environment differences")
    if "PASS: every run reproduces the golden." not in verdict:
        failures.append("the mixed-machine merge does not reproduce this machine's golden")
    html_fold = html.find("<summary>Environment differences, run by run and field by field (2)</summary>")
    if html_fold < 0 or AMD_MODEL not in html[html_fold:html.find("</details>", html_fold)]:
        failures.append("report.html does not fold the AMD environment's fields")
    if runs_label(amd_runs, 64) not in html:
        failures.append(f"report.html does not name {runs_label(amd_runs, 64)}")

    # ---- check-article ----
    text = run([a.binary, "check-article", a.facts, merged], {0, 1}).stdout
    line = f"environment 2 ({runs_label(amd_runs)}) differs from the evidence's environment in 2 field(s): " \
           f"cpu.model \"{AMD_MODEL}\"; cpu.flags \"{AMD_FLAGS}\""
    if line not in text:
        failures.append(f"check-article lacks {line!r}:\n{text[-3000:]}")
    doc = json.loads(run([a.binary, "check-article", a.facts, merged, "--json"], {0, 1}).stdout)
    envs = doc.get("environments", [])
    if [e["runs"] for e in envs] != [amd_runs]:
        failures.append(f"check-article --json environments {envs!r}, the AMD shard ran {amd_runs}")
    named = 0
    for fact in doc["facts"]:
        on_amd = any(i in amd_runs for i in fact["runs"])
        if on_amd != (fact["environments"] == [2]):
            failures.append(f"fact {fact['fact']!r} rests on runs {fact['runs']} but names environments {fact['environments']}")
        if on_amd:
            named += 1
            row = next((l for l in text.splitlines() if l.startswith(fact["fact"] + " ")), "")
            if not re.search(r"environment 2 \((runs?) [0-9, .()]+\): cpu\.model", row):
                failures.append(f"check-article's row for {fact['fact']!r} does not name environment 2: {row!r}")
    if named == 0:
        failures.append("no fact rests on a run of the AMD shard: the test checks nothing")

    # check-article --golden: compared with the golden's environment, named with its file.
    against_golden = run([a.binary, "check-article", a.facts, merged, "--golden", golden], {0, 1}).stdout
    if f"environment 2 ({runs_label(amd_runs)}) differs from the golden's environment ({golden}) in 2 field(s)" not in against_golden:
        failures.append(f"check-article --golden does not compare with the golden's environment:\n{against_golden[-1500:]}")
    missing = run([a.binary, "check-article", a.facts, merged, "--golden", os.path.join(a.scratch, "no-such-golden.json")], {2})
    if "no-such-golden.json" not in missing.stderr:
        failures.append(f"check-article --golden with a missing file does not name it: {missing.stderr!r}")

    # ---- one machine: no such lines ----
    same_out = os.path.join(a.scratch, "report-one-machine")
    run([a.binary, "report", golden, "--golden", golden, "--out", same_out], {0})
    same_md = open(os.path.join(same_out, "report.md")).read()
    for phrase in ("environments (shards merged", "run\\_environments", "Environment differences", "The table above is environment 1"):
        if phrase in same_md:
            failures.append(f"one machine's report says {phrase!r}")
    same_text = run([a.binary, "check-article", a.facts, golden], {0, 1}).stdout
    if "environment 2" in same_text or "differs from the evidence's environment" in same_text:
        failures.append("one machine's check-article names an environment")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: report and check-article name {runs_label(amd_runs)} as the AMD runner's ({named} facts rest on them); "
              f"one machine's evidence shows no environment lines")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
