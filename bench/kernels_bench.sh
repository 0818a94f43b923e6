#!/usr/bin/env bash
# The speed targets, side by side in one run, with DEFAULT flags (no --threads, no kernel
# setting: --cpu-kernels portable) and then with --cpu-kernels native, on the gpt2-124m-shape
# fixture:
#   - the Python loop (bench/python_loop.py, Debian's python3-torch), single stream, at torch's
#     default threads and at torch.set_num_threads(nproc); the faster is the baseline, so no
#     ratio is flattered by a slow peer (docs/numerics.md, "Speed against the Python loop");
#   - genrepro generate (the loop's own "speed:" line), target >= 1.1x;
#   - genrepro run experiments/bench/grid60.json, reference (target >= 3x) and tiled (>= 7x),
#     wall time with loading and the probe, each checked identical to --batch 1 --threads 1 on a
#     sixth of the grid;
#   - the kernels each setting loaded and what the start-up probe proved (rows keeping a lone
#     row's bits per BLAS thread count, the invariant tile) and the layout it chose;
#   - --numerics strict: generate (target >= 2x) and the grid (>= 20x), the grid checked
#     identical to --batch 1 --threads 1, each also as a share of the machine: the grid's float32
#     work against the FMA peak, generate's weight bytes against the read bandwidth, both measured
#     in this run (bench/machine_bench.cpp);
# then one Markdown table of every figure (the one docs/numerics.md quotes).
#   bash bench/kernels_bench.sh      (GENREPRO_BUILD_DIR, GENREPRO_BENCH_PYTHON_RUNS)
# About 10 minutes on 2 idle cores. Nothing here is a test: timings depend on the machine and load,
# so the load average is printed before and after.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_BUILD_DIR:-$root/build}"
genrepro="$build/genrepro"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
model="$work/gpt2-124m-shape"
"$genrepro" fixture --preset gpt2-124m-shape --out "$model" >&2
grid="$root/experiments/bench/grid60.json"
cpus=$(nproc)
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $cpus CPUs usable"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# OpenBLAS's pool spins while it waits for a core: on a busy machine the Python loop (two BLAS
# threads) slows far more than genrepro's one-thread layouts, and every ratio is inflated.
if /usr/bin/python3 -c "import os,sys; sys.exit(0 if os.getloadavg()[0] > $cpus else 1)"; then
  echo "warning: the load average exceeds the $cpus CPUs: these figures measure the contention, not genrepro; rerun on an idle machine" >&2
fi
figures="$work/figures.tsv"  # setting, figure, tok/s, seconds, identical-to-batch-1
: > "$figures"

# The machine's own bounds, measured here so the strict figures can be stated as shares of them:
# float32 FMA peak and memory read bandwidth, on one thread and on every CPU (bench/machine_bench.cpp).
"$build/bench/machine_bench" --benchmark_format=json > "$work/machine.json" 2> /dev/null
/usr/bin/python3 - "$work/machine.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if "FLOPS" in b:
        print(f"machine: float32 FMA peak, {b['name'].split('/')[2]}: {b['FLOPS'] / 1e9:.1f} GFLOP/s ({b.get('label', '')})")
    else:
        print(f"machine: memory read bandwidth, {b['name'].split('/')[2]}: {b['bytes_per_s'] / 2**30:.1f} GiB/s")
PY

python_runs="${GENREPRO_BENCH_PYTHON_RUNS:-6}"
/usr/bin/python3 "$root/bench/python_loop.py" --model "$model" --runs "$python_runs" --json > "$work/python-default.json"
/usr/bin/python3 "$root/bench/python_loop.py" --model "$model" --runs "$python_runs" --threads "$cpus" --json > "$work/python-all.json"
python_tps=$(/usr/bin/python3 - "$work/python-default.json" "$work/python-all.json" <<'PY'
import json, sys
best = 0
for path, name in zip(sys.argv[1:], ("torch's default threads", "torch.set_num_threads(nproc)")):
    p = json.load(open(path))
    best = max(best, p["tokens_per_s"])
    print(f"python loop, {name}: {p['tokens_per_s']:.1f} tok/s ({p['runs']} runs of 50 tokens; torch {p['torch']}, "
          f"{p['torch_threads']} intra-op threads, OpenBLAS {p['openblas_core']} on {p['openblas_threads']} threads)", file=sys.stderr)
print(f"{best:.3f}")
PY
)
echo "python loop baseline (the faster of the two): $python_tps tok/s"

