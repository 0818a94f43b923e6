#!/usr/bin/python3
"""Strict evidence's draws (steps[].draw) held to torch's own generator, with no forward pass.

draw_margin.py replays runs on libtorch's forward pass, so it can judge only reference-numerics
evidence: strict probabilities part from libtorch's in the last bits. This check needs no
probabilities but the ones the evidence records, so it holds strict evidence (golden/fixture, the
default numerics) to torch itself:

torch.multinomial(probs, 1) on CPU draws q = Exp(1) for every one of the V entries, in index
order, and takes argmax(probs / q) (float32); the draws depend on the seed and the step alone,
never on the probabilities. So for every sampled run of the article's loop (rng torch, T > 0):

  g = torch.Generator().manual_seed(seed)
  at every step: q = torch.empty(V).exponential_(generator=g)      # what multinomial consumes

and, with p the probabilities the step records (the chosen token's `prob`, each listed candidate's
`top[].prob`, all in the final distribution), ratio(i) = float32(p_i / q_i):

  - the chosen token's ratio beats every listed candidate's (a tie goes to the lower id), and its
    probability is > 0;
  - a step records a draw exactly when two tokens could be drawn (kept >= 2), with rule
    exponential_race and a runner-up other than the chosen token;
  - a listed runner-up: margin == ln(ratio(winner) / ratio(runner-up)) in double, bit for bit, and
    its ratio is the best of the other listed candidates';
  - an unlisted runner-up: its probability, implied by the margin (p_r = ratio(winner) /
    e^margin x q_r), is > 0, at most the smallest listed probability (it has a lower logit than
    every listed candidate, and the chain keeps the logits' order) and at most the mass the listed
    tokens leave; its ratio beats every listed candidate's but the winner's.

An error in genrepro's generator (a draw out of step, another Exp(1) formula, the race's order)
fails the first check at once: its winner would not beat the listed candidates under torch's q.
Two controls run on copies (the seed one higher, a margin one ulp off) and must be caught.
It counts and asserts what it compared: --expect-runs runs, --expect-draws draws, and at least
--expect-exact of them bit for bit.

  strict_draws.py --evidence golden/fixture --expect-runs 11 --expect-draws N --expect-exact M
"""
import argparse
import copy
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_threads  # noqa: E402
from draw_margin import evidence_files  # noqa: E402

# Float rounding between the float32 values the evidence records and the implied probability of
# an unlisted runner-up (a quotient and an exp in double of float32 ratios).
RELATIVE_SLACK = 1e-6
MASS_SLACK = 1e-5  # the listed probabilities' float32 sum against 1


def replayable(run):
    p = run["params"]
    return (p.get("framework", "article") == "article" and p["mode"] == "sample" and p["temperature"] > 0
            and p.get("rng", "torch") == "torch" and p["max_new_tokens"] > 0 and len(run["output_ids"]) > 0)


def ratio(prob, q):
    return np.float32(prob) / np.float32(q)


def beats(a_ratio, a_id, b_ratio, b_id):
    """a wins the race against b: argmax takes the first of equal ratios."""
    return a_ratio > b_ratio or (a_ratio == b_ratio and a_id < b_id)


def check_step(step, token, q, stats):
    """Problems of one step's record against torch's draws q (float32 numpy array)."""
    listed = {c["id"]: c["prob"] for c in step["top"]}
    p_token = step["prob"]
    if not p_token > 0:
        return [f"the chosen token {token} has probability {p_token}"]
    r_token = ratio(p_token, q[token])
    others = {i: ratio(p, q[i]) for i, p in listed.items() if i != token and p > 0}
    for i, r in others.items():
        if not beats(r_token, token, r, i):
            return [f"listed candidate {i} (p {listed[i]!r}) has ratio {r!r} against the chosen token {token}'s "
                    f"{r_token!r} under torch's draws: torch.multinomial would have drawn another token"]
    draw = step.get("draw")
    if step["kept"] < 2:
        stats["no_draw"] += 1
        return [f"a draw {draw} recorded with kept {step['kept']}"] if draw is not None else []
    if draw is None:
        return [f"no draw recorded with kept {step['kept']}"]
    if draw.get("rule") != "exponential_race" or draw["runner_up"] == token:
        return [f"draw {draw}: rule must be exponential_race, runner_up not the chosen token {token}"]
    runner = draw["runner_up"]
    best_other = max(others.items(), key=lambda kv: (kv[1], -kv[0]), default=None)
    if runner in listed:
        want = math.log(float(r_token) / float(ratio(listed[runner], q[runner])))
        if draw["margin"] != want:
            return [f"margin {draw['margin']!r}; from the recorded probabilities and torch's draws {want!r} (bit for bit)"]
        if best_other is not None and best_other[0] != runner:
            return [f"runner_up {runner}, but listed candidate {best_other[0]} has the larger ratio"]
        stats["exact"] += 1
    else:
        r_runner = float(r_token) / math.exp(draw["margin"])
        p_runner = r_runner * float(q[runner])
        smallest = min(p for p in listed.values())
        rest = 1.0 - sum(listed.values()) - (0.0 if token in listed else p_token)
        problems = []
        if not p_runner > 0:
            problems.append(f"unlisted runner_up {runner}: implied probability {p_runner!r}")
        if p_runner > smallest * (1 + RELATIVE_SLACK):
            problems.append(f"unlisted runner_up {runner}: implied probability {p_runner:.9g} above the smallest listed, {smallest:.9g}")
        if p_runner > rest + MASS_SLACK:
            problems.append(f"unlisted runner_up {runner}: implied probability {p_runner:.9g} above the mass left, {rest:.9g}")
        if best_other is not None and float(best_other[1]) > r_runner * (1 + RELATIVE_SLACK):
            problems.append(f"unlisted runner_up {runner} (ratio {r_runner:.9g}) below listed candidate {best_other[0]}'s {float(best_other[1]):.9g}")
        if problems:
            return problems
        stats["bounded"] += 1
    stats["draws"] += 1
    stats["smallest_margin"] = min(stats["smallest_margin"], draw["margin"])
    return []


