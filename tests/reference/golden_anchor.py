#!/usr/bin/python3
"""golden/fixture held to the Python references on every test run: the gate's anchor.

golden/fixture is blessed evidence (genrepro bless), and the regression gate diffs every run
against it; this check ties those blessed tokens to code that is not genrepro's. The ids the Python
references wrote for the tiny fixture model (tests/reference/article_sampling.py --write-loop-ids:
the article's sampled loop, T = 1, p = 0.9, seeds 41/42/43, and gpt2_reference.greedy's argmax
loop, all recomputing without a cache) must be, token for token, the output_ids of
  - greedy.json's greedy run,
  - top_p_seeds.json's three runs (seeds 41, 42, 43),
  - eos.json's run (seed 43, the same settings),
each with the same prompt ids. It asserts how much it compared: five runs, and every new token of
each (no run may be shorter than the reference's).

  golden_anchor.py --golden golden/fixture --loop-ids build/reference/article-loop-ids.json
"""
import argparse
import json
import os
import sys

EXPECTED_RUNS = 5


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--loop-ids", required=True)
    a = ap.parse_args(argv)
    with open(a.loop_ids) as f:
        ref = json.load(f)
    by_seed = {r["seed"]: r["ids"] for r in ref["runs"]}
    problems, compared_runs, compared_tokens = [], 0, 0

    def runs_of(name):
        with open(os.path.join(a.golden, name)) as f:
            return json.load(f)["runs"]

    def hold(run, python_ids, what):
        nonlocal compared_runs, compared_tokens
        p = run["params"]
        if run.get("prompt_ids") is not None and run["prompt_ids"] != ref["prompt_ids"]:
            problems.append(f"{run['id']}: prompt ids {run['prompt_ids']}, the reference's {ref['prompt_ids']}")
            return
        if p["max_new_tokens"] != ref["max_new_tokens"] or p.get("use_cache"):
            problems.append(f"{run['id']}: max_new_tokens {p['max_new_tokens']}, use_cache {p.get('use_cache')}: "
                            f"not the reference's {ref['max_new_tokens']} recomputed tokens")
            return
        got = run["output_ids"]
        if got != python_ids:
            first = next((i for i, (x, y) in enumerate(zip(got, python_ids)) if x != y), min(len(got), len(python_ids)))
            problems.append(f"{run['id']}: differs from {what} at new token {first} "
                            f"(golden {got[first:first + 3]}, Python {python_ids[first:first + 3]}; "
                            f"lengths {len(got)} and {len(python_ids)})")
            return
        compared_runs += 1
        compared_tokens += len(got)
        print(f"ok: {run['id']}: {len(got)} tokens, as {what}")

    greedy = [r for r in runs_of("greedy.json") if r["params"]["mode"] == "greedy"]
    if len(greedy) != 1:
        problems.append(f"greedy.json holds {len(greedy)} greedy runs, expected 1")
    for run in greedy:
        hold(run, ref["greedy"]["ids"], "gpt2_reference.greedy")

    def sampled(run, seed):
        p = run["params"]
        return (p["mode"] == "sample" and p["seed"] == seed and p["temperature"] == ref["temperature"]
                and p["top_p"] == ref["top_p"] and p["top_k"] == 0 and p["sampler_order"] == ["temperature", "top_p"]
                and p["top_p_rule"] == "article" and p["rng"] == "torch" and p["stop_at_eos"])

    for name, seeds in (("top_p_seeds.json", (41, 42, 43)), ("eos.json", (43,))):
        runs = runs_of(name)
        for seed in seeds:
            matching = [r for r in runs if sampled(r, seed)]
            if len(matching) != 1:
                problems.append(f"{name}: {len(matching)} runs with the article's settings and seed {seed}, expected 1")
                continue
            hold(matching[0], by_seed[seed], f"article_sampling.py's loop with seed {seed}")

    expected_tokens = len(ref["greedy"]["ids"]) + sum(len(by_seed[s]) for s in (41, 42, 43, 43))
    if compared_runs != EXPECTED_RUNS or compared_tokens != expected_tokens:
        problems.append(f"compared {compared_runs} runs and {compared_tokens} tokens, expected {EXPECTED_RUNS} runs "
                        f"and {expected_tokens} tokens")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print(f"golden/fixture agrees with the Python references: {compared_runs} runs, {compared_tokens} tokens compared")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
