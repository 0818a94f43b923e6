#!/usr/bin/python3
"""genrepro's recorded draw margins (steps[].draw) held to torch's own generator.

For every sampled article run in the evidence given (framework article, rng torch, temperature
> 0, at least one new token), the run is replayed with its recorded tokens on the model in --model:
the forward pass is tests/reference/gpt2_reference.py (plain PyTorch, recomputing every step), the
chain is the article's stages in the run's sampler_order (logits / T, top-k's mask, the article's
top_p_filter from tests/reference/article_sampling.py), probs = softmax. The generator is the
article's, torch.Generator().manual_seed(seed), made once per run; at every step:

  clone = a generator with the run's generator state (get_state / set_state)
  q = torch.empty(V).exponential_(generator=clone)     # the Exp(1) draws multinomial makes
  ratios = probs / q                                   # float32, as multinomial divides
  token = torch.multinomial(probs, 1, generator=g)     # advances the run's generator as the run did

The token must equal argmax(ratios) and the recorded token (else the replay is not the run's).
The expected record: runner_up = the entry with the second largest ratio, margin =
log(r1 / r2) of the two float32 ratios in double; no record when the second ratio is 0 (one token
left) or a ratio is not finite. genrepro's draw must have rule "exponential_race" and that
runner_up. Its margin is checked two ways, because the probabilities of this forward pass and
libtorch's differ in the last bits (|delta ln p| ~1e-5 on the tiny fixture, x 1000 at T = 0.001):
  - bit for bit when the runner-up is among the step's listed candidates: the ratios are then
    recomputed from the probabilities genrepro recorded (float32 values, exact in JSON) and
    torch's draws q, which is the whole computation genrepro made;
  - otherwise within 4 x the largest |delta ln p| of the step's listed tokens (+ 1e-6), the winner's
    ratio from its recorded prob and the runner-up's from this forward pass.

It asserts how much it compared: --expect-runs runs and --expect-draws recorded draws, and that
every step without a record is one the reference also says has none.

  draw_margin.py --model build/fixtures/tiny --evidence golden/fixture --expect-runs 11 --expect-draws N
"""
import argparse
import glob
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import article_sampling  # noqa: E402
import gpt2_reference  # noqa: E402
import torch_threads  # noqa: E402

def chain_probs(logits, params):
    """The article's chain in the run's sampler_order, then softmax (sampling/article_rules.cpp)."""
    x = logits
    for stage in params["sampler_order"]:
        if stage == "temperature":
            x = x / params["temperature"]
        elif stage == "top_k":
            k = params["top_k"]
            if 0 < k < x.numel():
                kth = torch.topk(x, k)[0][-1]
                x = x.masked_fill(x < kth, -float("inf"))
        elif stage == "top_p":
            if params["top_p"] < 1.0:
                if params.get("top_p_rule", "article") != "article":
                    raise ValueError("top_p_rule " + params["top_p_rule"] + " is not the article's")
                x = article_sampling.top_p_filter(x, params["top_p"])
        else:
            raise ValueError("stage " + stage + " is not the article's")
    return torch.softmax(x, dim=0)


def replayable(run):
    p = run["params"]
    return (p.get("framework", "article") == "article" and p["mode"] == "sample" and p["temperature"] > 0
            and p.get("rng", "torch") == "torch" and p.get("top_p_rule", "article") == "article"
            and p["max_new_tokens"] > 0 and len(run["output_ids"]) > 0)


def ratio_of(prob, q):
    """genrepro's float32 ratio p / q for a probability it recorded (a float32 value held in double)."""
    return float(torch.tensor(prob, dtype=torch.float32) / q)


def expected_draw(probs, q):
    ratios = probs / q
    values, ids = torch.topk(ratios, 2)
    r1, r2 = float(values[0]), float(values[1])
    winner = int(torch.argmax(ratios))
    if not (math.isfinite(r1) and r2 > 0):
        return winner, None
    return winner, {"runner_up": int(ids[1]), "margin": math.log(r1 / r2)}


def check_margin(step, token, runner_up, probs, q, got, stats):
    """The recorded margin against the ratios of genrepro's own recorded probabilities where they are
    listed (exact), else against this forward pass's probability for the runner-up (within the
    relative difference of the two forward passes' probabilities at this step). Returns a problem or None."""
    recorded = {c["id"]: c["prob"] for c in step["top"]}
    recorded[token] = step["prob"]
    r_winner = ratio_of(step["prob"], q[token])
    if runner_up in recorded:
        want = math.log(r_winner / ratio_of(recorded[runner_up], q[runner_up]))
        stats["exact"] += 1
        if got["margin"] != want:
            return f"margin {got['margin']!r}; from the recorded probabilities and torch's draws: {want!r} (bit for bit)"
        return None
    # ln p moves by the same amount for every token when the logits move alike (softmax's shift),
    # so the listed tokens' |delta ln p| bounds the runner-up's; 4x that, and float32 rounding.
    spread = max(abs(math.log(p) - math.log(float(probs[i]))) for i, p in recorded.items() if p > 0)
    tolerance = 4 * spread + 1e-6
    want = math.log(r_winner / float(probs[runner_up] / q[runner_up]))
    stats["bounded"] += 1
    stats["bounded_delta"] = max(stats["bounded_delta"], abs(got["margin"] - want))
    if not abs(got["margin"] - want) <= tolerance:
        return (f"margin {got['margin']!r}; from this forward pass's runner-up probability: {want!r} "
                f"(tolerance {tolerance:.3g}: 4 x the largest |delta ln p| of the listed tokens, {spread:.3g}, + 1e-6)")
    return None


