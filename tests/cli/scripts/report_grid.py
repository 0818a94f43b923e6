#!/usr/bin/env python3
"""The report of an experiment grid: its summaries' numbers, recomputed here from
evidence.json alone, and its page rendered in headless Chromium.

  make      `genrepro run` of a grid on the tiny fixture model: 2 prompts x 3 temperatures x 50
            seeds = 300 runs of 3 new tokens (few tokens: the page, not the model, is under test).
  figures   `genrepro report --json` on that evidence: every figure of every cell in grid-cells.csv
            and grid-kept-per-step.csv equals the JSON's, and both equal this script's own
            computation from evidence.json (its own cells, per-run figures, quantiles, splitmix64
            and bootstrap, written from docs/report.md, importing nothing of genrepro's); every run
            is in exactly one cell; each per-figure chart's labels are the CSV's numbers. Control: the same computation with bootstrap seed 25 instead of
            the recorded 24 gives other intervals, so the comparison can fail and the recorded
            seed is the one the report used.
  screenshot the report (with --article, so the article's nucleus sizes are drawn) in headless
            Chromium at 1280 px: the page is not wider than the window (the sha256 column once
            made it 1292 px), the grid's summaries fit in MAX_SUMMARY_SCREENS screens, every chart
            there lies inside the page with ink on both axes, the per-run listings are folded,
            and each per-figure chart draws one dot per run (none cut); the last two checks are
            shown to fail on a page without <details> and a chart with one dot changed. Exit 77 without Chromium
            or python3-pil, except with CI=true.
"""
import argparse
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_screenshot as shot  # noqa: E402  (the Chromium runner, geometry script and pixel checks)

SKIP = 77
TIMEOUT_S = 300
PROMPTS = ["the river bank was", "once upon a time"]
TEMPERATURES = [0.5, 1.0, 2.0]
SEEDS = list(range(1, 51))
NEW_TOKENS = 3
FRAMEWORK_SEEDS = list(range(1, 6))  # the fewest seeds a grid cell is summarised with (kMinGridSeeds)
MASK64 = (1 << 64) - 1
RESAMPLES = 1000
DEFAULT_BOOTSTRAP_SEED = 24  # docs/report.md
LOW, HIGH = 0.025, 0.975
NGRAM = 4
FIGURES = ["eos_rate", "stop_step_median", "unique_share", "longest_repeat", "repeated_4gram_rate", "distinct_1",
           "distinct_2", "chosen_prob"]
# The report computes in the same order with the same IEEE doubles and prints 17 significant digits
# (CSV) or the shortest round-trip text (JSON), so every number must come back exactly: no tolerance.
SCREEN = 900
MAX_SUMMARY_SCREENS = 4
WIDTH = 1280


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def experiment():
    return {"name": "grid300", "description": "2 prompts x 3 temperatures x 50 seeds (tests/cli/scripts/report_grid.py)",
            "prompts": PROMPTS, "max_new_tokens": NEW_TOKENS, "use_cache": True, "record": {"top_candidates": 0},
            "runs": [{"mode": "sample", "temperature": TEMPERATURES, "top_p": 0.9, "seed": SEEDS}]}


