#!/usr/bin/python3
"""An independent PyTorch transcription of Hugging Face's eager GPT2LMHeadModel forward pass.

genrepro's C++ forward (harness/engine/gpt2_model.cpp) is checked against this script. It does not
use `transformers` (not installed) nor genrepro's own readers: config.json is read with `json`,
model.safetensors by hand (8-byte little-endian header length, JSON header, raw little-endian
data), and every op below mirrors transformers/models/gpt2/modeling_gpt2.py with
attn_implementation="eager", batch size 1, in float32 on CPU, under torch.no_grad().

Usage:
  gpt2_reference.py --model DIR --ids 1169,7850,3331,373 --logits-out FILE
      writes {"ids": [...], "logits": [[V floats] per position]} (floats round-trip exactly)
  gpt2_reference.py --model DIR --ids 1169,7850,3331,373 --greedy 30
      the article's greedy loop (use_cache=False, argmax of the last position, append);
      prints the new token ids as a JSON array on stdout (with --logits-out too, the file also
      holds them as "greedy")
Other scripts import load_model / forward_logits / greedy from here.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

import torch_threads

SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None}


def read_safetensors(path):
    """name -> float32 torch tensor. Upcasts F16 and BF16 as HF's loader would to float32."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    data = memoryview(blob)[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[begin:end]
        dtype = info["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            # bfloat16 is the top half of a float32.
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{path}: tensor {name}: unsupported dtype {dtype}")
        tensors[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return tensors


class Gpt2Weights:
    def __init__(self, model_dir):
        with open(f"{model_dir}/config.json") as f:
            self.config = json.load(f)
        raw = read_safetensors(f"{model_dir}/model.safetensors")
        # Checkpoints name tensors "wte.weight" or "transformer.wte.weight"; HF accepts both.
        self.t = {}
        for name, value in raw.items():
            key = name[len("transformer."):] if name.startswith("transformer.") else name
            self.t[key] = value
        c = self.config
        self.n_layer = c["n_layer"]
        self.n_head = c["n_head"]
        self.n_embd = c["n_embd"]
        self.n_positions = c["n_positions"]
        self.eps = c.get("layer_norm_epsilon", 1e-5)
        self.activation = c.get("activation_function", "gelu_new")
        self.scale_attn_weights = c.get("scale_attn_weights", True)
        # GPT2Attention registers `bias` as a [1, 1, n_positions, n_positions] lower-triangular
        # bool buffer (the checkpoint's h.N.attn.bias is that same buffer; HF ignores the stored copy).
        self.causal = torch.tril(torch.ones((self.n_positions, self.n_positions), dtype=torch.bool)).view(
            1, 1, self.n_positions, self.n_positions)


def conv1d(x, weight, bias):
    """transformers.pytorch_utils.Conv1D: weight is [nx, nf] (in, out)."""
    size_out = x.size()[:-1] + (weight.size(-1),)
    x = torch.addmm(bias, x.view(-1, x.size(-1)), weight)
    return x.view(size_out)


def new_gelu(x):
    """transformers.activations.NewGELUActivation (gelu_new)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def activation(w, x):
    if w.activation == "gelu_new":
        return new_gelu(x)
    if w.activation == "gelu":
        return torch.nn.functional.gelu(x)
    raise SystemExit(f"unsupported activation_function {w.activation}")


def attention(w, i, hidden_states):
    p = f"h.{i}.attn."
    t = w.t
    head_dim = w.n_embd // w.n_head
    # GPT2Attention.forward: query, key, value = c_attn(x).split(split_size, dim=2)
    query, key, value = conv1d(hidden_states, t[p + "c_attn.weight"], t[p + "c_attn.bias"]).split(w.n_embd, dim=2)
    # _split_heads / view(shape).transpose(1, 2): [1, T, C] -> [1, n_head, T, head_dim]
    shape = hidden_states.shape[:-1] + (-1, head_dim)
    query = query.view(shape).transpose(1, 2)
    key = key.view(shape).transpose(1, 2)
    value = value.view(shape).transpose(1, 2)

    # eager_attention_forward
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    if w.scale_attn_weights:
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
    query_length, key_length = query.size(-2), key.size(-2)
    causal_mask = w.causal[:, :, key_length - query_length:key_length, :key_length]
    mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
    attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
    attn_weights = attn_weights.type(value.dtype)
    attn_output = torch.matmul(attn_weights, value)

    # _merge_heads: [1, n_head, T, head_dim] -> [1, T, C]
    attn_output = attn_output.transpose(1, 2)
    attn_output = attn_output.reshape(*attn_output.shape[:-2], -1).contiguous()
    return conv1d(attn_output, t[p + "c_proj.weight"], t[p + "c_proj.bias"])


def block(w, i, hidden_states):
    t = w.t
    p = f"h.{i}."
    ln = torch.nn.functional.layer_norm
    residual = hidden_states
    hidden_states = ln(hidden_states, (w.n_embd,), t[p + "ln_1.weight"], t[p + "ln_1.bias"], w.eps)
    attn_output = attention(w, i, hidden_states)
    hidden_states = attn_output + residual
    residual = hidden_states
    hidden_states = ln(hidden_states, (w.n_embd,), t[p + "ln_2.weight"], t[p + "ln_2.bias"], w.eps)
    # GPT2MLP: c_fc -> act -> c_proj
    ff = conv1d(hidden_states, t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"])
    ff = activation(w, ff)
    ff = conv1d(ff, t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"])
    return residual + ff


def forward_logits(w, ids, logits_to_keep=0):
    """GPT2LMHeadModel(ids, use_cache=False, logits_to_keep=logits_to_keep).logits[0]: [T, V] float32
    for 0 (forward's default, every position), else [logits_to_keep, V], the last positions only.
    generate() passes logits_to_keep=1 (GenerationMixin.generate: "to avoid computing the whole
    logit matrix"), so a framework's loop computes the head on the last position alone."""
    with torch.no_grad():
        input_ids = torch.tensor([ids], dtype=torch.long)
        position_ids = torch.arange(0, input_ids.size(-1), dtype=torch.long).unsqueeze(0)
        inputs_embeds = torch.nn.functional.embedding(input_ids, w.t["wte.weight"])
        position_embeds = torch.nn.functional.embedding(position_ids, w.t["wpe.weight"])
        hidden_states = inputs_embeds + position_embeds
        for i in range(w.n_layer):
            hidden_states = block(w, i, hidden_states)
        hidden_states = torch.nn.functional.layer_norm(
            hidden_states, (w.n_embd,), w.t["ln_f.weight"], w.t["ln_f.bias"], w.eps)
        # lm_head: Linear(n_embd, vocab, bias=False) tied to wte, on hidden_states[:, slice_indices, :]
        slice_indices = slice(-logits_to_keep, None)
        logits = torch.nn.functional.linear(hidden_states[:, slice_indices, :], w.t["wte.weight"])
        return logits[0]


def greedy(w, ids, n_new):
    """The article's loop: whole sequence each step (use_cache=False), argmax of the last position."""
    ids = list(ids)
    new = []
    for _ in range(n_new):
        if len(ids) >= w.n_positions:
            break
        next_id = int(torch.argmax(forward_logits(w, ids)[-1]))
        ids.append(next_id)
        new.append(next_id)
    return new


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="directory with config.json and model.safetensors")
    ap.add_argument("--ids", required=True, help="comma-separated token ids, e.g. 1169,7850,3331,373")
    ap.add_argument("--logits-out", help="write the logits of every position as JSON to this file")
    ap.add_argument("--greedy", type=int, metavar="N", help="run N greedy steps; print the new ids as JSON")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    args = ap.parse_args(argv)
    torch_threads.use_threads(torch, args.threads)
    ids = [int(x) for x in args.ids.split(",") if x.strip()]
    w = Gpt2Weights(args.model)
    new_ids = greedy(w, ids, args.greedy) if args.greedy is not None else None
    if args.logits_out:
        logits = forward_logits(w, ids)
        doc = {"ids": ids, "logits": logits.double().tolist()}
        if new_ids is not None:
            doc["greedy"] = new_ids  # one run serves both (genrepro_engine_tests' fixture)
        os.makedirs(os.path.dirname(os.path.abspath(args.logits_out)), exist_ok=True)
        with open(args.logits_out, "w") as f:
            # float32 -> Python float (double) is exact, and repr round-trips.
            json.dump(doc, f)
    if new_ids is not None:
        print(json.dumps(new_ids))
    if not args.logits_out and args.greedy is None:
        ap.error("nothing to do: give --logits-out FILE and/or --greedy N")


if __name__ == "__main__":
    main(sys.argv[1:])
