#!/usr/bin/python3
"""The article's own sampling code, run with PyTorch, as the reference for genrepro's samplers.

The functions below are the article's code as printed ("The loop, sampling, and stopping"):
temperature as `logits / T`, `top_p_filter` line for line, `torch.softmax`, and
`torch.multinomial(probs, num_samples=1, generator=rng)` with
`rng = torch.Generator(device="cpu").manual_seed(seed)` made once per run.

Usage:
  article_sampling.py --fixed-logits [--fixed-logits-out FILE]
      prints (writes to FILE) JSON {"logits": [[...], ...], "cases": [{"temperature", "top_p", "seed", "picks"}]}:
      fixed logit vectors (no model needed) and, for each case, the tokens the article's code
      draws from one generator visiting every vector in order, twice. The C++ test
      (tests/unit/engine/article_sampling_reference_test.cpp) draws with the same logits and seeds.
  article_sampling.py --model DIR --prompt-ids 1169,7850,3331,373 --temperature 1 --top-p 0.9
                      --seed 43 --max-new-tokens 50
      the article's sampled loop with top-p and the EOS check, on the model in DIR (forward pass:
      tests/reference/gpt2_reference.py); prints the new ids as a JSON array.
  article_sampling.py --model DIR --write-loop-ids FILE
      the Python loop above for T = 1, p = 0.9 and seeds 41, 42, 43 (the article's three runs),
      written as JSON {"prompt", "temperature", "top_p", "max_new_tokens", "runs": [{"seed",
      "ids"}], "greedy": {"ids"}} (greedy: the article's argmax loop, gpt2_reference.greedy). tests/cli_inprocess/article_sampled_loop_test.cpp runs `genrepro generate --ids
      --no-cache` (--rng torch and --rng portable) with the same settings and fails unless every
      token is the same (ctest: reference.article_sampled_loop). With --fixed-logits-out FILE
      too, the same process also writes the fixed-logits JSON above to FILE (ctest:
      reference.article_sampled_loop.python, for genrepro_engine_tests' shards: one Python and
      torch start, about a second of CPU, fewer).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_reference  # noqa: E402
import torch_threads  # noqa: E402


# ---- the article's code ----

def top_p_filter(logits, p):
    sorted_logits, indices = torch.sort(logits, descending=True)

    # Running probability total, from most to least likely.
    cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    remove = cumulative >= p

    # Shift the mask right so the token that reaches p stays in.
    # clone() avoids reading and writing overlapping tensor slices.
    remove[1:] = remove[:-1].clone()
    remove[0] = False  # Always keep the most likely token.

    filtered = logits.clone()
    # indices maps the sorted mask back to the original token positions.
    # Negative infinity becomes zero probability after softmax.
    filtered[indices[remove]] = -float("inf")
    return filtered


def article_probs(logits, T, p):
    """The article's two loops: `softmax(logits / T)` without a filter, `softmax(top_p_filter(logits / T, p))` with."""
    if p >= 1.0:
        return torch.softmax(logits / T, dim=0)
    filtered = top_p_filter(logits / T, p)
    return torch.softmax(filtered, dim=0)


def article_loop(w, prompt_ids, T, p, seed, max_new_tokens, eos):
    rng = torch.Generator(device="cpu").manual_seed(seed)
    ids = list(prompt_ids)
    new = []
    for _ in range(max_new_tokens):
        if len(ids) >= w.n_positions:
            break
        logits = gpt2_reference.forward_logits(w, ids)[-1]  # lm(ids, use_cache=False).logits[0, -1]
        probs = article_probs(logits, T, p)
        next_id = torch.multinomial(probs, num_samples=1, generator=rng)
        ids.append(int(next_id))
        new.append(int(next_id))
        if next_id.item() == eos:
            break
    return new


# ---- fixed logits (no model) ----

VOCAB = 50257
CASES = [(1.0, 0.9), (0.5, 0.9), (2.0, 0.95), (0.7, 0.5), (1.0, 1.0), (0.001, 1.0)]
SEEDS = list(range(10)) + [41, 42, 43, 2**32 + 7, 2**63 + 5]
ROUNDS = 2


