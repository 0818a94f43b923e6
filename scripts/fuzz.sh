#!/usr/bin/env bash
# Fuzzes the readers that take files from elsewhere with libFuzzer, ASan and UBSan:
#   safetensors_fuzz  model_config_fuzz  experiment_fuzz  tokenizer_fuzz  vocab_fast_path_fuzz  evidence_fuzz
#   checkpoint_fuzz
# Builds fuzz/ with clang into ${GENREPRO_FUZZ_BUILD_DIR:-build-fuzz}, seeds each corpus from the
# project's own files, and runs every target for GENREPRO_FUZZ_SECONDS (default 60; a reader
# counts as clean after 600). Prints executions and findings per target; a finding (crash, leak,
# timeout, OOM) is saved under build-fuzz/findings/<target>/ and makes the script exit 1.
#   bash scripts/fuzz.sh [TARGET...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GENREPRO_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${GENREPRO_FUZZ_SECONDS:-60}"
bash "$root/scripts/setup.sh"
command -v clang++ >/dev/null || { echo "fuzz: installing clang" >&2; apt-get install -y -qq clang >&2; }
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$build" -j "$(nproc)" >&2

seed() {  # seed TARGET FILES...: copy the files into the target's corpus
  local dir="$build/corpus/$1"; shift
  mkdir -p "$dir"
  local f
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"; done
  return 0
}
seed experiment_fuzz "$root"/experiments/article/*.json "$root"/tests/cli/data/run/*.json
seed evidence_fuzz "$root"/tests/cli/data/diff/*.json "$root"/golden/fixture/greedy.json
seed checkpoint_fuzz "$root"/tests/cli/data/checkpoint/*.checkpoint

/usr/bin/python3 - "$build" "$root" <<'PY'
import json, os, struct, sys
build, root = sys.argv[1], sys.argv[2]
def put(target, name, data):
    os.makedirs(f"{build}/corpus/{target}", exist_ok=True)
    open(f"{build}/corpus/{target}/{name}", "wb").write(data)
# safetensors: small well-formed files of each dtype, and the fixture's real header.
for dtype, size in (("F32", 4), ("F16", 2), ("BF16", 2)):
    header = json.dumps({"a": {"dtype": dtype, "shape": [2, 3], "data_offsets": [0, 6 * size]},
                         "__metadata__": {"format": "pt"}}).encode()
    put("safetensors_fuzz", f"small-{dtype}", struct.pack("<Q", len(header)) + header + bytes(6 * size))
tiny = f"{build}/../build/fixtures/tiny/model.safetensors"
if os.path.exists(tiny):
    with open(tiny, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        put("safetensors_fuzz", "tiny-header", struct.pack("<Q", n) + f.read(n))
# config.json: the fixture's, as GPT-2's layout has it.
config = {"activation_function": "gelu_new", "eos_token_id": 50256, "layer_norm_epsilon": 1e-5,
          "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}
put("model_config_fuzz", "gpt2-config.json", json.dumps(config).encode())
# tokenizer: the reference corpus's strings (even first byte: encode) and their ids (odd: decode).
with open(f"{root}/tests/reference/tokenizer/corpus.jsonl") as f:
    for i, line in enumerate(f):
        if i >= 300: break
        row = json.loads(line)
        put("tokenizer_fuzz", f"text-{i}", b"\x00" + row["text"].encode("utf-8", "surrogatepass"))
        if i < 50:
            put("tokenizer_fuzz", f"ids-{i}", b"\x01" + b"".join(struct.pack("<i", x) for x in row["ids"]))
# vocab fast path: small vocabs as vocab.json (raw) and encoder.json (\u escapes) write them.
put("vocab_fast_path_fuzz", "raw", json.dumps({"a": 0, "b": 1, "ab": 2, "\u0120": 3}, ensure_ascii=False).encode())
put("vocab_fast_path_fuzz", "escaped", json.dumps({"a": 0, "\u0120t": 1, "\u0100": 2}).encode())
PY

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors_fuzz model_config_fuzz experiment_fuzz tokenizer_fuzz vocab_fast_path_fuzz evidence_fuzz checkpoint_fuzz)
status=0
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
for t in "${targets[@]}"; do
  [ -x "$build/$t" ] || { echo "$t: not built" >&2; status=1; continue; }
  mkdir -p "$build/corpus/$t" "$build/findings/$t"
  log="$build/$t.log"
  set +e
  "$build/$t" "$build/corpus/$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=3072 -timeout=10 \
    -artifact_prefix="$build/findings/$t/" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  findings=$(find "$build/findings/$t" -type f | wc -l)
  echo "$t: ${seconds}s, ${execs} executions, ${findings} finding(s), libFuzzer exit ${rc}"
  [ "$rc" -eq 0 ] && [ "$findings" -eq 0 ] || status=1
done
exit $status
