#!/usr/bin/env bash
# What a sensitivity matrix costs: the plan's estimate for the article's matrix, and one
# cell measured, on a fixture preset (default gpt2-124m-shape, GPT-2 small's exact shapes).
#   bash bench/sensitivity_cost.sh [BUILD_DIR] [tiny|gpt2-124m-shape]
# The cell measured is the reference cell (portable kernels, 1 thread, reference numerics, batch 1,
# OpenBLAS): every other cell's estimate is a multiple of it (threads divide, the KV cache and
# Netlib's BLAS change the work), so the measured/estimated ratio here scales the whole plan.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
preset="${2:-gpt2-124m-shape}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/genrepro" fixture --preset "$preset" --out "$work/model" >/dev/null 2>&1
reference="kernels=portable;threads=1;numerics=reference;batch=1;cache=as-written;blas=openblas"
echo "== the plan: the article's default matrix on $preset"
"$build/genrepro" sensitivity "$root"/experiments/article/*.json --model "$work/model" --out "$work/plan" --plan | grep -E '^(cell|plan)'
echo "== the reference cell, measured (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
start=$(date +%s.%N)
"$build/genrepro" sensitivity "$root"/experiments/article/*.json --model "$work/model" --out "$work/m" --cells "$reference" 2>&1 |
  grep -E '^sensitivity: cell'
end=$(date +%s.%N)
echo "wall: $(awk "BEGIN{printf \"%.1f\", $end - $start}") s (the cell and the matrix's comparison; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