def fixed_logits():
    g = torch.Generator().manual_seed(2024)
    vectors = [
        torch.randn(VOCAB, generator=g) * 3.0,   # peaked, like a confident prediction
        torch.randn(VOCAB, generator=g) * 1.5,   # spread, like a long tail
        torch.randn(VOCAB, generator=g) * 2.0 - torch.arange(VOCAB) * 1e-4,
        torch.tensor([3.0, 2.0, 1.0]),           # docs/sampling.md's worked example
        torch.tensor([1.0, 1.0, 0.0, -1.0]),     # a tie at the top
        torch.tensor([1.5, -0.1, 2.1, -0.9]),    # where the article's and HF's top-p part (docs/sampling.md)
        torch.randn(64, generator=g),
    ]
    return [v.to(torch.float32) for v in vectors]


def fixed_logits_report():
    vectors = fixed_logits()
    cases = []
    for T, p in CASES:
        # article_probs is a pure function of (logits, T, p): made once per case, drawn from per seed.
        probs_of = [article_probs(logits, T, p) for logits in vectors]
        for seed in SEEDS:
            rng = torch.Generator(device="cpu").manual_seed(seed)
            picks = []
            for _ in range(ROUNDS):
                for probs in probs_of:
                    picks.append(int(torch.multinomial(probs, num_samples=1, generator=rng)))
            cases.append({"temperature": T, "top_p": p, "seed": seed, "picks": picks})
    # float32 -> Python float is exact and json round-trips doubles, so C++ reads the same bits.
    return {"rounds": ROUNDS, "logits": [v.double().tolist() for v in vectors], "cases": cases}


# ---- the loop on a model ----

PROMPT_IDS = [1169, 7850, 3331, 373]  # "the river bank was" in GPT-2's tokenizer
PROMPT = "the river bank was"


ARTICLE_SEEDS = (41, 42, 43)


def write_loop_ids(model_dir, max_new_tokens, path):
    w = gpt2_reference.Gpt2Weights(model_dir)
    eos = w.config["eos_token_id"]
    runs = [{"seed": seed, "ids": article_loop(w, PROMPT_IDS, 1.0, 0.9, seed, max_new_tokens, eos)}
            for seed in ARTICLE_SEEDS]
    # The article's greedy loop too (gpt2_reference.greedy): golden/fixture's greedy run is held
    # to it on every test run (tests/reference/golden_anchor.py).
    greedy_ids = gpt2_reference.greedy(w, PROMPT_IDS, max_new_tokens)
    doc = {"prompt": PROMPT, "prompt_ids": PROMPT_IDS, "temperature": 1.0, "top_p": 0.9,
           "max_new_tokens": max_new_tokens, "runs": runs, "greedy": {"ids": greedy_ids}}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)
    for r in runs:
        print(f"seed {r['seed']}: {len(r['ids'])} tokens: {r['ids']}")
    print(f"greedy: {len(greedy_ids)} tokens: {greedy_ids}")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixed-logits", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--prompt-ids", default=",".join(map(str, PROMPT_IDS)))
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--max-new-tokens", type=int, default=50)
    ap.add_argument("--write-loop-ids", metavar="FILE")
    ap.add_argument("--fixed-logits-out", metavar="FILE", help="write the --fixed-logits JSON to FILE")
    args = ap.parse_args(argv)
    torch_threads.use_threads(torch)
    if args.fixed_logits_out:
        os.makedirs(os.path.dirname(os.path.abspath(args.fixed_logits_out)), exist_ok=True)
        with open(args.fixed_logits_out, "w") as f:
            json.dump(fixed_logits_report(), f)
        if not args.model:
            return 0
    if args.fixed_logits:
        json.dump(fixed_logits_report(), sys.stdout)
        return 0
    if not args.model:
        ap.error("give --fixed-logits, or --model DIR (with --write-loop-ids FILE for the article's three runs)")
    if args.write_loop_ids:
        return write_loop_ids(args.model, args.max_new_tokens, args.write_loop_ids)
    w = gpt2_reference.Gpt2Weights(args.model)
    ids = [int(x) for x in args.prompt_ids.split(",") if x.strip()]
    print(json.dumps(article_loop(w, ids, args.temperature, args.top_p, args.seed, args.max_new_tokens,
                                  w.config["eos_token_id"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