def new_stats():
    return {"runs": 0, "steps": 0, "draws": 0, "exact": 0, "bounded": 0, "no_draw": 0, "smallest_margin": math.inf}


def check_run(run, vocab, stats, problems):
    g = torch.Generator().manual_seed(run["params"]["seed"])
    for k, step in enumerate(run["steps"]):
        token = run["output_ids"][k]
        q = torch.empty(vocab).exponential_(generator=g).numpy()
        for problem in check_step(step, token, q, stats):
            problems.append(f"{run['id']} step {k}: {problem}")
    stats["runs"] += 1
    stats["steps"] += len(run["steps"])


def controls(runs, vocab):
    """Two changes the check must catch, made to copies of the first sampled run: the seed one
    higher (torch's draws then pick other tokens) and a bit-for-bit margin moved by one ulp.
    Returns what the check missed."""
    missed = []
    run = copy.deepcopy(runs[0])
    run["params"]["seed"] += 1
    found = []
    check_run(run, vocab, new_stats(), found)
    if not found:
        missed.append(f"{run['id']} with seed {run['params']['seed']}: no problem found")
    for run in runs:
        g = torch.Generator().manual_seed(run["params"]["seed"])
        for k, step in enumerate(run["steps"]):
            q = torch.empty(vocab).exponential_(generator=g).numpy()
            draw = step.get("draw")
            if draw and draw["runner_up"] in {c["id"] for c in step["top"]}:
                nudged = copy.deepcopy(step)
                nudged["draw"]["margin"] = math.nextafter(draw["margin"], math.inf)
                if not check_step(nudged, run["output_ids"][k], q, new_stats()):
                    missed.append(f"{run['id']} step {k}: a margin one ulp off was not caught")
                return missed
    return missed + ["no draw with a listed runner-up to nudge"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evidence", nargs="+", required=True, help="strict evidence files or directories of them")
    ap.add_argument("--expect-runs", type=int, required=True)
    ap.add_argument("--expect-draws", type=int, required=True)
    ap.add_argument("--expect-exact", type=int, required=True, help="at least this many draws checked bit for bit")
    a = ap.parse_args(argv)
    torch_threads.use_threads(torch)
    stats = new_stats()
    problems = []
    sampled = []
    for path in evidence_files(a.evidence):
        with open(path) as f:
            evidence = json.load(f)
        if evidence["numerics"]["mode"] != "strict":
            problems.append(f"{path}: numerics.mode {evidence['numerics']['mode']!r}; this check is for strict evidence")
            continue
        vocab = evidence["model"]["config"]["vocab_size"]
        for run in evidence["runs"]:
            if replayable(run):
                check_run(run, vocab, stats, problems)
                sampled.append((run, vocab))
    if sampled:
        problems += [f"control: {m}" for m in controls([r for r, _ in sampled], sampled[0][1])]
    for line in problems:
        print("FAIL: " + line)
    print(f"compared {stats['runs']} sampled runs, {stats['steps']} steps, with torch's generator: every chosen token "
          f"beats the listed candidates; {stats['draws']} recorded draws agree (margin bit for bit at {stats['exact']} "
          f"whose runner-up is listed, implied probability within the listed bounds at {stats['bounded']}; smallest "
          f"margin {stats['smallest_margin']:.3g}); {stats['no_draw']} steps with one drawable token and no record")
    if stats["runs"] != a.expect_runs or stats["draws"] != a.expect_draws or stats["exact"] < a.expect_exact:
        print(f"FAIL: expected {a.expect_runs} runs, {a.expect_draws} draws, at least {a.expect_exact} bit for bit")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
