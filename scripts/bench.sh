#!/usr/bin/env bash
# genrepro's speed story in one command, every figure measured side by side in this run:
#   1. build/bench/decode_bench: per-token decode in both numerics modes at B = 1..60, prefill,
#      the sampler chain plus record, load plus hash (Google Benchmark; the probe's findings and the
#      BLAS are in its context lines);
#   2. the speed targets' figures, for both kernel settings (--cpu-kernels portable, the default, and
#      native), with default flags otherwise (bench/kernels_bench.sh), on the gpt2-124m-shape
#      fixture (experiments/bench/grid60.json: one prompt, T in {0.7, 1.0, 1.3} x seeds 1..20,
#      top-p 0.9, 50 new tokens, KV cache):
#      - the Python loop (bench/python_loop.py, Debian's python3-torch, HF's eager math), single stream;
#      - genrepro generate (the loop alone), genrepro run on the grid in reference and tiled modes
#        (wall time, loading included, peak memory), each checked identical to --batch 1;
#      - the kernels each setting loaded and what the start-up probe proved (rows keeping a lone
#        row's bits per BLAS thread count, the invariant tile) and the layout it chose;
#      ending in one Markdown table of tok/s and ratios to the Python loop;
#   3. openssl dgst -sha256 on the weights (load_and_hash's peer).
#   bash scripts/bench.sh [--quick | --side-by-side]
#     --quick         tiny fixture microbenchmarks only; no grid
#     --side-by-side  part 2 (and 3) only: the targets' figures without the microbenchmarks
# Takes about 15 minutes on 2 cores (part 2 about 10). Nothing here is a test: timings depend on
# the machine and its load, which part 2 prints.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
quick=false
micro=true
case "${1:-}" in
  --quick) quick=true ;;
  --side-by-side) micro=false ;;
  "") ;;
  *) echo "bench.sh: unknown option '$1'; use --quick, --side-by-side or nothing" >&2; exit 2 ;;
esac

cmake --build "$build" -j "$(nproc)" --target genrepro genrepro_engine_verbs decode_bench machine_bench >&2
genrepro="$build/genrepro"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if $quick; then
  "$build/bench/decode_bench" --tiny-only
  exit 0
fi
if $micro; then
  "$build/bench/decode_bench" --benchmark_filter='decode/gpt2|prefill|sampler|load' \
    --benchmark_out="$work/decode.json" --benchmark_out_format=json
fi

echo "== issue 21: both kernel settings, default flags, side by side with the Python loop =="
GENREPRO_BUILD_DIR="$build" bash "$root/bench/kernels_bench.sh"

model="$work/gpt2-124m-shape"
"$genrepro" fixture --preset gpt2-124m-shape --out "$model" >&2
start=$(date +%s.%N); openssl dgst -sha256 "$model/model.safetensors" > /dev/null; end=$(date +%s.%N)
echo "openssl dgst -sha256 model.safetensors: $(echo "$end - $start" | bc) s (load_and_hash above, for the ratio)"