def reference_steps(w, run):
    """Per step of the run's recorded tokens: this forward pass's probs, torch's draws q, the race's
    winner and expected record, and what torch.multinomial drew on the run's generator."""
    p = run["params"]
    g = torch.Generator().manual_seed(p["seed"])
    ids = list(run["prompt_ids"])
    out = []
    for token in run["output_ids"][:len(run["steps"])]:
        logits = gpt2_reference.forward_logits(w, ids)[-1]
        probs = chain_probs(logits, p)
        clone = torch.Generator()
        clone.set_state(g.get_state())
        q = torch.empty(probs.numel()).exponential_(generator=clone)
        winner, want = expected_draw(probs, q)
        drawn = int(torch.multinomial(probs, 1, generator=g))
        out.append((probs, q, winner, want, drawn))
        ids.append(token)
    return out


def replay(w, run, stats, problems, cache):
    # The same prompt, parameters and tokens replay the same (a golden and the run that matches it):
    # the forward passes are made once and each file's records checked against them.
    key = (tuple(run["prompt_ids"]), json.dumps(run["params"], sort_keys=True), tuple(run["output_ids"]))
    if key not in cache:
        cache[key] = reference_steps(w, run)
    for k, step in enumerate(run["steps"]):
        token = run["output_ids"][k]
        probs, q, winner, want, drawn = cache[key][k]
        where = f"{run['id']} step {k}"
        if not (drawn == winner == token):
            problems.append(f"{where}: torch.multinomial drew {drawn}, the race's argmax is {winner}, the run recorded {token}")
            return
        got = step.get("draw")
        if want is None:
            if got is not None:
                problems.append(f"{where}: genrepro recorded {got}; the reference has no runner-up (one token drawable)")
            stats["no_draw"] += 1
        elif got is None:
            problems.append(f"{where}: genrepro recorded no draw; the reference's runner-up {want['runner_up']}, margin {want['margin']}")
        elif got.get("rule") != "exponential_race" or got["runner_up"] != want["runner_up"]:
            problems.append(f"{where}: genrepro recorded {got}; the reference: rule exponential_race, runner_up {want['runner_up']}")
        else:
            problem = check_margin(step, token, want["runner_up"], probs, q, got, stats)
            if problem:
                problems.append(f"{where}: {problem}")
            else:
                stats["draws"] += 1
                stats["smallest_margin"] = min(stats["smallest_margin"], got["margin"])
    stats["runs"] += 1


def evidence_files(paths):
    for path in paths:
        if os.path.isdir(path):
            yield from sorted(glob.glob(os.path.join(path, "*.json")))
        else:
            yield path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--evidence", nargs="+", required=True, help="evidence files or directories of them")
    ap.add_argument("--expect-runs", type=int, required=True)
    ap.add_argument("--expect-draws", type=int, required=True)
    a = ap.parse_args(argv)
    torch_threads.use_threads(torch)
    w = gpt2_reference.Gpt2Weights(a.model)
    stats = {"runs": 0, "draws": 0, "exact": 0, "bounded": 0, "bounded_delta": 0.0, "no_draw": 0, "smallest_margin": math.inf}
    problems = []
    cache = {}
    for path in evidence_files(a.evidence):
        with open(path) as f:
            for run in json.load(f)["runs"]:
                if replayable(run):
                    replay(w, run, stats, problems, cache)
    for line in problems:
        print("FAIL: " + line)
    print(f"compared {stats['runs']} sampled runs: {stats['draws']} recorded draws agree with torch's race "
          f"(runner-up equal at every one; margin bit for bit at {stats['exact']} whose runner-up is listed, "
          f"within the forward passes' difference at {stats['bounded']}: largest |delta| {stats['bounded_delta']:.3g}; "
          f"smallest margin {stats['smallest_margin']:.3g}); {stats['no_draw']} steps with one drawable token and no record; "
          f"{len(cache)} distinct replays")
    if stats["runs"] != a.expect_runs or stats["draws"] != a.expect_draws:
        print(f"FAIL: compared {stats['runs']} runs and {stats['draws']} draws; expected {a.expect_runs} and {a.expect_draws}")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
