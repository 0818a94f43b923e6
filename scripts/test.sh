#!/usr/bin/env bash
# The test command: set-up, build, then every test (unit, CLI, reference, golden regression gate).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh" --tests  # with CI=true: Chromium for the report screenshot test
bash "$root/scripts/build.sh"  # everything: the command, the test binaries, the benchmarks
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