def framework_experiment(path):
    """experiments/grids/framework_grid.json with FRAMEWORK_SEEDS seeds and NEW_TOKENS tokens: the same
    nine cells (three frameworks' rules x three temperatures), so the same labels, in fewer runs."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    spec["max_new_tokens"] = NEW_TOKENS
    for entry in spec["runs"]:
        entry["seed"] = FRAMEWORK_SEEDS
    return spec


def run_experiment(a, spec, name):
    path = os.path.join(a.work, name + ".json")
    with open(path, "w") as f:
        json.dump(spec, f)
    r = subprocess.run([a.binary, "run", path, "--model", a.model, "--threads", "2", "--out", os.path.join(a.work, name + "-evidence.json")],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro run %s: exit %d: %s" % (name, r.returncode, r.stderr))


def make(a):
    os.makedirs(a.work, exist_ok=True)
    spec = os.path.join(a.work, "grid300.json")
    with open(spec, "w") as f:
        json.dump(experiment(), f)
    r = subprocess.run([a.binary, "run", spec, "--model", a.model, "--threads", "2", "--out", os.path.join(a.work, "evidence.json")],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro run: exit %d: %s" % (r.returncode, r.stderr))
    run_experiment(a, framework_experiment(a.framework_grid), "framework-grid")
    print("made %d runs, and %d of the framework grid" % (len(SEEDS * len(PROMPTS) * len(TEMPERATURES)), 9 * len(FRAMEWORK_SEEDS)))


# ---- the independent computation (docs/report.md, "Grid summaries") ----

class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        return (self.next() * n) >> 64


def quantile(sorted_values, q):
    if not sorted_values:
        return None
    h = (len(sorted_values) - 1) * q
    lo = int(math.floor(h))
    if lo + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[lo] + (h - lo) * (sorted_values[lo + 1] - sorted_values[lo])


def longest_repeat(ids):
    """Brute force (not the report's dynamic programming): the longest L such that some span of L
    tokens occurs twice without overlapping."""
    n, best = len(ids), 0
    for length in range(1, n // 2 + 1):
        spans = {}
        found = False
        for i in range(n - length + 1):
            key = tuple(ids[i:i + length])
            if key in spans and i - spans[key] >= length:
                found = True
                break
            spans.setdefault(key, i)
        if found:
            best = length
    return best


def run_values(run):
    ids = run["output_ids"]
    grams = [tuple(ids[i:i + NGRAM]) for i in range(len(ids) - NGRAM + 1)]
    seen, repeated = set(), 0
    for g in grams:
        repeated += g in seen
        seen.add(g)
    probs = [s["prob_t1"] for s in run["steps"] if s["token_id"] is not None]
    total = 0.0
    for p in probs:
        total += p
    return {"eos": 1.0 if run["stop"]["reason"] == "eos" else 0.0,
            "stop": float(run["stop"]["step"]),
            "repeat": float(longest_repeat(ids)),
            "ngram": repeated / len(grams) if grams else None,
            "d1": len(set(ids)) / len(ids) if ids else None,
            "d2": len(set(zip(ids, ids[1:]))) / (len(ids) - 1) if len(ids) >= 2 else None,
            "p": total / len(probs) if probs else None}


def values_of(figure, cell, i):
    v = cell["values"][i]
    return {"eos_rate": v["eos"], "stop_step_median": v["stop"], "unique_share": v["unique"], "longest_repeat": v["repeat"],
            "repeated_4gram_rate": v["ngram"], "distinct_1": v["d1"], "distinct_2": v["d2"], "chosen_prob": v["p"]}[figure]


def statistic(figure, values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    if figure == "stop_step_median":
        return quantile(sorted(values), 0.5)
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def cells_of(evidence):
    """Cells as docs/report.md defines them: a grid's generating runs grouped by prompt and every
    parameter but the seed, in the order each cell's first run appears."""
    cells = []
    where = {}
    for run in evidence["runs"]:
        p = run["params"]
        if p["max_new_tokens"] == 0:
            continue
        key = (run["experiment"], run["prompt"], p["mode"], p["temperature"], p["top_k"], p["top_p"], tuple(p["sampler_order"]),
               p["top_p_rule"], p["rng"], p["max_new_tokens"], p["stop_at_eos"], p["use_cache"])
        if key not in where:
            where[key] = len(cells)
            cells.append({"prompt": run["prompt"], "runs": []})
        cells[where[key]]["runs"].append(run)
    return cells


def summarize(evidence, bootstrap_seed):
    cells = cells_of(evidence)
    seeds = SplitMix64(bootstrap_seed)
    for c in cells:
        runs = c["runs"]
        n = len(runs)
        outputs = [tuple(r["output_ids"]) for r in runs]
        c["values"] = []
        for r, out in zip(runs, outputs):
            v = run_values(r)
            v["unique"] = 1.0 if outputs.count(out) == 1 else 0.0
            c["values"].append(v)
        c["distinct"] = len(set(outputs))
        c["stream_seed"] = seeds.next()
        stops = sorted(float(r["stop"]["step"]) for r in runs)
        c["stop_quartiles"] = [stops[0], quantile(stops, 0.25), quantile(stops, 0.75), stops[-1]]
        steps = max(len(r["steps"]) for r in runs)

        def kept_values(which, s):
            return sorted(float(runs[i]["steps"][s]["kept"]) for i in which if s < len(runs[i]["steps"]))

        c["kept"] = []
        for s in range(steps):
            v = kept_values(range(n), s)
            c["kept"].append({"step": s + 1, "n": len(v), "median": quantile(v, 0.5), "q1": quantile(v, 0.25), "q3": quantile(v, 0.75)})
        stats = {f: [] for f in FIGURES}
        kept_stats = [[] for _ in range(steps)]
        per_figure = {f: [values_of(f, c, i) for i in range(n)] for f in FIGURES}
        rng = SplitMix64(c["stream_seed"])
        for _ in range(RESAMPLES):
            drawn = [rng.below(n) for _ in range(n)]
            for f in FIGURES:
                values = per_figure[f]
                stats[f].append(statistic(f, [values[i] for i in drawn]))
            for s in range(steps):
                kept_stats[s].append(quantile(kept_values(drawn, s), 0.5))
        c["figures"] = {}
        for f in FIGURES:
            defined = [values_of(f, c, i) for i in range(n) if values_of(f, c, i) is not None]
            resampled = sorted(x for x in stats[f] if x is not None)
            c["figures"][f] = {"value": statistic(f, defined), "lo": quantile(resampled, LOW), "hi": quantile(resampled, HIGH),
                               "n": len(defined)}
        for s in range(steps):
            resampled = sorted(x for x in kept_stats[s] if x is not None)
            c["kept"][s]["median_lo"] = quantile(resampled, LOW)
            c["kept"][s]["median_hi"] = quantile(resampled, HIGH)
    return cells


# ---- the report's three forms ----

def report(a, out, *extra):
    r = subprocess.run([a.binary, "report", os.path.join(a.work, "evidence.json"), "--out", out, "--json", *extra],
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro report: exit %d: %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout)


def csv_number(text):
    return None if text == "" else float(text)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def same(what, expected, found):
    if expected != found:
        fail("%s: expected %r (recomputed from evidence.json), the report has %r" % (what, expected, found))


def check(a, evidence):
    out = os.path.join(a.work, "figures")
    j = report(a, out)
    seed = j["bootstrap_seed"]
    same("bootstrap seed", DEFAULT_BOOTSTRAP_SEED, seed)
    mine = summarize(evidence, seed)
    same("grids", 1, len(j["grids"]))
    g = j["grids"][0]
    same("bootstrap seed", seed, g["bootstrap"]["seed"])
    same("resamples", RESAMPLES, g["bootstrap"]["resamples"])
    same("runs summarized", len(evidence["runs"]), g["runs"])
    same("cells", len(mine), len(g["cells"]))
    same("runs in cells", len(evidence["runs"]), sum(c["runs"] for c in g["cells"]))
    rows = read_csv(os.path.join(out, "grid-cells.csv"))
    kept_rows = read_csv(os.path.join(out, "grid-kept-per-step.csv"))
    same("CSV rows", len(mine), len(rows))
    compared = 0
    for c, jc, row in zip(mine, g["cells"], rows):
        name = "cell %d (%r %s)" % (jc["cell"], jc["prompt"], jc["parameters"])
        same(name + " prompt", c["prompt"], jc["prompt"])
        same(name + " CSV prompt", c["prompt"], row["prompt"])
        same(name + " seeds", [r["params"]["seed"] for r in c["runs"]], jc["seeds"])
        same(name + " runs (CSV)", len(c["runs"]), int(row["runs"]))
        same(name + " stream seed", c["stream_seed"], jc["stream_seed"])
        same(name + " stream seed (CSV)", c["stream_seed"], int(row["stream_seed"]))
        same(name + " distinct continuations", c["distinct"], jc["distinct_continuations"])
        same(name + " distinct continuations (CSV)", c["distinct"], int(row["distinct_continuations"]))
        quartiles = [jc["stop_step"][k] for k in ("min", "q1", "q3", "max")]
        same(name + " stop quartiles", c["stop_quartiles"], quartiles)
        same(name + " stop quartiles (CSV)", c["stop_quartiles"],
             [csv_number(row["stop_step_" + k]) for k in ("min", "q1", "q3", "max")])
        for f in FIGURES:
            e = c["figures"][f]
            same("%s %s (JSON)" % (name, f), e, jc["figures"][f])
            from_csv = {"value": csv_number(row[f]), "lo": csv_number(row[f + "_lo"]), "hi": csv_number(row[f + "_hi"]),
                        "n": int(row[f + "_n"])}
            same("%s %s (CSV)" % (name, f), e, from_csv)
            compared += 1
        mine_kept = c["kept"]
        csv_kept = [r for r in kept_rows if int(r["cell"]) == jc["cell"]]
        same(name + " kept steps", len(mine_kept), len(jc["kept_per_step"]))
        same(name + " kept steps (CSV)", len(mine_kept), len(csv_kept))
        for k, jk, rk in zip(mine_kept, jc["kept_per_step"], csv_kept):
            same("%s kept at new token %d (JSON)" % (name, k["step"]), k, jk)
            rk_values = {"step": int(rk["step"]), "n": int(rk["n"])}
            for key in ("median", "q1", "q3", "median_lo", "median_hi"):
                rk_values[key] = csv_number(rk[key])
            same("%s kept at new token %d (CSV)" % (name, k["step"]), k, rk_values)
            compared += 1
    print("bootstrap seed %d: %d cells, %d figures and %d kept-set steps equal in CSV, JSON and the recomputation" %
          (seed, len(mine), compared - sum(len(c["kept"]) for c in mine), sum(len(c["kept"]) for c in mine)))
    return j


# Each per-figure chart, the CSV name of its figure and the decimals its labels print.
CHARTS = [("eos", "eos_rate", 2), ("stop", "stop_step_median", 1), ("unique", "unique_share", 2), ("repeat", "longest_repeat", 1), ("ngram", "repeated_4gram_rate", 2),
          ("distinct1", "distinct_1", 2), ("distinct2", "distinct_2", 2), ("chosen-p", "chosen_prob", 2)]


def check_charts(out):
    """The charts say what the CSV says: each forest chart's value labels, row by row (cells in CSV
    order, facets by prompt in order of appearance, as the CSV lists them here), are the CSV's value
    and interval printed with the chart's decimals."""
    rows = read_csv(os.path.join(out, "grid-cells.csv"))
    for stem, name, decimals in CHARTS:
        with open(os.path.join(out, "grid-1-%s.svg" % stem), encoding="utf-8") as f:
            labels = re.findall(r">(-?[0-9.]+ \[-?[0-9.]+, -?[0-9.]+\]|-?[0-9.]+ \(1 seed\)|n/a)(?: n=[0-9]+)?</text>", f.read())
        expected = []
        for r in rows:
            if r[name] == "":
                expected.append("n/a")
            else:
                fmt = lambda v: "%.*f" % (decimals, float(v))
                expected.append("%s [%s, %s]" % (fmt(r[name]), fmt(r[name + "_lo"]), fmt(r[name + "_hi"])))
        same("grid-1-%s.svg value labels" % stem, expected, labels)


def figures(a):
    with open(os.path.join(a.work, "evidence.json"), encoding="utf-8") as f:
        evidence = json.load(f)
    j = check(a, evidence)
    check_charts(os.path.join(a.work, "figures"))
    print("the %d per-figure charts label every cell with the CSV's value and interval" % len(CHARTS))
    other = summarize(evidence, DEFAULT_BOOTSTRAP_SEED + 1)
    theirs = [(f, c["figures"][f]["lo"], c["figures"][f]["hi"]) for c in j["grids"][0]["cells"] for f in FIGURES]
    mine = [(f, c["figures"][f]["lo"], c["figures"][f]["hi"]) for c in other for f in FIGURES]
    if theirs == mine:
        fail("bootstrap seed %d gives the report's intervals too: the comparison cannot tell seeds apart" %
             (DEFAULT_BOOTSTRAP_SEED + 1))
    print("control: bootstrap seed %d gives other intervals" % (DEFAULT_BOOTSTRAP_SEED + 1))


# ---- the page ----

def folded(page_html):
    return re.search(r"<details>\s*<summary>All 300 runs of &quot;grid300&quot;, one by one</summary>", page_html) is not None


def run_dots(svg):
    """The runs a forest chart draws: its small dots (report_svg.cpp, fill-opacity 0.35)."""
    return len(re.findall(r'<circle [^>]*fill-opacity="0\.35"', svg))


def screenshot(a):
    chromium = shot.find_chromium()
    if not chromium and os.environ.get("CI") == "true":
        fail("CI=true but no Chromium is installed: scripts/setup.sh --tests installs it in CI")
    if not chromium:
        print("skipped: no Chromium installed (scripts/setup.sh installs it when CI=true or GENREPRO_SETUP_CHROMIUM=1)")
        sys.exit(SKIP)
    try:
        from PIL import Image
    except ImportError:
        print("skipped: the Python Imaging Library is not installed for %s (apt-get install python3-pil)" % sys.executable)
        sys.exit(SKIP)
    out = os.path.join(a.work, "page")
    report(a, out, "--article", a.article)
    page = os.path.join(out, "report.html")
    scratch = tempfile.mkdtemp(prefix="genrepro-grid-shot-", dir=a.work)
    browser = shot.Chromium(chromium, scratch)  # one Chromium for the DOM and the screenshot
    try:
        check_page(a, browser, scratch, out, page, Image)
        check_framework_labels(a, browser)
    finally:
        browser.close()
    # Chromium's profile and the screenshot: kept only when a check failed (fail() exits above).
    shutil.rmtree(scratch, ignore_errors=True)


# Every text of a chart, rendered: its box on the page against the chart's own box. An SVG opened as
# the page is laid out at its width and height, so a label drawn past an edge is cut on screen.
TEXT_BOXES_SCRIPT = """(() => {
  const svg = document.documentElement.getBoundingClientRect();
  return Array.from(document.querySelectorAll('text')).map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, cut: r.left < svg.left - 0.5 || r.right > svg.right + 0.5 ||
                                      r.top < svg.top - 0.5 || r.bottom > svg.bottom + 0.5};
  });
})()"""


def rendered_texts(browser, svg_path):
    browser._load(svg_path, shot.FIRST_SCREEN)
    r = browser._call("Runtime.evaluate", {"expression": TEXT_BOXES_SCRIPT, "returnByValue": True}, session=True)
    return r["result"]["value"]


def label_problems(texts, name):
    problems = ["%s: label %r is cut at the chart's edge" % (name, t["text"]) for t in texts if t["cut"]]
    problems += ["%s: label %r is shortened" % (name, t["text"]) for t in texts if "\u2026" in t["text"] or "..." in t["text"]]
    return problems


def check_framework_labels(a, browser):
    """The framework grid's charts, rendered: every label whole and inside its chart, and every cell
    named by its framework and its controls (docs/report.md, grid summaries)."""
    out = os.path.join(a.work, "framework-page")
    evidence = os.path.join(a.work, "framework-grid-evidence.json")
    r = subprocess.run([a.binary, "report", evidence, "--out", out], capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro report (framework grid): exit %d: %s" % (r.returncode, r.stderr))
    charts = sorted(n for n in os.listdir(out) if n.startswith("grid-") and n.endswith(".svg"))
    if not charts:
        fail("the framework grid's report has no grid charts: %s" % sorted(os.listdir(out)))
    seen, problems = set(), []
    for name in charts:
        texts = rendered_texts(browser, os.path.join(out, name))
        problems += label_problems(texts, name)
        seen.update(t["text"] for t in texts)
    if problems:
        fail("; ".join(problems[:5]) + (" (%d in all)" % len(problems) if len(problems) > 5 else ""))
    for t in (0.7, 1.0, 1.3):
        for label in ("article T=%g" % t, "llama.cpp T=%g top_k=40 top_p=0.95 min_p=0.05" % t, "hf T=%g top_k=50 repetition_penalty=1.3" % t):
            if not any(label == s or s.startswith(label + " ") for s in seen):
                fail("no chart label names the cell %r; labels: %s" % (label, sorted(seen)[:40]))
    # Controls: a label moved past the right edge, and one shortened, are seen.
    moved = os.path.join(a.work, "framework-page", "control-moved.svg")
    with open(os.path.join(out, charts[0]), encoding="utf-8") as f:
        svg = f.read()
    with open(moved, "w", encoding="utf-8") as f:
        f.write(re.sub(r'(<text[^>]*?) x="[0-9.]+"', r'\1 x="100000"', svg, count=1))
    if not label_problems(rendered_texts(browser, moved), "control"):
        fail("control: a label moved past the chart's edge is not seen as cut")
    if not label_problems([{"text": "llama.cpp T=0.7 top_k=40 top_p=0\u2026", "cut": False}], "control"):
        fail("control: a shortened label is not seen")
    print("framework grid: %d charts, %d labels rendered whole inside their charts; all 9 cells named by framework and controls"
          % (len(charts), len(seen)))


def check_page(a, browser, scratch, out, page, Image):
    measured = shot.with_additions(page, "measured.html", body_end=shot.GEOMETRY_SCRIPT)
    geometry = shot.geometry_of(browser.dom(measured))
    if geometry["width"] > WIDTH:
        fail("the page is %d px wide in a %d px window" % (geometry["width"], WIDTH))
    headings = geometry["headings"]
    at = [i for i, h in enumerate(headings) if h["text"] == "Grid summaries"]
    if not at or at[0] + 1 >= len(headings):
        fail("no 'Grid summaries' section followed by another section: %s" % [h["text"] for h in headings])
    top, bottom = headings[at[0]]["y"], headings[at[0] + 1]["y"]
    if bottom - top > MAX_SUMMARY_SCREENS * SCREEN:
        fail("the grid's summaries take %d px, more than %d screens of %d px" % (bottom - top, MAX_SUMMARY_SCREENS, SCREEN))
    charts = [c for c in geometry["charts"] if top <= c["box"]["y"] < bottom]
    if len(charts) != len(PROMPTS) + len(FIGURES):
        fail("the grid's summaries have %d charts, expected %d (kept sets per prompt, one per figure)" %
             (len(charts), len(PROMPTS) + len(FIGURES)))
    # The page measured, made as tall as it is: one load gives the geometry and the screenshot.
    png = browser.screenshot_of_loaded(measured, geometry["height"], os.path.join(scratch, "page.png"))
    if a.keep:
        import shutil
        shutil.copyfile(png, a.keep)
    pixels = shot.pixels_of(png, Image)
    for chart in charts:
        b = chart["box"]
        if b["x"] < 0 or b["x"] + b["w"] > WIDTH + 0.5:
            fail("chart %r reaches outside the page" % chart["title"])
        for line in chart["axes"]:
            problem = shot.axis_problem(pixels, line)
            if problem:
                fail("chart %r: %s" % (chart["title"], problem))
    # The run-by-run listings are folded: the page has them inside <details> elements.
    html_text = open(page, encoding="utf-8").read()
    if not folded(html_text):
        fail("the per-run list of grid300 is not folded into a <details> element")
    if folded(html_text.replace("<details>", "<div>")):
        fail("control: the fold check passes a page without <details>")
    # Every run drawn: each per-figure chart (these figures are defined for every run) has one dot per run.
    runs = len(SEEDS) * len(PROMPTS) * len(TEMPERATURES)
    for stem in ("eos", "stop", "unique", "repeat", "chosen-p"):
        with open(os.path.join(out, "grid-1-%s.svg" % stem), encoding="utf-8") as f:
            svg = f.read()
        if run_dots(svg) != runs:
            fail("grid-1-%s.svg draws %d runs, the grid has %d" % (stem, run_dots(svg), runs))
        cut = svg.replace('fill-opacity="0.35"', 'fill-opacity="0.36"', 1)
        if run_dots(cut) == runs:
            fail("control: the dot count does not notice a run left out of grid-1-%s.svg" % stem)
    print("page %dx%d: the grid's summaries take %d px (%.1f screens of %d), %d charts with both axes; every run drawn"
          % (geometry["width"], geometry["height"], bottom - top, (bottom - top) / float(SCREEN), SCREEN, len(charts)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["make", "figures", "screenshot"])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--work", required=True, help="where the evidence is made and read")
    ap.add_argument("--model", help="the tiny fixture model (make)")
    ap.add_argument("--article", help="golden/article/article-facts.json (screenshot)")
    ap.add_argument("--framework-grid", help="experiments/grids/framework_grid.json (make)")
    ap.add_argument("--keep", help="copy the screenshot here")
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)  # Chromium opens file:// URLs, which need absolute paths
    {"make": make, "figures": figures, "screenshot": screenshot}[a.step](a)


if __name__ == "__main__":
    main()
