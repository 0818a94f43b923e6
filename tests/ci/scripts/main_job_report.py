#!/usr/bin/env python3
"""scripts/main.sh's report opens with the verdict of the gate the job runs: `report --golden
golden/fixture` on the fixture (then `diff`), `report --article ...` on real weights (then
`check-article`), and the report is made before the gate, so a failing gate still leaves it.

No model and no build: main.sh is copied into a scratch root whose scripts/setup.sh and
scripts/build.sh do nothing and whose build/genrepro is a stub that logs its arguments, writes an
evidence file naming the model source for `run`, and exits 1 for `diff` (the gate failing)."""
import argparse
import json
import os
import shutil
import stat
import subprocess
import sys

STUB = r"""#!/usr/bin/env bash
printf '%s\n' "$*" >> "$STUB_LOG"
if [ "$1" = run ]; then
  while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
  mkdir -p "$(dirname "$out")"
  printf '{"model": {"source": "%s"}}\n' "$STUB_SOURCE" > "$out"
fi
[ "$1" = diff ] && exit 1
[ "$1" = check-article ] && exit 1
exit 0
"""


def job(source_dir, root, model_source):
    shutil.rmtree(root, ignore_errors=True)
    for d in ("scripts", "build", "experiments/article", "golden/fixture"):
        os.makedirs(os.path.join(root, d))
    shutil.copy(os.path.join(source_dir, "scripts", "main.sh"), os.path.join(root, "scripts", "main.sh"))
    for name in ("setup.sh", "build.sh"):
        open(os.path.join(root, "scripts", name), "w").write("exit 0\n")
    open(os.path.join(root, "experiments", "article", "a.json"), "w").write("{}\n")
    stub = os.path.join(root, "build", "genrepro")
    open(stub, "w").write(STUB)
    os.chmod(stub, os.stat(stub).st_mode | stat.S_IXUSR)
    log = os.path.join(root, "calls.log")
    env = dict(os.environ, STUB_LOG=log, STUB_SOURCE=model_source)
    env.pop("GENREPRO_BUILD_DIR", None)
    p = subprocess.run(["bash", os.path.join(root, "scripts", "main.sh")], env=env, capture_output=True, text=True, timeout=60)
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    return p.returncode, calls, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    failures = []
    cases = {
        "fixture": ("report reports/evidence.json --golden golden/fixture --out reports/out", "diff golden/fixture reports/evidence.json"),
        "hf-cache": ("report reports/evidence.json --article golden/article/article-facts.json --out reports/out",
                     "check-article golden/article/article-facts.json reports/evidence.json"),
    }
    for source, (report, gate) in cases.items():
        rc, calls, err = job(a.source_dir, os.path.join(a.work, source), source)
        verbs = [c.split()[0] for c in calls]
        print(f"{source}: exit {rc}; calls: {calls}")
        if report not in calls:
            failures.append(f"{source}: main.sh did not run `{report}` (calls: {calls}; stderr: {err.strip()})")
        if gate not in calls:
            failures.append(f"{source}: main.sh did not run the gate `{gate}` (calls: {calls})")
        elif report in calls and calls.index(report) > calls.index(gate):
            failures.append(f"{source}: the report came after the gate, so a failing gate leaves no report")
        if rc != 1:
            failures.append(f"{source}: main.sh exited {rc}, not the gate's 1")
        if verbs.count("report") != 1:
            failures.append(f"{source}: {verbs.count('report')} report calls, expected 1")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
