#!/usr/bin/env python3
"""Writes hand-made evidence for the check-article CLI tests (test data, not goldens).

reproduces.json: runs with the article's parameters whose texts are the article's texts as
GPT-2 would have written them (ASCII apostrophes, paragraph breaks "\\n\\n"), the seed-43 run
stopping at EOS as new token 47, first-step nucleus sizes 35 / 1,279 / 14,905: check-article
must exit 0. fixture_like.json: the same runs on a "fixture" model whose texts and sizes differ:
check-article must exit 1 with a per-fact table. Run once by hand; the outputs are committed.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FACTS = os.path.join(HERE, "..", "..", "..", "..", "golden", "article", "article-facts.json")


def as_gpt2_wrote_it(text):
    return text.replace("\u2019", "'").replace("\n", "\n\n")


def params(p):
    out = {"mode": p["mode"], "temperature": p.get("temperature", 1.0), "top_k": 0, "top_p": p.get("top_p", 1.0),
           "seed": p.get("seed", 0), "sampler_order": ["temperature", "top_k", "top_p"], "top_p_rule": "article",
           "rng": "torch", "max_new_tokens": p["max_new_tokens"], "stop_at_eos": True, "use_cache": False,
           "top_candidates": 5}
    return out


def first_kept(facts, p, fixture):
    """Step 0's nucleus size: a run with the facts' T and p has the published size there."""
    for n in facts["nucleus_sizes"]:
        if p.get("temperature") == n["temperature"] and p.get("top_p") == n["top_p"]:
            return n["kept"] // 7 if fixture else n["kept"]
    return 1


def evidence(facts, fixture):
    runs = []
    for g in facts["generations"]:
        text = as_gpt2_wrote_it(g["text"])
        stop = dict(g["stop"])
        if fixture:
            text = facts["prompt"] + " fixture weights write other words"
            stop = {"reason": "max_new_tokens", "step": g["params"]["max_new_tokens"]}
        runs.append({"id": "article/" + g["name"], "experiment": "article", "prompt": facts["prompt"],
                     "params": params(g["params"]), "text": text, "stop": stop,
                     "steps": [{"step": 0, "token_id": 257, "token_text": " a",
                                "kept": first_kept(facts, g["params"], fixture)}]})
    for n in facts["nucleus_sizes"]:
        kept = n["kept"] if not fixture else n["kept"] // 7
        runs.append({"id": f"article/nucleus-t{n['temperature']}", "experiment": "article", "prompt": facts["prompt"],
                     "params": params({"mode": "sample", "temperature": n["temperature"], "top_p": n["top_p"],
                                       "seed": 42, "max_new_tokens": 0}),
                     "text": facts["prompt"], "stop": {"reason": "max_new_tokens", "step": 0},
                     "steps": [{"step": 0, "token_id": None, "token_text": "", "kept": kept,
                                "top": [{"id": 50256, "text": "<|endoftext|>", "prob": 0.01, "prob_scaled": 0.01}]}]})
    return {"schema": "genrepro.evidence/1", "model": {"source": "fixture" if fixture else "hf-dir", "eos_token_id": 50256},
            "runs": runs}


facts = json.load(open(FACTS, encoding="utf-8"))
for name, fixture in [("reproduces.json", False), ("fixture_like.json", True)]:
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(json.dumps(evidence(facts, fixture), indent=1, ensure_ascii=False) + "\n")