timed() {  # timed SETTING NAME TOKENS COMMAND...: wall seconds and peak RSS of one command
  local setting="$1" name="$2" tokens="$3"; shift 3
  /usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" > /dev/null 2> "$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
  read -r seconds kb < "$work/$name.time"
  /usr/bin/python3 -c "
t=$tokens/$seconds; print(f'  $name: {t:.1f} tok/s ({$seconds:.1f} s with loading, peak {$kb/1024:.0f} MiB), {t/$python_tps:.2f}x the Python loop')"
  printf '%s\t%s\t%s\t%s\n' "$setting" "$name" "$(/usr/bin/python3 -c "print($tokens/$seconds)")" "$seconds" >> "$figures"
}
same() {  # same A B: identical evidence, volatile fields aside
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
  # The flag given selects the library numerics (reference; tiled where named) beside strict's default.
  flags=(--cpu-kernels "$kernels")
  echo "== --cpu-kernels $kernels$([ "$kernels" = portable ] && echo ' (the library kernels default)') =="
  timed "$kernels" generate 50 "$genrepro" generate --model "$model" --prompt "the river bank was" --max-new-tokens 50 \
    --temperature 1.0 --top-p 0.9 --seed 1 "${flags[@]}"
  loop=$(sed -n 's/^speed: \([0-9.]*\) .*/\1/p' "$work/generate.err")
  /usr/bin/python3 -c "print(f'  generate, the loop alone: $loop tok/s, {$loop/$python_tps:.2f}x the Python loop')"
  printf '%s\t%s\t%s\t\t\n' "$kernels" generate_loop "$loop" >> "$figures"
  grep '^path:' "$work/generate.err" | sed 's/^/  /' || true
  timed "$kernels" grid_reference 3000 "$genrepro" run "$grid" --model "$model" --out "$work/ref-$kernels.json" "${flags[@]}"
  timed "$kernels" grid_tiled 3000 "$genrepro" run "$grid" --model "$model" --out "$work/tiled-$kernels.json" --numerics tiled "${flags[@]}"
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/r.json" "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/r1.json" --threads 1 --batch 1 "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/t.json" --numerics tiled "${flags[@]}" 2>/dev/null >/dev/null
  "$genrepro" run "$grid" --model "$model" --shard 1/6 --out "$work/t1.json" --numerics tiled --threads 1 --batch 1 "${flags[@]}" 2>/dev/null >/dev/null
  ref_same=$(same "$work/r.json" "$work/r1.json")
  tiled_same=$(same "$work/t.json" "$work/t1.json")
  echo "  reference default vs --batch 1 --threads 1 (10 runs): $ref_same"
  echo "  tiled default vs --batch 1 --threads 1 (10 runs):     $tiled_same"
  printf '%s\t%s\t%s\n' "$kernels" grid_reference_same "$ref_same" >> "$figures"
  printf '%s\t%s\t%s\n' "$kernels" grid_tiled_same "$tiled_same" >> "$figures"
  # What decided the layout: the kernels loaded, the rows the probe proved keep a lone row's bits
  # on each BLAS thread count, the invariant tile, and the batch / workers / threads chosen.
  /usr/bin/python3 - "$work/ref-$kernels.json" "$work/tiled-$kernels.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["numerics"]; t = json.load(open(sys.argv[2]))["numerics"]
k = n.get("cpu_kernels", {})
print(f"  kernels: setting {k.get('setting')}, BLAS core {k.get('blas_core')}, ATen {k.get('aten_capability')}")
x = n["execution"]; probe = x["probe"]
rows = ", ".join(f"{p['max_rows']} on {p['blas_threads']} BLAS thread{'s' if p['blas_threads'] > 1 else ''}"
                 for p in probe["rows_keeping_reference_bits"])
print(f"  probe: rows keeping a lone row's bits: {rows}; probe time {probe.get('seconds')} s")
print(f"  reference layout: batch {x['batch']}, workers {x['workers']}, decode BLAS threads {x['decode_blas_threads']}, "
      f"threads {json.dumps(x['threads'])}")
y = t["execution"]
print(f"  tiled layout: tile T = {t.get('tile')} (largest invariant {y['probe'].get('largest_invariant_tile')}), batch {y['batch']}, "
      f"workers {y['workers']}")
PY
done

# Strict numerics: genrepro's own kernels, no probe, no kernel setting; the whole grid is checked
# against --batch 1 --threads 1 (strict batches every cached run at once, on every core).
echo "== --numerics strict =="
timed strict generate 50 "$genrepro" generate --model "$model" --prompt "the river bank was" --max-new-tokens 50 \
  --temperature 1.0 --top-p 0.9 --seed 1 --numerics strict
loop=$(sed -n 's/^speed: \([0-9.]*\) .*/\1/p' "$work/generate.err")
/usr/bin/python3 -c "print(f'  generate, the loop alone: $loop tok/s, {$loop/$python_tps:.2f}x the Python loop')"
printf '%s\t%s\t%s\t\t\n' strict generate_loop "$loop" >> "$figures"
grep '^path:' "$work/generate.err" | sed 's/^/  /' || true
timed strict grid_strict 3000 "$genrepro" run "$grid" --model "$model" --out "$work/strict.json" --numerics strict
"$genrepro" run "$grid" --model "$model" --out "$work/s1.json" --numerics strict --threads 1 --batch 1 2>/dev/null >/dev/null
strict_same=$(same "$work/strict.json" "$work/s1.json")
echo "  strict default vs --batch 1 --threads 1 (60 runs):  $strict_same"
printf '%s\t%s\t%s\n' strict grid_strict_same "$strict_same" >> "$figures"
/usr/bin/python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['numerics']; print(f\"  strict: {n['kernel_revision']}, vector code {n['execution']['kernel_isa']}, batch {n['execution']['batch']}\")" "$work/strict.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# One table of every figure, as docs/numerics.md quotes it.
/usr/bin/python3 - "$figures" "$python_tps" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
base = float(sys.argv[2])
fig = {(r[0], r[1]): r for r in rows}
targets = {"generate_loop": 1.1, "grid_reference": 3.0, "grid_tiled": 7.0}
names = {"generate_loop": "generate, the loop alone", "grid_reference": "grid60, reference (wall, loading included)",
         "grid_tiled": "grid60, tiled (wall, loading included)"}
print()
print(f"| figure (Python loop {base:.1f} tok/s) | portable tok/s | ratio | native tok/s | ratio | target |")
print("|---|---|---|---|---|---|")
for key, target in targets.items():
    cells = []
    for setting in ("portable", "native"):
        r = fig.get((setting, key))
        if not r:
            cells += ["–", "–"]
            continue
        tps = float(r[2])
        same = fig.get((setting, key + "_same"))
        mark = "" if not same else (" (identical to --batch 1)" if same[2] == "identical" else " (DIFFERENT from --batch 1)")
        cells += [f"{tps:.1f}", f"{tps / base:.2f}x{mark}"]
    print(f"| {names[key]} | " + " | ".join(cells) + f" | >= {target}x |")
print()
print(f"| figure, --numerics strict (Python loop {base:.1f} tok/s) | tok/s | ratio | target |")
print("|---|---|---|---|")
for key, name, target in (("generate_loop", "generate, the loop alone", 2.0),
                          ("grid_strict", "grid60 (wall, loading included)", 20.0)):
    r = fig.get(("strict", key))
    if not r:
        continue
    tps = float(r[2])
    same = fig.get(("strict", key + "_same"))
    mark = "" if not same else (" (identical to --batch 1 --threads 1)" if same[2] == "identical" else " (DIFFERENT from --batch 1)")
    print(f"| {name} | {tps:.1f} | {tps / base:.2f}x{mark} | >= {target}x |")
PY

# The strict figures as shares of this machine: the grid's float32 work against the FMA peak on
# every CPU, and generate's weight bytes per token against the read bandwidth on every CPU.
/usr/bin/python3 - "$figures" "$work/machine.json" "$model/config.json" "$work/strict.json" <<'PY'
import json, sys
rows = {(r[0], r[1]): r for r in (line.rstrip("\n").split("\t") for line in open(sys.argv[1]))}
bench = {b["name"].split("/min_time")[0]: b for b in json.load(open(sys.argv[2]))["benchmarks"]}
cfg = json.load(open(sys.argv[3]))
C, L, V = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"]
peak = max(b["FLOPS"] for n, b in bench.items() if n.startswith("peak/fma"))
bandwidth = max(b["bytes_per_s"] for n, b in bench.items() if n.startswith("bandwidth/read"))
linear_macs = L * 12 * C * C  # c_attn 3C^2, attn c_proj C^2, c_fc 4C^2, mlp c_proj 4C^2 per layer

def flops(positions, keys, head):
    """Multiply-adds x 2 of feeding `positions` tokens whose last attends to `keys` keys."""
    attention = sum(2 * L * (keys - positions + 1 + i) * C for i in range(positions))  # q.k and p.v
    return 2 * (positions * linear_macs + attention + (V * C if head else 0))

evidence = json.load(open(sys.argv[4]))
total = 0
prompts = set()
for run in evidence["runs"]:
    prompt = len(run["prompt_ids"])
    if tuple(run["prompt_ids"]) not in prompts:  # one prefill per prompt, shared by its runs
        prompts.add(tuple(run["prompt_ids"]))
        total += flops(prompt, prompt, True)
    for i in range(1, len(run["output_ids"])):  # the first new token comes from the prefill's logits
        total += flops(1, prompt + i, True)
grid = rows.get(("strict", "grid_strict"))
if grid:
    seconds = float(grid[3])
    print(f"grid60 strict: {total / 1e9:.0f} GFLOP in {seconds:.2f} s (loading included) = {total / seconds / 1e9:.1f} GFLOP/s, "
          f"{100 * total / seconds / peak:.0f} % of the measured FMA peak ({peak / 1e9:.1f} GFLOP/s on every CPU)")
weight_bytes = 4 * (linear_macs + V * C + L * 9 * C)  # every weight and bias once per token (float32)
loop = rows.get(("strict", "generate_loop"))
if loop:
    tps = float(loop[2])
    bound = bandwidth / weight_bytes
    print(f"generate strict: {tps:.1f} tok/s against a read-bandwidth bound of {bound:.1f} tok/s "
          f"({weight_bytes / 2**20:.0f} MiB of weights a token at {bandwidth / 2**30:.1f} GiB/s) = {100 * tps / bound:.0f} %")
PY
