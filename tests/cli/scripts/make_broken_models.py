#!/usr/bin/env python3
"""Writes one broken copy of a model directory per failure case, for the CLI's model-error tests.

Usage: make_broken_models.py FIXTURE_DIR OUT_DIR

Each case starts from FIXTURE_DIR (a complete Hugging Face layout: config.json,
model.safetensors, vocab.json, merges.txt, e.g. the tiny fixture) and breaks exactly one thing,
so the error genrepro gives can only come from that one thing. The case names are the names of
the directories under OUT_DIR and of the test cases in tests/cli_inprocess/model_errors_test.cpp
(every case gives exit 2 except vocab_padded_50304, a padded vocabulary that works).

Unchanged files are hard links to the fixture's (13 MB of weights per case would add up); a
broken file is always written afresh under a new name and renamed into place, never modified
through a link, so the fixture itself is never touched. Standard library only.
"""
import json
import os
import shutil
import struct
import sys

HEADER_LENGTH_BYTES = 8  # the little-endian u64 that starts every safetensors file
FILES = ("config.json", "model.safetensors", "vocab.json", "merges.txt")


# ---- safetensors, just enough to rewrite a header ----

def read_safetensors(path):
    """(header dict in file order, data section bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:HEADER_LENGTH_BYTES])
    header = json.loads(raw[HEADER_LENGTH_BYTES:HEADER_LENGTH_BYTES + n])
    return header, raw[HEADER_LENGTH_BYTES + n:]


def safetensors_bytes(header, data):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(HEADER_LENGTH_BYTES + len(text)) % 8)  # keep the data section 8-aligned
    return struct.pack("<Q", len(text)) + text + data


def tensors_by_offset(header):
    return sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])


# ---- writing a case ----

def write_file(path, content):
    """Replaces `path` (possibly a hard link to the fixture) by a new file holding `content`."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(content)
    os.replace(tmp, path)


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def copy_fixture(fixture, case_dir):
    remove(case_dir)
    os.makedirs(case_dir)
    for name in FILES:
        src, dst = os.path.join(fixture, name), os.path.join(case_dir, name)
        try:
            os.link(src, dst)
        except OSError:  # another file system, or links not allowed: copy instead
            shutil.copyfile(src, dst)


def edit_header(case_dir, change):
    """Applies change(header, data) -> (header, data) to the case's model.safetensors."""
    path = os.path.join(case_dir, "model.safetensors")
    header, data = read_safetensors(path)
    header, data = change(header, data)
    write_file(path, safetensors_bytes(header, data))


def edit_config(case_dir, change):
    path = os.path.join(case_dir, "config.json")
    with open(path) as f:
        config = json.load(f)
    change(config)
    write_file(path, (json.dumps(config, indent=2) + "\n").encode())


def weights(case_dir):
    return os.path.join(case_dir, "model.safetensors")


# ---- the cases: each breaks exactly one thing ----

def header_length_past_end(d):
    with open(weights(d), "rb") as f:
        raw = f.read()
    write_file(weights(d), struct.pack("<Q", len(raw)) + raw[HEADER_LENGTH_BYTES:])


def header_length_huge(d):
    with open(weights(d), "rb") as f:
        raw = f.read()
    write_file(weights(d), struct.pack("<Q", 1 << 63) + raw[HEADER_LENGTH_BYTES:])


