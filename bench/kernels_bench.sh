#!/usr/bin/env bash
# Issue 21's targets, side by side in one run, with DEFAULT flags (no --threads, no kernel
# setting) and then with --cpu-kernels native, on the gpt2-124m-shape fixture:
#   - the Python loop (bench/python_loop.py, Debian's python3-torch), single stream;
#   - genrepro generate (the loop's own "speed:" line), target >= 1.1x;
#   - genrepro run experiments/bench/grid60.json, reference (target >= 3x) and tiled (>= 7x),
#     each checked identical to --batch 1 --threads 1 on a sixth of the grid;
#   - the probe's findings and the kernels each setting loaded.
#   bash bench/kernels_bench.sh      (GENREPRO_BUILD_DIR, GENREPRO_BENCH_PYTHON_RUNS)
# About 10 minutes on 2 idle cores. Nothing here is a test: timings depend on the machine and load.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
genrepro="$build/genrepro"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model="$work/gpt2-124m-shape"
"$genrepro" fixture --preset gpt2-124m-shape --out "$model" >&2
grid="$root/experiments/bench/grid60.json"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"

python_runs="${GENREPRO_BENCH_PYTHON_RUNS:-6}"
/usr/bin/python3 "$root/bench/python_loop.py" --model "$model" --runs "$python_runs" --json > "$work/python.json"
python_tps=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/python.json'))['tokens_per_s'])")
echo "python loop (single stream, $python_runs runs of 50 tokens): $python_tps tok/s"

timed() {  # timed NAME TOKENS COMMAND...
  local name="$1" tokens="$2"; shift 2
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" > /dev/null 2> "$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  read -r seconds kb < "$work/$name.time"
  /usr/bin/python3 -c "
t=$tokens/$seconds; print(f'  $name: {t:.1f} tok/s ({$seconds:.1f} s, peak {$kb/1024:.0f} MiB), {t/$python_tps:.2f}x the Python loop')"
}
same() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
def canon(p):
    e = json.load(open(p)); e.pop("created_utc", None); e["environment"]["threads"].pop("runs_concurrently", None)
    e["numerics"].pop("execution", None)
    for r in e["runs"]: r.pop("timing", None)
    return json.dumps(e, sort_keys=True)
print("identical" if canon(sys.argv[1]) == canon(sys.argv[2]) else "DIFFERENT")
PY
}

for kernels in portable native; do
  flags=()
  [ "$kernels" = native ] && flags=(--cpu-kernels native)
  echo "== --cpu-kernels $kernels$([ "$kernels" = portable ] && echo ' (the default)') =="
  timed generate 50 "$genrepro" generate --model "$model" --prompt "the river bank was" --max-new-tokens 50 \
    --temperature 1.0 --top-p 0.9 --seed 1 "${flags[@]}"
  loop=$(sed -n 's/^speed: \([0-9.]*\) .*/\1/p' "$work/generate.err")
  /usr/bin/python3 -c "print(f'  generate, the loop alone: $loop tok/s, {$loop/$python_tps:.2f}x the Python loop')"
  grep '^path:' "$work/generate.err" | sed 's/^/  /'
  timed grid_reference 3000 "$genrepro" run "$grid" --model "$model" --out "$work/ref-$kernels.json" "${flags[@]}"
  timed grid_tiled 3000 "$genrepro" run "$grid" --model "$model" --out "$work/tiled-$kernels.json" --numerics tiled "${flags[@]}"
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/r.json" "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/r1.json" --threads 1 --batch 1 "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/t.json" --numerics tiled "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/t1.json" --numerics tiled --threads 1 --batch 1 "${flags[@]}" 2>/dev/null >/dev/null
  echo "  reference default vs --batch 1 --threads 1 (10 runs): $(same "$work/r.json" "$work/r1.json")"
  echo "  tiled default vs --batch 1 --threads 1 (10 runs):     $(same "$work/t.json" "$work/t1.json")"
  /usr/bin/python3 -c "
import json
n = json.load(open('$work/ref-$kernels.json'))['numerics']; t = json.load(open('$work/tiled-$kernels.json'))['numerics']
print('  kernels:', json.dumps(n.get('cpu_kernels')))
x = n['execution']; print('  reference:', json.dumps({k: x[k] for k in ('threads', 'batch', 'workers', 'decode_blas_threads')}), 'probe', json.dumps(x['probe']['rows_keeping_reference_bits']))
print('  tiled: tile', t.get('tile'), json.dumps({k: t['execution'][k] for k in ('threads', 'batch', 'workers')}))"
done
