#!/usr/bin/env python3
"""Makes hand-made test evidence consistent the way `genrepro run`'s is (docs/validation.md,
"Consistency"): each run's id is the hash of its experiment, prompt_index, prompt and params
(params/experiment_file.cpp run_id), and each experiment's spec expands to its runs.

Used by the tests' make_data.py scripts (test data, never goldens). `python3 consistent_evidence.py`
checks run_id against the blessed goldens, whose ids the writer made.
"""
import hashlib
import json
import os

# RunParams' defaults for what a greedy run entry may not set (params/run_params.hpp): the expansion
# of {"mode": "greedy"} gives exactly these.
GREEDY_DEFAULTS = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": 0,
                   "sampler_order": ["temperature", "top_k", "top_p"], "top_p_rule": "article", "rng": "torch"}
SAMPLING_KEYS = ["temperature", "top_k", "top_p", "seed", "sampler_order", "top_p_rule", "rng"]


def short_number(v):
    s = json.dumps(float(v))
    return s[:-2] if s.endswith(".0") else s


def run_id(experiment, prompt_index, prompt, params):
    summary = params["mode"]
    if params["mode"] == "sample":
        summary += "-t" + short_number(params["temperature"])
        if params["top_k"] > 0:
            summary += "-k" + str(params["top_k"])
        if params["top_p"] < 1.0:
            summary += "-p" + short_number(params["top_p"])
        summary += "-s" + str(params["seed"])
    canonical = json.dumps({"params": params, "prompt": prompt}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{experiment}/p{prompt_index}/{summary}-{hashlib.sha256(canonical.encode()).hexdigest()[:8]}"


def make_consistent(doc):
    """Rewrites doc's runs (greedy params to the defaults, ids to their hash) and experiments
    (a spec per experiment that expands to its runs). Returns doc."""
    specs = {}
    for run in doc["runs"]:
        p = run["params"]
        if p["mode"] == "greedy":
            p.update(GREEDY_DEFAULTS)
        spec = specs.setdefault(run["experiment"], {"name": run["experiment"], "prompts": [],
                                                    "record": {"top_candidates": p["top_candidates"]}, "runs": []})
        if run["prompt"] not in spec["prompts"]:
            spec["prompts"].append(run["prompt"])
        run["prompt_index"] = spec["prompts"].index(run["prompt"])
        entry = {"mode": p["mode"], "max_new_tokens": p["max_new_tokens"], "stop_at_eos": p["stop_at_eos"],
                 "use_cache": p["use_cache"]}
        if p["mode"] == "sample":
            entry.update({k: p[k] for k in SAMPLING_KEYS})
        if entry not in spec["runs"]:
            spec["runs"].append(entry)
        run["id"] = run_id(run["experiment"], run["prompt_index"], run["prompt"], p)
    known = {x["name"]: x for x in doc["experiments"]}
    doc["experiments"] = [{"name": name, "path": known.get(name, {}).get("path", f"experiments/{name}.json"),
                           "sha256": known.get(name, {}).get("sha256", "00"), "spec": spec} for name, spec in specs.items()]
    return doc


if __name__ == "__main__":
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "golden", "fixture")
    for name in sorted(os.listdir(golden)):
        for r in json.load(open(os.path.join(golden, name)))["runs"]:
            got = run_id(r["experiment"], r["prompt_index"], r["prompt"], r["params"])
            assert got == r["id"], (name, got, r["id"])
    print("run_id agrees with every golden id")
