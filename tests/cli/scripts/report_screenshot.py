#!/usr/bin/env python3
"""A headless Chromium screenshot of `genrepro report --golden` (issue 13: "report --golden on
fixture evidence with one mutated token shows a verdict section that names that run, and a
headless Chromium screenshot of the page shows it").

The evidence is golden/fixture's runs pooled into one file with one token of one run changed, so
exactly that run differs. Checked: the page Chromium renders (--dump-dom) has the verdict section
naming the run; the screenshot is a real picture (PNG, the requested size, many colours, not
mostly blank) and its top part shows the verdict's highlighted cells (td.diff, #ffe1c4), i.e. the
verdict is on the first screen. Exit 77 (ctest SKIP_RETURN_CODE) when no Chromium is installed
(scripts/setup.sh installs Debian's `chromium` as a test dependency).
"""
import argparse
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
TIMEOUT_S = 120
WIDTH, HEIGHT = 1280, 1600
# The verdict table's highlighted cells (report_html.cpp, td.diff), as Chromium paints them.
DIFF_CELL_RGB = (0xFF, 0xE1, 0xC4)
# The report opens with the verdict: its highlighted cells lie in the top half of the first screen.
VERDICT_WITHIN = 0.5
# A page of text, tables and charts: far more colours than a blank or single-colour failure page,
# and a good share of the pixels not white.
MIN_COLOURS = 50
MIN_NON_WHITE = 0.03


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def decode_png(data):
    """(width, height, rows of (r, g, b) tuples) for an 8-bit RGB or RGBA PNG, without libraries."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        fail("unexpected PNG format: depth %d colour type %d interlace %d" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def pooled_fixture_evidence(golden_dir, mutated_run):
    """Every golden/fixture run in one evidence document; `mutated_run`'s 6th token changed."""
    files = sorted(glob.glob(os.path.join(golden_dir, "*.json")))
    doc = None
    for path in files:
        with open(path) as f:
            part = json.load(f)
        if doc is None:
            doc = part
        else:
            doc["runs"] += part["runs"]
            doc["experiments"] += part["experiments"]
    run = next(r for r in doc["runs"] if r["id"] == mutated_run)
    run["output_ids"][5] += 1
    run["steps"][5]["token_id"] = run["output_ids"][5]
    return doc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--golden", required=True, help="golden/fixture")
    ap.add_argument("--keep", help="copy the screenshot here (to look at it)")
    a = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("no Chromium installed (apt-get install chromium): skipped")
        sys.exit(SKIP)
    scratch = tempfile.mkdtemp(prefix="genrepro-report-shot-")
    try:
        with open(os.path.join(a.golden, "greedy.json")) as f:
            mutated = json.load(f)["runs"][0]["id"]
        evidence = os.path.join(scratch, "mutated.json")
        with open(evidence, "w") as f:
            json.dump(pooled_fixture_evidence(a.golden, mutated), f)
        out = os.path.join(scratch, "report")
        r = subprocess.run([a.binary, "report", evidence, "--golden", a.golden, "--out", out], capture_output=True, timeout=TIMEOUT_S)
        if r.returncode != 0:
            fail("genrepro report: exit %d: %s" % (r.returncode, r.stderr.decode()))
        page = "file://" + os.path.join(out, "report.html")
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                  "--user-data-dir=" + os.path.join(scratch, "profile"), "--window-size=%d,%d" % (WIDTH, HEIGHT)]
        dom = subprocess.run(common + ["--dump-dom", page], capture_output=True, timeout=TIMEOUT_S).stdout.decode("utf-8", "replace")
        for expected in ['<h2 id="verdict-against-the-golden">Verdict against the golden</h2>',
                         '<a href="#experiment-greedy">' + mutated + "</a>", "new token 6 (steps[5])"]:
            if expected not in dom:
                fail("the rendered page lacks %r" % expected)
        shot = os.path.join(scratch, "report.png")
        subprocess.run(common + ["--screenshot=" + shot, page], capture_output=True, timeout=TIMEOUT_S)
        if not os.path.exists(shot):
            fail("chromium wrote no screenshot")
        if a.keep:
            shutil.copyfile(shot, a.keep)
        with open(shot, "rb") as f:
            width, height, rows = decode_png(f.read())
        if (width, height) != (WIDTH, HEIGHT):
            fail("screenshot is %dx%d, asked for %dx%d" % (width, height, WIDTH, HEIGHT))
        colours, non_white = set(), 0
        for row in rows:
            for px in row:
                colours.add(px)
                non_white += px != (255, 255, 255)
        share = non_white / float(width * height)
        if len(colours) < MIN_COLOURS or share < MIN_NON_WHITE:
            fail("screenshot looks blank: %d colours, %.1f%% non-white" % (len(colours), 100 * share))
        first = next((y for y, row in enumerate(rows) if DIFF_CELL_RGB in row), None)
        if first is None or first > VERDICT_WITHIN * height:
            fail("the verdict's highlighted cells are not on the first screen (first at row %s)" % first)
        print("screenshot %dx%d: %d colours, %.1f%% non-white, verdict highlight from row %d" %
              (width, height, len(colours), 100 * share, first))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
