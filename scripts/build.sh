#!/usr/bin/env bash
# Configures and builds genrepro (Release) into ${GENREPRO_BUILD_DIR:-build}.
#   bash scripts/build.sh [TARGET...]     no target: everything (tests and benchmarks included)
#   GENREPRO_LIBTORCH=OFF bash scripts/build.sh genrepro    the libtorch-free genrepro
# scripts/main.sh builds only `genrepro` (which pulls in the engine verbs it opens); scripts/test.sh
# builds everything.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
# GENREPRO_LIBTORCH=OFF: the libtorch-free build (strict numerics only; no tests, no benchmarks).
libtorch="${GENREPRO_LIBTORCH:-ON}"
if [ ! -f "$build/build.ninja" ] || ! grep -qx "GENREPRO_LIBTORCH:BOOL=$libtorch" "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGENREPRO_LIBTORCH="$libtorch" >&2
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}" >&2
