#!/usr/bin/env bash
# Issue 16's speed story in one command, every figure measured side by side in this run:
#   1. build/bench/decode_bench: per-token decode in both numerics modes at B = 1..60, prefill,
#      the sampler chain plus record, load plus hash (Google Benchmark; the probe's findings and the
#      BLAS are in its context lines);
#   2. on the gpt2-124m-shape fixture (experiments/bench/grid60.json: one prompt, T in
#      {0.7, 1.0, 1.3} x seeds 1..20, top-p 0.9, 50 new tokens, KV cache):
#      - the Python loop (bench/python_loop.py, Debian's python3-torch, HF's eager math), single stream;
#      - genrepro generate (one stream), and genrepro run on the grid in reference and tiled modes
#        with --threads 2, peak memory included;
#      - openssl dgst -sha256 on the weights;
#      and prints tokens/s and the ratios to the Python loop.
#   bash scripts/bench.sh [--quick]     (--quick: tiny fixture microbenchmarks only; no grid)
# Takes about 6 minutes on 2 cores. Nothing here is a test: timings depend on the machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
quick=false
[ "${1:-}" = "--quick" ] && quick=true

cmake --build "$build" -j "$(nproc)" --target genrepro genrepro_engine_verbs decode_bench >&2
genrepro="$build/genrepro"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if $quick; then
  "$build/bench/decode_bench" --tiny-only
  exit 0
fi
"$build/bench/decode_bench" --benchmark_filter='decode/gpt2|prefill|sampler|load' \
  --benchmark_out="$work/decode.json" --benchmark_out_format=json

model="$work/gpt2-124m-shape"
"$genrepro" fixture --preset gpt2-124m-shape --out "$model" >&2
python_runs="${GENREPRO_BENCH_PYTHON_RUNS:-6}"

echo "== side by side on gpt2-124m-shape (2 cores) =="
/usr/bin/python3 "$root/bench/python_loop.py" --model "$model" --runs "$python_runs" --json > "$work/python.json"
python_tps=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/python.json'))['tokens_per_s'])")
echo "python loop (single stream, $python_runs runs of 50 tokens): $python_tps tok/s"

timed() {  # timed NAME TOKENS COMMAND...: wall seconds and peak RSS of one command
  local name="$1" tokens="$2"; shift 2
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" > /dev/null 2> "$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  read -r seconds kb < "$work/$name.time"
  /usr/bin/python3 -c "
t=$tokens/$seconds; print(f'$name: {t:.1f} tok/s ({$seconds:.1f} s, peak {$kb/1024:.0f} MiB), {t/$python_tps:.2f}x the Python loop')"
}

# generate: one stream, 50 tokens after a 4-token prompt. The wall time includes opening libtorch,
# loading the model and the probe (a user waits for them); its "speed:" line is the loop alone,
# which is what the Python figure measures.
timed generate 50 "$genrepro" generate --model "$model" --prompt "the river bank was" --max-new-tokens 50 \
  --temperature 1.0 --top-p 0.9 --seed 1 --threads 2
loop=$(sed -n 's/^speed: \([0-9.]*\) .*/\1/p' "$work/generate.err")
/usr/bin/python3 -c "print(f'generate, the loop alone: $loop tok/s, {$loop/$python_tps:.2f}x the Python loop')"
timed grid_reference 3000 "$genrepro" run "$root/experiments/bench/grid60.json" --model "$model" \
  --out "$work/reference.json" --threads 2
timed grid_tiled 3000 "$genrepro" run "$root/experiments/bench/grid60.json" --model "$model" \
  --out "$work/tiled.json" --threads 2 --numerics tiled
# Byte-equality of batched and lone runs on a sixth of the grid (10 runs): one run at a time is
# the slow path, and the proof does not need all 60.
grid="$root/experiments/bench/grid60.json"
"$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/reference.s.json" --threads 2 2>/dev/null >/dev/null
"$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/reference1.json" --threads 1 --batch 1 2>/dev/null >/dev/null
"$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/tiled.s.json" --threads 2 --numerics tiled 2>/dev/null >/dev/null
"$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/tiled1.json" --threads 1 --batch 1 --numerics tiled 2>/dev/null >/dev/null

same() {  # same A B: the runs of two evidence files are byte-identical (timing aside)
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
def runs(p):
    e = json.load(open(p))
    for r in e["runs"]:
        r.pop("timing", None)
    return json.dumps(e["runs"], sort_keys=True)
print("identical" if runs(sys.argv[1]) == runs(sys.argv[2]) else "DIFFERENT")
EOF
}
echo "reference batched vs --batch 1 --threads 1 (10 runs): $(same "$work/reference.s.json" "$work/reference1.json")"
echo "tiled batched vs --batch 1 --threads 1 (10 runs):     $(same "$work/tiled.s.json" "$work/tiled1.json")"
/usr/bin/python3 -c "import json;print('probe:', json.dumps(json.load(open('$work/reference.json'))['numerics']['execution']))"
/usr/bin/python3 -c "import json;print('tiled:', json.dumps(json.load(open('$work/tiled.json'))['numerics']))"

start=$(date +%s.%N); openssl dgst -sha256 "$model/model.safetensors" > /dev/null; end=$(date +%s.%N)
echo "openssl dgst -sha256 model.safetensors: $(echo "$end - $start" | bc) s (load_and_hash above, for the ratio)"