def header_not_json(d):
    with open(weights(d), "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:HEADER_LENGTH_BYTES])
    garbage = b"this is not a JSON header"
    garbage = (garbage * (n // len(garbage) + 1))[:n]
    write_file(weights(d), raw[:HEADER_LENGTH_BYTES] + garbage + raw[HEADER_LENGTH_BYTES + n:])


def header_not_object(d):
    with open(weights(d), "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:HEADER_LENGTH_BYTES])
    array = b"[1, 2, 3]".ljust(n)
    write_file(weights(d), raw[:HEADER_LENGTH_BYTES] + array + raw[HEADER_LENGTH_BYTES + n:])


def offsets_past_end(d):
    def change(header, data):
        last = tensors_by_offset(header)[-1]
        begin, end = header[last]["data_offsets"]
        header[last]["data_offsets"] = [len(data), len(data) + (end - begin)]  # same size, moved out
        return header, data
    edit_header(d, change)


def offsets_overlap(d):
    def change(header, data):
        # ln_1.weight and ln_1.bias are both [n_embd]: the bias now starts inside the weight.
        w = header["h.0.ln_1.weight"]["data_offsets"]
        size = w[1] - w[0]
        header["h.0.ln_1.bias"]["data_offsets"] = [w[0] + 4, w[0] + 4 + size]
        return header, data
    edit_header(d, change)


def dtype(name):
    def case(d):
        def change(header, data):
            header["h.0.attn.c_proj.bias"]["dtype"] = name
            return header, data
        edit_header(d, change)
    return case


def tensor_missing(d):
    def change(header, data):
        gone = "h.1.mlp.c_fc.bias"
        new_header, chunks, offset = {}, [], 0
        if "__metadata__" in header:
            new_header["__metadata__"] = header["__metadata__"]
        for name in tensors_by_offset(header):
            if name == gone:
                continue
            begin, end = header[name]["data_offsets"]
            entry = dict(header[name])
            entry["data_offsets"] = [offset, offset + end - begin]
            new_header[name] = entry
            chunks.append(data[begin:end])
            offset += end - begin
        return new_header, b"".join(chunks)
    edit_header(d, change)


def wte_shape_vs_config(d):
    edit_config(d, lambda c: c.update(n_embd=96))  # still divisible by n_head 4; wte is [V, 64]


def wpe_shape_swapped(d):
    def change(header, data):
        rows, cols = header["wpe.weight"]["shape"]
        header["wpe.weight"]["shape"] = [cols, rows]  # same byte count, contradicts n_positions
        return header, data
    edit_header(d, change)


def heads_do_not_divide(d):
    edit_config(d, lambda c: c.update(n_head=5))  # n_embd 64


def config_missing(d):
    os.remove(os.path.join(d, "config.json"))


def config_not_json(d):
    write_file(os.path.join(d, "config.json"), b'{"n_embd": 64, "n_layer": 2,\n')


def config_n_layer_string(d):
    edit_config(d, lambda c: c.update(n_layer="two"))


def config_directory(d):
    os.remove(os.path.join(d, "config.json"))
    os.mkdir(os.path.join(d, "config.json"))


def vocab_missing(d):
    os.remove(os.path.join(d, "vocab.json"))


def merges_missing(d):
    os.remove(os.path.join(d, "merges.txt"))


def vocab_garbage(d):
    write_file(os.path.join(d, "vocab.json"), b"\x89PNG this is not a vocabulary\n")


def merges_garbage(d):
    write_file(os.path.join(d, "merges.txt"), b"#version: 0.2\nthis line has three tokens\n")


def weights_truncated(d):
    with open(weights(d), "rb") as f:
        raw = f.read()
    write_file(weights(d), raw[:len(raw) // 2])


def weights_empty(d):
    write_file(weights(d), b"")


def weights_directory(d):
    os.remove(weights(d))
    os.mkdir(weights(d))


def weights_missing(d):
    os.remove(weights(d))


def weights_nan(d):
    # Every load check passes (shapes, dtypes and offsets are right; the values are not looked at),
    # so the failure comes at the first step: the logits are NaN, which every mode (greedy, first
    # prediction, sampled) stops on with one line naming the step (exit 2).
    def change(header, data):
        begin, end = header["ln_f.weight"]["data_offsets"]
        if header["ln_f.weight"]["dtype"] != "F32":
            raise SystemExit("weights_nan: the fixture's ln_f.weight is not F32")
        nan = struct.pack("<f", float("nan"))
        return header, data[:begin] + nan * ((end - begin) // len(nan)) + data[end:]
    edit_header(d, change)


def resized_wte(rows, extra_row):
    """A change(header, data) giving wte.weight `rows` rows: cut, or padded with extra_row(i, row_bytes)."""
    def change(header, data):
        wte = header["wte.weight"]
        if wte["dtype"] != "F32":
            raise SystemExit("resized_wte: the fixture's wte.weight is not F32")
        old_rows, cols = wte["shape"]
        row_bytes = cols * 4
        new_header, chunks, offset = {}, [], 0
        if "__metadata__" in header:
            new_header["__metadata__"] = header["__metadata__"]
        for name in tensors_by_offset(header):
            begin, end = header[name]["data_offsets"]
            chunk = data[begin:end]
            entry = dict(header[name])
            if name == "wte.weight":
                chunk = chunk[:rows * row_bytes] + b"".join(
                    extra_row(i, chunk[(i % old_rows) * row_bytes:(i % old_rows + 1) * row_bytes])
                    for i in range(max(0, rows - old_rows)))
                entry["shape"] = [rows, cols]
            entry["data_offsets"] = [offset, offset + len(chunk)]
            new_header[name] = entry
            chunks.append(chunk)
            offset += len(chunk)
        return new_header, b"".join(chunks)
    return change


def vocab_1000(d):
    # Weights and config agree (vocab_size 1000, wte [1000, 64], ids in range), but the tokenizer
    # has 50257 ids: the model and the tokenizer are from different models.
    edit_config(d, lambda c: c.update(vocab_size=1000, bos_token_id=999, eos_token_id=999))
    edit_header(d, resized_wte(1000, None))


def eos_null_vocab_1000(d):
    # No eos_token_id: GPT-2's 50256 would apply, outside this config's vocabulary.
    edit_config(d, lambda c: c.update(vocab_size=1000, bos_token_id=999, eos_token_id=None))
    edit_header(d, resized_wte(1000, None))


def pad_token_id_outside(d):
    edit_config(d, lambda c: c.update(pad_token_id=50257))


def vocab_padded_50304(d):
    # nanoGPT's padding: 47 rows past the tokenizer's 50257 ids. Not an error: the rows are
    # 40 x copies of real rows, so a loop that did not cut them would pick them or at least
    # change every probability (the test compares with the unpadded fixture's evidence).
    def scaled(i, row):
        values = struct.unpack(f"<{len(row) // 4}f", row)
        return struct.pack(f"<{len(values)}f", *(40.0 * v for v in values))
    edit_config(d, lambda c: c.update(vocab_size=50304))
    edit_header(d, resized_wte(50304, scaled))


def pytorch_bin_only(d):
    # A checkpoint downloaded in PyTorch's pickle format only: the bytes are not read, only named.
    os.remove(weights(d))
    write_file(os.path.join(d, "pytorch_model.bin"), b"PK\x03\x04 not read by genrepro\n")


CASES = {
    "header_length_past_end": header_length_past_end,
    "header_length_huge": header_length_huge,
    "header_not_json": header_not_json,
    "header_not_object": header_not_object,
    "offsets_past_end": offsets_past_end,
    "offsets_overlap": offsets_overlap,
    "dtype_i4": dtype("I4"),
    "dtype_f64": dtype("F64"),
    "tensor_missing": tensor_missing,
    "wte_shape_vs_config": wte_shape_vs_config,
    "wpe_shape_swapped": wpe_shape_swapped,
    "heads_do_not_divide": heads_do_not_divide,
    "config_missing": config_missing,
    "config_not_json": config_not_json,
    "config_n_layer_string": config_n_layer_string,
    "config_directory": config_directory,
    "vocab_missing": vocab_missing,
    "merges_missing": merges_missing,
    "vocab_garbage": vocab_garbage,
    "merges_garbage": merges_garbage,
    "weights_truncated": weights_truncated,
    "weights_empty": weights_empty,
    "weights_directory": weights_directory,
    "weights_missing": weights_missing,
    "pytorch_bin_only": pytorch_bin_only,
    "weights_nan": weights_nan,
    "vocab_1000": vocab_1000,
    "eos_null_vocab_1000": eos_null_vocab_1000,
    "pad_token_id_outside": pad_token_id_outside,
    "vocab_padded_50304": vocab_padded_50304,
}


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} FIXTURE_DIR OUT_DIR", file=sys.stderr)
        return 2
    fixture, out = argv[1], argv[2]
    missing = [n for n in FILES if not os.path.isfile(os.path.join(fixture, n))]
    if missing:
        print(f"{fixture}: not a complete model directory (missing {', '.join(missing)})", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for name, break_one_thing in CASES.items():
        case_dir = os.path.join(out, name)
        copy_fixture(fixture, case_dir)
        break_one_thing(case_dir)
    print(f"wrote {len(CASES)} broken models to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
