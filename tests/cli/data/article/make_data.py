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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "support"))
from consistent_evidence import make_consistent  # noqa: E402  ids and specs as the writer makes them
FACTS = os.path.join(HERE, "..", "..", "..", "..", "golden", "article", "article-facts.json")


def as_gpt2_wrote_it(text):
    return text.replace("\u2019", "'").replace("\n", "\n\n")


def params(p, top_candidates=0):
    out = {"mode": p["mode"], "temperature": p.get("temperature", 1.0), "top_k": 0, "top_p": p.get("top_p", 1.0),
           "seed": p.get("seed", 0), "sampler_order": ["temperature", "top_k", "top_p"], "top_p_rule": "article",
           "rng": "torch", "max_new_tokens": p["max_new_tokens"], "stop_at_eos": True, "use_cache": False,
           "top_candidates": top_candidates}
    return out


def first_kept(facts, p, fixture):
    """Step 0's nucleus size: a run with the facts' T and p has the published size there."""
    for n in facts["nucleus_sizes"]:
        if p.get("temperature") == n["temperature"] and p.get("top_p") == n["top_p"]:
            return n["kept"] // 7 if fixture else n["kept"]
    return 1


PROMPT_IDS = [1169, 7850, 3331, 373]
EOS = 50256


def step(k, token, text, kept, top=()):
    """A step record with every field evidence has; only token_id, token_text, kept and top matter here."""
    top = list(top)
    # rest_mass as the writer derives it from the listed candidates (the reader checks it).
    rest = 1 - sum(c["prob_scaled"] for c in top) if top else 0.5
    return {"step": k, "token_id": token, "token_text": text, "prob": 0.5, "prob_t1": 0.5, "kept": kept, "top": top,
            "rest_mass": rest, "margin": 0.0, "logit_margin": 0.0, "entropy": 0.0}


def run(index, run_id, prompt, run_params, text, stop, steps, experiment="article"):
    output_ids = [s["token_id"] for s in steps if s["token_id"] is not None]
    return {"id": run_id, "experiment": experiment, "index": index, "prompt_index": 0, "prompt": prompt, "params": run_params,
            "prompt_ids": PROMPT_IDS, "output_ids": output_ids, "text": text, "continuation": text[len(prompt):],
            "stop": stop, "steps": steps}


def evidence(facts, fixture):
    runs = []
    for g in facts["generations"]:
        text = as_gpt2_wrote_it(g["text"])
        stop = dict(g["stop"])
        if fixture:
            text = facts["prompt"] + " fixture weights write other words"
            stop = {"reason": "max_new_tokens", "step": g["params"]["max_new_tokens"]}
        # One step per new token (" a"; EOS last when the run stopped there), the first with its nucleus size.
        tokens = [257] * stop["step"]
        if stop["reason"] == "eos":
            tokens[-1] = EOS
        steps = [step(k, t, "<|endoftext|>" if t == EOS else " a", first_kept(facts, g["params"], fixture) if k == 0 else 1)
                 for k, t in enumerate(tokens)]
        runs.append(run(len(runs), "article/" + g["name"], facts["prompt"], params(g["params"]), text, stop, steps))
    for n in facts["nucleus_sizes"]:
        kept = n["kept"] if not fixture else n["kept"] // 7
        p = params({"mode": "sample", "temperature": n["temperature"], "top_p": n["top_p"], "seed": 42, "max_new_tokens": 0}, top_candidates=1)
        top = [{"id": EOS, "text": "<|endoftext|>", "prob": 0.01, "prob_scaled": 0.01}]
        runs.append(run(len(runs), f"article/nucleus-t{n['temperature']}", facts["prompt"], p, facts["prompt"],
                        {"reason": "max_new_tokens", "step": 0}, [step(0, None, "", kept, top)],
                        # its own experiment: it records 1 candidate a step, the generations none
                        experiment="article-nucleus"))
    model = {"source": "fixture" if fixture else "hf-dir", "path": "/models/gpt2", "config": {"vocab_size": 50257}, "eos_token_id": EOS,
             "n_positions": 1024, "files": {}}
    environment = {"libtorch_version": "1.13.1", "torch_config": "", "torch_parallel_info": "",
                   "blas": {"library": None, "resolved": None, "vendor": "none", "config": None, "core": None, "threads": None,
                            "loaded": []},
                   "cpu_capability": "AVX2", "threads": {"intra_op": 1, "inter_op": 1, "omp_max": 1, "runs_concurrently": 1},
                   "cpu": {"model": "", "flags": "", "logical_cores": 1, "usable_cores": 1}, "compiler": "", "os": "",
                   "kernel": "", "dtype": "float32", "device": "cpu", "float_control": None, "numerics_env": {}}
    return make_consistent({"schema": "genrepro.evidence/1", "genrepro": {"version": "0.1.0", "git_commit": "0000000"},
            "created_utc": "2026-11-30T12:00:00Z", "environment": environment, "model": model,
            "experiments": [{"name": "article", "path": "experiments/article.json", "sha256": "00", "spec": {}}], "runs": runs})


facts = json.load(open(FACTS, encoding="utf-8"))
for name, fixture in [("reproduces.json", False), ("fixture_like.json", True)]:
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        # One line: the 50-step runs would be thousands of lines indented; the generator is the readable form.
        f.write(json.dumps(evidence(facts, fixture), ensure_ascii=False) + "\n")
