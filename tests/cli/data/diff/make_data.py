#!/usr/bin/env python3
"""Writes the hand-made evidence files the diff/bless CLI tests read (test data, not goldens).

Run once by hand (`/usr/bin/python3 make_data.py`) after changing it; the outputs are committed.
Every distribution is written out below so each expected exit code can be checked on paper.
"""
import copy
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "support"))
from consistent_evidence import make_consistent  # noqa: E402  ids and specs as the writer makes them


def step(k, chosen, top, kept=1):
    entries = [{"id": i, "text": f" t{i}", "prob": p, "prob_scaled": p} for i, p in top]
    ps = dict(top)
    return {"step": k, "token_id": chosen, "token_text": f" t{chosen}", "prob": ps[chosen], "prob_t1": ps[chosen],
            "kept": kept, "top": entries, "rest_mass": 1 - sum(ps.values()),
            "margin": top[0][1] - top[1][1], "logit_margin": math.log(top[0][1] / top[1][1]),
            "entropy": -sum(p * math.log(p) for p in ps.values())}


def run(run_id, experiment, mode, steps, seed=42):
    params = {"mode": mode, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": seed,
              "sampler_order": ["temperature", "top_k", "top_p"], "top_p_rule": "article", "rng": "torch",
              "max_new_tokens": 3, "stop_at_eos": True, "use_cache": False, "top_candidates": 2}
    cont = "".join(s["token_text"] for s in steps)
    return {"id": run_id, "experiment": experiment, "index": 0, "prompt_index": 0, "prompt": "the river bank was",
            "params": params, "prompt_ids": [1169, 7850, 3331, 373], "output_ids": [s["token_id"] for s in steps],
            "text": "the river bank was" + cont, "continuation": cont,
            "stop": {"reason": "max_new_tokens", "step": len(steps)}, "steps": steps,
            "timing": {"seconds": 0.25, "tokens_per_second": 12.0}}


def doc(runs, libtorch="1.13.0", created="2026-11-30T12:00:00Z"):
    return make_consistent({"schema": "genrepro.evidence/1", "genrepro": {"version": "0.1.0", "git_commit": "0000000"},
            "created_utc": created,
            "environment": {"libtorch_version": libtorch, "torch_config": "", "torch_parallel_info": "",
                            "blas": {"library": None, "resolved": None, "vendor": "none", "config": None, "core": None,
                                     "threads": None, "loaded": []},
                            "cpu_capability": "AVX2",
                            "threads": {"intra_op": 1, "inter_op": 1, "omp_max": 1, "runs_concurrently": 1},
                            "cpu": {"model": "", "flags": "", "logical_cores": 1, "usable_cores": 1},
                            "compiler": "", "os": "", "kernel": "", "dtype": "float32", "device": "cpu",
                            "float_control": None, "numerics_env": {}},
            "model": {"source": "fixture", "path": "/tmp/tiny", "config": {"vocab_size": 50257}, "eos_token_id": 50256, "n_positions": 128,
                      "files": {}},
            "experiments": [{"name": "greedy", "path": "experiments/greedy.json", "sha256": "00", "spec": {}},
                            {"name": "sampling", "path": "experiments/sampling.json", "sha256": "00", "spec": {}}],
            "runs": copy.deepcopy(runs)})


def greedy_steps():
    # Step 2 is a near-tie (2e-5 apart), so a greedy run can flip it without breaking the relation
    # "a greedy token is its best candidate" (the bless tests do).
    return [step(0, 10, [(10, 0.6), (11, 0.3)]), step(1, 20, [(20, 0.5), (21, 0.2)]),
            step(2, 30, [(30, 0.45001), (31, 0.44999)])]


G = run("greedy/p0/greedy-0a1b2c3d", "greedy", "greedy", greedy_steps())
def sampled_steps():
    # Sampled at T = 1 with no filter: both listed candidates are kept (the consistency layer
    # holds kept >= the candidates with prob > 0).
    steps = greedy_steps()
    for s in steps:
        s["kept"] = 2
    return steps


S = run("sampling/p0/sample-t1-s42-4e5f6a7b", "sampling", "sample", sampled_steps())


def write(name, value):
    path = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(value if isinstance(value, str) else json.dumps(value, indent=1) + "\n")


write("golden.json", doc([G, S]))
# Same runs, other order, volatile fields and the libtorch version changed: agrees (exit 0).
write("same.json", doc([S, G], libtorch="2.8.0", created="2027-01-01T00:00:00Z"))
# One token changed at step 2 of the sampled run (the runner-up 31 drawn from the same
# distribution): exit 1. (A greedy run cannot pick its runner-up: the reader refuses that.)
s1 = copy.deepcopy(S)
s1["steps"][2] = step(2, 31, [(30, 0.45001), (31, 0.44999)], kept=2)
s1["output_ids"][2] = 31
s1["continuation"] = " t10 t20 t31"
s1["text"] = "the river bank was t10 t20 t31"
write("one_token.json", doc([G, s1]))
# Step 1 flips between candidates 3e-5 apart (within 1e-4): a near-tie; a regression at 1e-6.
g2 = copy.deepcopy(G)
g2["steps"][1] = step(1, 21, [(21, 0.40002), (20, 0.39999)])
g2["output_ids"][1] = 21
g0 = copy.deepcopy(G)
g0["steps"][1] = step(1, 20, [(20, 0.40003), (21, 0.40000)])
write("near_tie_golden.json", doc([g0]))
write("near_tie_new.json", doc([g2]))
# Bad input.
write("not_json.json", '{"schema": "genrepro.evidence/1", "runs": [\n')
write("not_evidence.json", {"hello": "world"})
old = doc([G])
old["schema"] = "genrepro.evidence/0"
write("wrong_schema.json", old)
bad = doc([copy.deepcopy(G)])
bad["runs"][0]["steps"][1]["prob"] = "0.5"
write("bad_field.json", bad)
# Golden directories: one file per experiment; and two files holding the same run id.
write("golden_dir/greedy.json", doc([G]))
write("golden_dir/sampling.json", doc([S]))
write("overlap_dir/greedy.json", doc([G]))
write("overlap_dir/greedy-old.json", doc([G]))
