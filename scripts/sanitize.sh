#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (CMAKE_BUILD_TYPE=Sanitize),
# in its own build tree (${GENREPRO_SANITIZE_BUILD_DIR:-build-sanitize}). Extra arguments go to ctest.
# libtorch and OpenBLAS are Debian's uninstrumented builds: what happens inside them is not checked.
# Leak checking is off: libtorch keeps its global registries alive to process exit by design.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DGENREPRO_BUILD_BENCH=OFF >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
cd "$build"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:detect_odr_violation=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Tests that wait on a process scale their patience by this (an instrumented build is slower).
export GENREPRO_TEST_SLOWDOWN=5
ctest --output-on-failure -j "$(nproc)" --timeout 900 "$@"
