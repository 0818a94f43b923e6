#!/usr/bin/env bash
# The main job: set-up, build, then the article's experiments on the default model, the
# evidence, the diff against the golden runs, and the report.
#
#   model:    --model DIR, else $GENREPRO_MODEL, else a gpt2 snapshot in the Hugging Face cache,
#             else the tiny fixture model (made on first use).
#   evidence: reports/evidence.json     report: reports/out/ (opens with the gate's verdict)
#   exit:     0 the runs agree with the golden evidence, 1 they differ, 2 bad input.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
# Only what the job runs: the genrepro command and the engine verbs it opens (no tests, no benchmarks).
bash "$root/scripts/build.sh" genrepro
genrepro="$build/genrepro"
cd "$root"

"$genrepro" run experiments/article/*.json --out reports/evidence.json "$@"

# The report opens with the verdict of the gate this job runs next, so reports/out/report.html
# answers "did it reproduce?" first; the report itself exits 0 either way, the gate decides.
source=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["source"])' reports/evidence.json)
if [ "$source" = "fixture" ]; then
  # The fixture's golden runs are blessed evidence: any difference is reported and fails the job.
  "$genrepro" report reports/evidence.json --golden golden/fixture --out reports/out
  "$genrepro" diff golden/fixture reports/evidence.json
else
  # Real weights: compare with what the article published (see golden/article/README.md).
  "$genrepro" report reports/evidence.json --article golden/article/article-facts.json --out reports/out
  "$genrepro" check-article golden/article/article-facts.json reports/evidence.json
fi
