#!/usr/bin/env bash
# The test command: set-up, build, then every test (unit, CLI, reference, golden regression gate).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` (the long checks then do not run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh" --tests  # with CI=true: Chromium for the report screenshot test
bash "$root/scripts/build.sh"  # everything: the command, the test binaries, the benchmarks
cd "$build"
# The suite: every entry but the long checks (label long: tests/README.md), a minute or so.
ctest --output-on-failure -j "$(nproc)" -LE long "$@"
# The long checks run in CI (CI=true, as .ci/run sets) or when asked, after the suite and
# timed apart from it: all of the article experiments under qemu-aarch64, about 100 CPU-s.
if [[ $# -eq 0 && ( "${CI:-}" == true || "${GENREPRO_TEST_LONG:-}" == 1 ) ]]; then
  GENREPRO_TEST_LONG=1 ctest --output-on-failure -j "$(nproc)" -L long
fi
