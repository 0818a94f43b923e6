#!/usr/bin/python3
"""The peer every speed figure is measured against: the article's generation loop in plain Python.

Hugging Face's eager GPT-2 math (tests/reference/gpt2_reference.py, which reads the safetensors by
hand) with a KV cache (past keys/values concatenated each step, as HF's DynamicCache does), the
article's sampler chain (temperature, then top-p: sort, softmax, cumsum, shift, mask) and
torch.multinomial with a seeded generator. Runs on Debian's python3-torch at its default thread
settings, which is what a researcher gets when they write the loop themselves: torch's intra-op
pool at torch's own default (never pinned here unless --threads says so) and the GEMMs on
OpenBLAS's own pthread pool, which is every usable core whatever torch's setting (Debian's torch
links the pthread OpenBLAS; torch.set_num_threads does not reach it). The JSON records both pools
and the OpenBLAS kernel, since they decide the baseline's speed (docs/numerics.md, "Speed").

Usage:
  bench/python_loop.py --model DIR [--runs 60] [--new-tokens 50] [--threads N] [--json]
Prints tokens/s over all runs (one after another: the single-stream loop). The grid is
experiments/bench/grid60.json's: one prompt ("the river bank was"), T in {0.7, 1.0, 1.3} x
seeds 1..20, top-p 0.9.
"""
import argparse
import ctypes
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import gpt2_reference as ref  # noqa: E402

PROMPT_IDS = [1169, 7850, 3331, 373]  # "the river bank was"


def cached_forward(w, new_ids, past, start):
    """Logits [N, V] for new_ids at positions start..; past: per layer (k, v) [1, H, T, D] or None."""
    t = w.t
    input_ids = torch.tensor([new_ids], dtype=torch.long)
    position_ids = torch.arange(start, start + len(new_ids), dtype=torch.long).unsqueeze(0)
    h = torch.nn.functional.embedding(input_ids, t["wte.weight"]) + torch.nn.functional.embedding(
        position_ids, t["wpe.weight"])
    ln = torch.nn.functional.layer_norm
    head_dim = w.n_embd // w.n_head
    for i in range(w.n_layer):
        p = f"h.{i}."
        a = ln(h, (w.n_embd,), t[p + "ln_1.weight"], t[p + "ln_1.bias"], w.eps)
        q, k, v = ref.conv1d(a, t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"]).split(w.n_embd, dim=2)
        shape = a.shape[:-1] + (-1, head_dim)
        q, k, v = (x.view(shape).transpose(1, 2) for x in (q, k, v))
        if past[i] is not None:
            k = torch.cat([past[i][0], k], dim=-2)
            v = torch.cat([past[i][1], v], dim=-2)
        past[i] = (k, v)
        s = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=torch.float32)
        ql, kl = q.size(-2), k.size(-2)
        s = torch.where(w.causal[:, :, kl - ql:kl, :kl], s, torch.full([], torch.finfo(s.dtype).min))
        o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2)
        o = o.reshape(*o.shape[:-2], -1).contiguous()
        h = h + ref.conv1d(o, t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"])
        m = ln(h, (w.n_embd,), t[p + "ln_2.weight"], t[p + "ln_2.bias"], w.eps)
        ff = ref.activation(w, ref.conv1d(m, t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"]))
        h = h + ref.conv1d(ff, t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"])
    h = ln(h, (w.n_embd,), t["ln_f.weight"], t["ln_f.bias"], w.eps)
    return torch.nn.functional.linear(h, t["wte.weight"])[0]


def top_p_filter(logits, p):
    sorted_logits, indices = torch.sort(logits, descending=True)
    cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    remove = cumulative >= p
    remove[1:] = remove[:-1].clone()
    remove[0] = False
    filtered = logits.clone()
    filtered[indices[remove]] = -float("inf")
    return filtered


def generate(w, temperature, top_p, seed, new_tokens):
    rng = torch.Generator().manual_seed(seed)
    past = [None] * w.n_layer
    ids = list(PROMPT_IDS)
    logits = cached_forward(w, ids, past, 0)[-1]
    for _ in range(new_tokens):
        probs = torch.softmax(top_p_filter(logits / temperature, top_p), dim=0)
        next_id = int(torch.multinomial(probs, num_samples=1, generator=rng))
        ids.append(next_id)
        logits = cached_forward(w, [next_id], past, len(ids) - 1)[-1]
    return ids


def openblas_state():
    """(threads, core) of the OpenBLAS this process mapped (torch's), or (None, None)."""
    with open("/proc/self/maps") as maps:
        paths = sorted({fields[-1] for fields in map(str.split, maps) if len(fields) == 6 and "openblas" in fields[-1]})
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # the mapped instance: dlopen of a loaded path returns it
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return int(lib.openblas_get_num_threads()), lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return None, None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--runs", type=int, default=60, help="runs of the grid to time (default 60)")
    ap.add_argument("--new-tokens", type=int, default=50)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's own default)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    w = ref.Gpt2Weights(args.model)
    grid = [(t, s) for t in (0.7, 1.0, 1.3) for s in range(1, 21)][: args.runs]
    tokens = 0
    with torch.no_grad():
        generate(w, 1.0, 0.9, 0, 2)  # warm-up: first-call allocations are not the loop's cost
        start = time.perf_counter()
        for temperature, seed in grid:
            tokens += len(generate(w, temperature, 0.9, seed, args.new_tokens)) - len(PROMPT_IDS)
        seconds = time.perf_counter() - start
    blas_threads, blas_core = openblas_state()
    result = {"runs": len(grid), "tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds,
              "torch_threads": torch.get_num_threads(), "torch_threads_asked": args.threads or "default",
              "openblas_threads": blas_threads, "openblas_core": blas_core, "torch": torch.__version__}
    print(json.dumps(result) if args.json else
          f"python loop: {tokens} tokens in {seconds:.2f} s = {tokens / seconds:.1f} tok/s "
          f"(torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
          f"OpenBLAS {blas_core} on {blas_threads} threads)")


if __name__ == "__main__":
    main(sys.argv[1:])
