#!/usr/bin/env python3
"""A headless Chromium screenshot of `genrepro report --golden`, checked on its pixels:
report --golden on fixture evidence with one mutated token shows a verdict section that names that
run, the page is not blank, not cut, and every chart shows its axes.

The evidence is golden/fixture's runs pooled into one file with one token of one run changed, so
exactly that run differs. Chromium renders the whole page (the viewport as tall as the document):

  1. The DOM Chromium built (its outer HTML after the load event) has the verdict section naming the run. A copy of the page
     with one inline script added (a <script> is display:none: the layout does not change) also
     records where each section heading, the last element and each chart's SVG and axis lines lie.
  2. The screenshot is a picture of the page, not of nothing: PNG, the page's size, many colours,
     a good share of non-white pixels.
  3. The verdict's highlighted cells (td.diff, #ffe1c4) are on the first screen.
  4. Nothing is cut: every section heading has ink where the layout put it, and so does the last
     element of the page; the lowest ink on the screenshot lies in that last element.
  5. Every chart has its axes: along each axis line (report_svg.cpp draws them #555555, 1 px, so
     the anti-aliased greys count) at most 5% of the length is missing (white or light grey), both
     ends are there, and a y axis is axis grey over at least half its length (a data line at the
     lowest value may cover an x axis), so a chart clipped on any side, or drawn without axes,
     fails.

The same session renders the sensitivity page (`genrepro sensitivity --compare`, docs/sensitivity.md)
of three cells made from the same evidence: the golden, the changed copy (its greedy run diverges at
new token 6) and a copy with one run dropped (missing) and some steps' entropy nudged (same tokens,
different bits), in the same Chromium (one browser start for the whole test, driven over the
DevTools protocol): the DOM and the screenshot come from one load in a viewport taller than the
page, cut to the page's height. Its DOM has a heatmap cell (<title>) for
every run in every cell; its screenshot passes checks 2, 4 and 5, and its heatmap shows the four
class colours (harness/report/sensitivity_page.cpp) in the heatmap's box.

Each check is also shown to fail: the screenshot made blank, its lower third erased, each chart's
right fifth erased, or the axes repainted in the gridlines' light grey must fail the check it
breaks (--no-controls leaves these out).

Exit 77 (ctest SKIP_RETURN_CODE) with the reason when no Chromium or no Python Imaging Library is
installed (scripts/setup.sh installs both when CI=true, or with GENREPRO_SETUP_CHROMIUM=1).
"""
import argparse
import base64
import fcntl
import glob
import html
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
TIMEOUT_S = 120
WIDTH = 1280
FIRST_SCREEN = 900
# Taller windows than this fail to paint in headless Chromium here; the fixture's report is ~19,000 px.
MAX_HEIGHT = 30000
DIFF_CELL_RGB = (0xFF, 0xE1, 0xC4)
MIN_COLOURS = 50
MIN_NON_WHITE = 0.02
# An axis is #555555 at 1 px; centred on a pixel edge it is painted as two lighter greys. Axis grey
# means r = g = b within 10 and a value at most 0xB0 (the gridlines are #e4e4e4).
AXIS_MAX_VALUE = 0xB0
AXIS_MAX_MISSING = 0.05
# A data line at the lowest value may cover an x axis almost whole (the probability panels do); the
# y axis, which data only ever crosses, must show its own grey over most of its length.
AXIS_MIN_GREY = {"x": 0.0, "y": 0.5}
AXIS_END_PX = 3

GEOMETRY_SCRIPT = """<script>
(function () {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const g = {
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    headings: [...document.querySelectorAll('h2')].map((h) => Object.assign({text: h.textContent}, box(h))),
    last: box([...document.body.children].filter((e) => !['SCRIPT', 'STYLE'].includes(e.tagName)).pop()),
    charts: [...document.querySelectorAll('figure svg')].map((s) => ({
      title: (s.querySelector('title') || {textContent: ''}).textContent,
      box: box(s),
      axes: [...s.querySelectorAll('line[stroke="#555555"]')].slice(0, 2).map(box)})),
  };
  const out = document.createElement('script');
  out.type = 'application/json';
  out.id = 'genrepro-geometry';
  out.textContent = JSON.stringify(g);
  document.head.appendChild(out);
})();
</script>"""

# Negative controls: the screenshot broken in one way, and the check that must then fail. (Edits
# of the picture itself, so they cost no further Chromium run; each works on a copy of the pixel
# array, which is a plain memory copy, where a PIL copy of a 24-megapixel page took 0.15 s.)
def control_blank(pixels, geometry):
    import numpy
    return numpy.full_like(pixels, 255)


def control_cut(pixels, geometry):
    """The lower third of the page not drawn."""
    out = pixels.copy()
    out[pixels.shape[0] * 2 // 3:] = 255
    return out


def page_slice(pixels, left, top, right, bottom):
    """The rows and columns of a box (right and bottom excluded), clipped to the image as PIL
    clips a paste or a crop (a negative index would count from the other edge)."""
    height, width = pixels.shape[:2]
    return (slice(min(max(top, 0), height), min(max(bottom, 0), height)),
            slice(min(max(left, 0), width), min(max(right, 0), width)))


def control_chart_clipped(pixels, geometry):
    """Each chart's right fifth not drawn."""
    out = pixels.copy()
    for chart in geometry["charts"]:
        b = chart["box"]
        out[page_slice(out, int(b["x"] + 0.8 * b["w"]), int(b["y"]), int(b["x"] + b["w"]) + 1, int(b["y"] + b["h"]) + 1)] = 255
    return out


def control_axes_missing(pixels, geometry):
    """Each chart's axes drawn in the gridlines' light grey instead of #555555."""
    out = pixels.copy()
    for chart in geometry["charts"]:
        for line in chart["axes"]:
            # The axis grey pixels of the line's box widened by 2 px on every side.
            region = out[page_slice(out, int(line["x"]) - 2, int(line["y"]) - 2,
                                    int(line["x"] + line["w"]) + 3, int(line["y"] + line["h"]) + 3)]
            region[pixel_kinds(region) == AXIS] = 0xE4
    return out


CONTROLS = [("blank", control_blank, "blank"), ("cut", control_cut, "cut"),
            ("chart clipped", control_chart_clipped, "axes"), ("axes missing", control_axes_missing, "axes")]

# The heatmap's class colours (harness/report/sensitivity_page.cpp, class_color).
CLASS_RGB = {"identical": (0x00, 0x9E, 0x73), "same_tokens": (0xF0, 0xE4, 0x42), "diverged": (0xD5, 0x5E, 0x00),
             "missing": (0xBB, 0xBB, 0xBB)}
HEATMAP_TITLE = "Every run in every cell, against the reference"


def control_diverged_repainted(pixels, geometry):
    """The heatmap's diverged cells painted in the identical colour."""
    import numpy
    out = pixels.copy()
    out[numpy.all(out == CLASS_RGB["diverged"], axis=2)] = CLASS_RGB["identical"]
    return out


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def skip(msg):
    print("skipped: " + msg)
    sys.exit(SKIP)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def decode(binary, ids):
    """The text genrepro's tokenizer gives for `ids`, as evidence records it (invalid bytes as U+FFFD)."""
    r = subprocess.run([binary, "tokenize", "--decode", "--input", "-"], input=json.dumps(ids) + "\n",
                       capture_output=True, text=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro tokenize --decode: exit %d: %s" % (r.returncode, r.stderr))
    return json.loads(r.stdout.splitlines()[0])["text"]


def change_sixth_token(binary, run):
    """The greedy run picks its runner-up at new token 6, as a changed model would: the step's two
    best candidates swap ids and texts (each keeps its probability), so the run stays consistent
    (docs/validation.md) and the reader accepts it; the texts follow the new ids."""
    step = run["steps"][5]
    best, second = step["top"][0], step["top"][1]
    best["id"], second["id"] = second["id"], best["id"]
    best["text"], second["text"] = second["text"], best["text"]
    step["token_id"], step["token_text"] = best["id"], best["text"]
    run["output_ids"][5] = best["id"]
    run["text"] = decode(binary, run["prompt_ids"] + run["output_ids"])
    run["continuation"] = decode(binary, run["output_ids"])


def pooled_fixture_evidence(binary, golden_dir, mutated_run):
    """Every golden/fixture run in one evidence document; `mutated_run`'s 6th token changed (None: none)."""
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
    if mutated_run is not None:
        change_sixth_token(binary, next(r for r in doc["runs"] if r["id"] == mutated_run))
    return doc


class Chromium:
    """One headless Chromium for every page a test renders, driven over the DevTools protocol on a
    pipe (--remote-debugging-pipe: commands on the browser's fd 3, replies and events on its fd 4,
    each a JSON message ended by NUL). A start costs more than rendering a short page (a browser
    process and its renderer, GPU and network processes), so a test that needs the DOM and the
    screenshots of several pages starts one. Each page is loaded into a viewport WIDTH wide and as
    tall as asked (Emulation.setDeviceMetricsOverride; what --window-size did for one page per
    start), and the screenshot is that viewport, as --screenshot took it."""

    def __init__(self, binary, scratch):
        self.binary, self.scratch = binary, scratch
        self.proc = None
        self.pending = b""
        self.events = []
        self.last_id = 0
        self.session = None
        self.loaded = None  # the page whose load event fired last

    def _start(self):
        commands_r, commands_w = os.pipe()
        replies_r, replies_w = os.pipe()
        # Above 9, so that placing them at 3 and 4 in the child cannot overwrite one with the other.
        to_child = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands_r, replies_w)]
        for fd in (commands_r, replies_w):
            os.close(fd)

        def place_pipes():  # in the child, before exec: dup2 leaves fds 3 and 4 open across exec
            os.dup2(to_child[0], 3)
            os.dup2(to_child[1], 4)

        self.stderr = open(os.path.join(self.scratch, "chromium.log"), "wb")
        cmd = [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--force-device-scale-factor=1", "--user-data-dir=" + os.path.join(self.scratch, "profile"),
               "--window-size=%d,%d" % (WIDTH, FIRST_SCREEN), "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
                                     preexec_fn=place_pipes, close_fds=False)
        for fd in to_child:
            os.close(fd)
        self.to_browser, self.from_browser = commands_w, replies_r
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self._call("Page.enable", {}, session=True)

    def _log(self):
        self.stderr.flush()
        with open(self.stderr.name, "rb") as f:
            return f.read().decode("utf-8", "replace")[-2000:]

    def _message(self, deadline):
        """The next message from the browser (a reply or an event)."""
        # A screenshot's reply is megabytes read in pipe-sized chunks: kept as a list and joined once,
        # each chunk searched once for the NUL (appending to one bytes object and searching all of it
        # for every chunk copied and scanned it over and over).
        chunks = [self.pending]
        while b"\0" not in chunks[-1]:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                fail("chromium did not answer within %d s: %s" % (TIMEOUT_S, self._log()))
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                fail("chromium closed its DevTools pipe (exit %s): %s" % (self.proc.poll(), self._log()))
            chunks.append(chunk)
        text, self.pending = b"".join(chunks).split(b"\0", 1)
        return json.loads(text)

    def _call(self, method, params, session=False):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.to_browser, data):]
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            m = self._message(deadline)
            if m.get("id") == self.last_id:
                if "error" in m:
                    fail("chromium refused %s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def _viewport(self, height):
        self._call("Emulation.setDeviceMetricsOverride",
                   {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _load(self, page, height):
        """`page` loaded (its load event fired) in a viewport WIDTH x `height`."""
        if self.proc is None:
            self._start()
        self._viewport(height)
        self.loaded = None
        self.events = []
        self._call("Page.navigate", {"url": "file://" + page}, session=True)
        deadline = time.monotonic() + TIMEOUT_S
        while not any(e["method"] == "Page.loadEventFired" and e.get("sessionId") == self.session for e in self.events):
            m = self._message(deadline)
            if "method" in m:
                self.events.append(m)
        self.loaded = page

    def _dom(self):
        """The document as --dump-dom prints it: its outer HTML after the load event."""
        r = self._call("Runtime.evaluate", {"expression": "document.documentElement.outerHTML", "returnByValue": True},
                       session=True)
        return r["result"]["value"]

    def _screenshot(self, page, png):
        r = self._call("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True}, session=True)
        if not r.get("data"):
            fail("chromium made no screenshot of %s: %s" % (page, self._log()))
        with open(png, "wb") as f:
            f.write(base64.b64decode(r["data"]))
        return png

    def dom(self, page):
        self._load(page, FIRST_SCREEN)
        return self._dom()

    def screenshot(self, page, height, png):
        self._load(page, height)
        return self._screenshot(page, png)

    def screenshot_of_loaded(self, page, height, png):
        """A screenshot of `page`, the page dom() loaded last, in its viewport made `height` tall:
        the page is laid out again for the new viewport, not loaded again (a load of a tall page
        costs as much as its screenshot, and the page's height is known only from its DOM)."""
        if self.loaded != page:
            fail("screenshot_of_loaded(%s): the page loaded is %s" % (page, self.loaded))
        self._viewport(height)
        return self._screenshot(page, png)

    def close(self):
        if self.proc is None:
            return
        # Browser.close's reply may not come before the pipe closes: sent, not waited for.
        message = json.dumps({"id": self.last_id + 1, "method": "Browser.close", "params": {}}).encode() + b"\0"
        try:
            os.write(self.to_browser, message)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        self.stderr.close()
        self.proc = None


def with_additions(page, name, head="", body_end=""):
    """A copy of `page` beside it (so its relative links still resolve) with `head` added to <head>
    and `body_end` before </body>."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    if head:
        text = text.replace("</head>", head + "</head>", 1)
    if body_end:
        at = text.rfind("</body>")
        text = text[:at] + body_end + text[at:] if at >= 0 else text + body_end
    path = os.path.join(os.path.dirname(page), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def geometry_of(dom):
    m = re.search(r'<script type="application/json" id="genrepro-geometry">(.*?)</script>', dom, re.S)
    if not m:
        fail("the page's geometry script did not run (no #genrepro-geometry in the DOM)")
    return json.loads(html.unescape(m.group(1)))


# What a pixel on an axis line shows (pixel_kinds).
MISSING, AXIS, COVERED = 0, 1, 2


def pixel_kinds(pixels):
    """Per pixel of an array of RGB pixels: AXIS, a dark neutral grey (the axis, anti-aliased);
    MISSING, white or a light neutral grey (nothing drawn, or a gridline); COVERED, a colour (a
    data line drawn over the axis)."""
    import numpy
    spread = pixels.max(axis=-1).astype(numpy.int16) - pixels.min(axis=-1)
    kinds = numpy.where(pixels.max(axis=-1) <= AXIS_MAX_VALUE, AXIS, MISSING)
    kinds[spread > 10] = COVERED
    return kinds


def axis_problem(pixels, line):
    """None when the pixels along `line` (a page box of a horizontal or vertical axis) show the
    axis: at most 5% of its length missing (white or light grey), neither end missing, and for a y
    axis axis grey over at least half of it. `pixels`: the screenshot as an array (pixels_of)."""
    import numpy
    height, width = pixels.shape[:2]
    horizontal = line["w"] >= line["h"]
    length = int(round(line["w"] if horizontal else line["h"]))
    if length < 20:
        return "an axis %d px long" % length
    centre = (line["y"] + line["h"] / 2) if horizontal else (line["x"] + line["w"] / 2)
    start = int(round(line["x"] if horizontal else line["y"]))
    best = None
    for at in (int(centre) - 1, int(centre)):  # a 1 px line on a pixel edge is painted on both sides
        if horizontal:
            if not 0 <= at < height:
                continue
            along = pixels[at, max(start, 0):max(min(start + length, width), 0)]
        else:
            if not 0 <= at < width:
                continue
            along = pixels[max(start, 0):max(min(start + length, height), 0), at]
        # The part of the line outside the screenshot counts as missing.
        kinds = numpy.concatenate([pixel_kinds(along), numpy.full(length - len(along), MISSING)])
        missing = numpy.count_nonzero(kinds == MISSING) / float(length)
        grey = numpy.count_nonzero(kinds == AXIS) / float(length)
        # The last pixel or two of a line are anti-aliased lighter: an end is there if any of its
        # first AXIS_END_PX + 2 pixels is.
        ends = bool((kinds[:AXIS_END_PX + 2] != MISSING).any() and (kinds[-(AXIS_END_PX + 2):] != MISSING).any())
        if best is None or (ends, -missing, grey) > (best[0], -best[1], best[2]):
            best = (ends, missing, grey, at)
    if best is None:
        return "the axis lies outside the screenshot"
    ends, missing, grey, at = best
    if missing > AXIS_MAX_MISSING or grey < AXIS_MIN_GREY["x" if horizontal else "y"] or not ends:
        return "%s axis at %s %d: %.0f%% of its %d px missing, %.0f%% axis grey%s" % (
            "x" if horizontal else "y", "row" if horizontal else "column", at, 100 * missing, length, 100 * grey,
            "" if ends else ", an end missing")
    return None


def ink_share(ink, box):
    """The share of non-white pixels inside a page box (clipped to the image), read off `ink` (the
    whole screenshot's not-white mask, problems_of's): a slice, not a crop and colour count each."""
    height, width = ink.shape
    left, top = max(int(box["x"]), 0), max(int(box["y"]), 0)
    right, bottom = min(int(box["x"] + box["w"]) + 1, width), min(int(box["y"] + box["h"]) + 1, height)
    if right <= left or bottom <= top:
        return 0.0
    return float(ink[top:bottom, left:right].mean())


def heatmap_problems(pixels, geometry):
    """The heatmap's box shows every class's colour."""
    import numpy
    heatmaps = [c for c in geometry["charts"] if c["title"] == HEATMAP_TITLE]
    if len(heatmaps) != 1:
        return [("classes", "%d heatmaps titled %r on the page" % (len(heatmaps), HEATMAP_TITLE))]
    b = heatmaps[0]["box"]
    # (A crop past the image's edges adds black, no class's colour: the clipped slice sees the same.)
    region = pixels[page_slice(pixels, int(b["x"]), int(b["y"]), int(b["x"] + b["w"]), int(b["y"] + b["h"]))]
    found = []
    for name, rgb in CLASS_RGB.items():
        if not numpy.all(region == rgb, axis=2).any():
            found.append(("classes", "the heatmap shows no %s cell (%s)" % (name, "#%02x%02x%02x" % rgb)))
    return found


def pixels_of(png, Image):
    """The screenshot as an array of RGB pixels (rows x columns x 3), decoded once: every check
    and control reads this array (PIL's convert, copy and array export each cost ~0.15 s on a
    24-megapixel page, more than the checks themselves)."""
    import numpy
    with Image.open(png) as img:
        return numpy.asarray(img if img.mode == "RGB" else img.convert("RGB"))


COLOUR_BLOCK_ROWS = 256


def colour_count(pixels, at_most=None):
    """The number of distinct colours in `pixels`, or `at_most` once that many are seen. Counted
    block by block of rows: a page shows its first MIN_COLOURS colours within its first rows, and
    a block of one colour (a blank page's every block) is found by one comparison, without sorting."""
    import numpy
    seen = set()
    for top in range(0, pixels.shape[0], COLOUR_BLOCK_ROWS):
        block = pixels[top:top + COLOUR_BLOCK_ROWS].reshape(-1, 3)
        if (block == block[0]).all():
            seen.add(tuple(block[0].tolist()))
        else:
            # Each colour as one number 0xRRGGBB, to sort as one key.
            packed = (block[:, 0].astype(numpy.uint32) << 16) | (block[:, 1].astype(numpy.uint32) << 8) | block[:, 2]
            seen.update((v >> 16, (v >> 8) & 0xFF, v & 0xFF) for v in numpy.unique(packed).tolist())
        if at_most is not None and len(seen) >= at_most:
            return at_most
    return len(seen)


def problems_of(pixels, geometry, verdict=True):
    """Every check of the module docstring (2 to 5) on one screenshot (an array, pixels_of): a
    list of (kind, message)."""
    import numpy
    found = []
    height, width = pixels.shape[:2]
    if (width, height) != (WIDTH, geometry["height"]):
        found.append(("size", "screenshot is %dx%d, the page %dx%d" % (width, height, WIDTH, geometry["height"])))
        return found
    # Not white: some channel below 255, i.e. the channels' AND below 255 (bytewise, no wider copy).
    ink = (pixels[:, :, 0] & pixels[:, :, 1] & pixels[:, :, 2]) != 255
    share = float(ink.mean())
    colours = colour_count(pixels, MIN_COLOURS)  # MIN_COLOURS: at least that many
    if colours < MIN_COLOURS or share < MIN_NON_WHITE:
        if colours == MIN_COLOURS:
            colours = colour_count(pixels)
        found.append(("blank", "the page looks blank: %d colours, %.1f%% non-white" % (colours, 100 * share)))
        return found
    if verdict and not numpy.all(pixels[:FIRST_SCREEN] == DIFF_CELL_RGB, axis=2).any():
        found.append(("verdict", "the verdict's highlighted cells are not on the first screen"))
    for h in geometry["headings"]:
        if ink_share(ink, h) < 0.01:
            found.append(("cut", "the section heading %r has no ink at y=%d" % (h["text"], h["y"])))
    if ink_share(ink, geometry["last"]) < 0.005:
        found.append(("cut", "the page's last element (y=%d to %d) has no ink" %
                      (geometry["last"]["y"], geometry["last"]["y"] + geometry["last"]["h"])))
    inked_rows = numpy.flatnonzero(ink.any(axis=1))
    lowest_ink = int(inked_rows[-1]) + 1 if inked_rows.size else 0  # as a bounding box's lower edge
    if lowest_ink < geometry["last"]["y"]:
        found.append(("cut", "the lowest ink is at row %d, above the page's last element (y=%d)" %
                      (lowest_ink, geometry["last"]["y"])))
    for chart in geometry["charts"]:
        b = chart["box"]
        if b["x"] < 0 or b["x"] + b["w"] > WIDTH + 0.5 or b["y"] + b["h"] > height + 0.5:
            found.append(("axes", "chart %r reaches outside the page" % chart["title"]))
        if len(chart["axes"]) != 2:
            found.append(("axes", "chart %r has %d axis lines in its SVG, expected 2" % (chart["title"], len(chart["axes"]))))
            continue
        for line in chart["axes"]:
            problem = axis_problem(pixels, line)
            if problem:
                found.append(("axes", "chart %r: %s" % (chart["title"], problem)))
    return found


def sensitivity_cells(golden_doc, changed_path, scratch):
    """Three evidence files for `sensitivity --compare`: the golden runs pooled, the changed copy,
    and a copy with its last run dropped and every third run's first-step entropy raised by 1e-6."""
    golden = os.path.join(scratch, "golden.json")
    with open(golden, "w") as f:
        f.write(json.dumps(golden_doc))  # dumps: the C encoder (dump runs the Python one)
    partial_doc = json.loads(json.dumps(golden_doc))
    dropped = partial_doc["runs"].pop()["id"]
    nudged = []
    for i, run in enumerate(partial_doc["runs"]):
        if i % 3 == 1 and run["steps"]:
            run["steps"][0]["entropy"] += 1e-6  # added, not scaled: an entropy of 0 scaled stays 0
            nudged.append(run["id"])
    partial = os.path.join(scratch, "partial.json")
    with open(partial, "w") as f:
        f.write(json.dumps(partial_doc))
    return [golden, changed_path, partial], dropped, nudged


def check_sensitivity_page(a, browser, scratch, changed_path, Image):
    golden_doc = pooled_fixture_evidence(a.binary, a.golden, None)
    files, dropped, nudged = sensitivity_cells(golden_doc, changed_path, scratch)
    out = os.path.join(scratch, "sens")
    r = subprocess.run([a.binary, "sensitivity", "--compare", *files, "--out", out], capture_output=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro sensitivity --compare: exit %d: %s" % (r.returncode, r.stderr.decode()))
    with open(os.path.join(out, "sensitivity.json")) as f:
        matrix = json.load(f)
    classes = {(run["id"], cell): v["class"] for run in matrix["runs"] for cell, v in run["cells"].items()}
    expected = {("golden", "identical"), ("mutated", "diverged"), ("partial", "same_tokens"), ("partial", "missing")}
    seen = {(cell, cls) for (_, cell), cls in classes.items()}
    if not expected <= seen or classes[(dropped, "partial")] != "missing" or any(classes[(n, "partial")] != "same_tokens" for n in nudged):
        fail("sensitivity.json: the planted classes are not what it says: %s" % sorted(seen))
    page = os.path.join(out, "sensitivity.html")
    measured = with_additions(page, "measured.html", body_end=GEOMETRY_SCRIPT.replace(
        "height: document.documentElement.scrollHeight,",
        "height: Math.ceil(document.body.getBoundingClientRect().bottom + scrollY + "
        "parseFloat(getComputedStyle(document.body).marginBottom)),"))
    dom = browser.dom(measured)
    geometry = geometry_of(dom)
    if geometry["width"] > WIDTH or not 0 < geometry["height"] <= MAX_HEIGHT:
        fail("the sensitivity page is %dx%d px; this test renders it in a window %d px wide and up to %d px tall" %
             (geometry["width"], geometry["height"], WIDTH, MAX_HEIGHT))
    m = re.search(r"<svg[^>]*>\s*<title>%s</title>(.*?)</svg>" % re.escape(HEATMAP_TITLE), dom, re.S)
    if not m:
        fail("the rendered sensitivity page has no heatmap titled %r" % HEATMAP_TITLE)
    for run in matrix["runs"]:
        for cell in run["cells"]:
            tip = "<title>%s in %s" % (html.escape(run["id"], quote=False), html.escape(cell, quote=False))
            if m.group(1).count(tip) != 1:
                fail("the heatmap has %d cells for run %r in cell %r, expected 1" % (m.group(1).count(tip), run["id"], cell))
    if len(geometry["charts"]) != 2:
        fail("the sensitivity page has %d charts, expected the heatmap and the survival curves" % len(geometry["charts"]))
    png = browser.screenshot_of_loaded(measured, geometry["height"], os.path.join(scratch, "sensitivity.png"))
    if a.keep:
        shutil.copyfile(png, os.path.splitext(a.keep)[0] + "-sensitivity.png")
    pixels = pixels_of(png, Image)
    problems = problems_of(pixels, geometry, verdict=False) + heatmap_problems(pixels, geometry)
    if problems:
        fail("the screenshot of the sensitivity page: " + "; ".join(msg for _, msg in problems))
    print("sensitivity page %dx%d: %d runs x %d cells in the heatmap, the four class colours, %d section headings and "
          "the last element drawn, %d charts with both axes" % (WIDTH, geometry["height"], len(matrix["runs"]),
                                                                 len(matrix["cells"]), len(geometry["headings"]),
                                                                 len(geometry["charts"])))
    if a.no_controls:
        return
    controls = CONTROLS + [("diverged repainted", control_diverged_repainted, "classes")]
    for name, broken, kind in controls:
        shot = broken(pixels, geometry)
        found = problems_of(shot, geometry, verdict=False) + heatmap_problems(shot, geometry)
        if not any(k == kind for k, _ in found):
            fail("sensitivity control %r: the %r check did not fail; found: %s" % (name, kind, found or "nothing"))
        print("sensitivity control %r: fails as it must: %s" % (name, next(msg for k, msg in found if k == kind)))


def check_parity_page(a, browser, scratch, Image):
    """The parity page (docs/engines.md): golden/fixture's greedy run against the same run as
    llama.cpp's engine would record it (params.engine, the llama_cpp block, the 6th token its
    runner-up), rendered: the section, its table naming the divergence, the survival curve with
    both axes, not blank, not cut."""
    with open(os.path.join(a.golden, "greedy.json")) as f:
        ours = json.load(f)
    theirs = json.loads(json.dumps(ours))
    for run in theirs["runs"]:
        run["params"]["engine"] = "llama.cpp"
    for experiment in theirs["experiments"]:  # as `run --engine llama.cpp` records its spec
        experiment["spec"]["engine"] = "llama.cpp"
    change_sixth_token(a.binary, theirs["runs"][0])
    theirs["created_utc"] = ours["created_utc"] = "2026-01-01T00:00:00Z"
    theirs["llama_cpp"] = {"library": "/opt/llama/libllama.so", "library_sha256": "0" * 64, "ggml_version": "0.25.1",
                           "ggml_commit": "0ad4a86", "cpu_backend": "libggml-cpu-haswell.so", "system_info": "CPU : AVX2 = 1 |",
                           "kv_type": "f16", "flash_attn": "auto", "threads": 2, "n_ubatch": 512, "gguf_sha256": "1" * 64,
                           "gguf_export_revision": 1}
    paths = []
    for name, doc in (("genrepro.json", ours), ("llama.json", theirs)):
        paths.append(os.path.join(scratch, name))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    out = os.path.join(scratch, "parity")
    r = subprocess.run([a.binary, "report", *paths, "--label", "genrepro", "--label", "llama.cpp", "--out", out],
                       capture_output=True, timeout=TIMEOUT_S)
    if r.returncode != 0:
        fail("genrepro report of two engines: exit %d: %s" % (r.returncode, r.stderr.decode()))
    measured = with_additions(os.path.join(out, "report.html"), "measured.html", body_end=GEOMETRY_SCRIPT)
    dom = browser.dom(measured)
    for expected in ['<h2 id="parity-between-engines-genrepro-and-llamacpp">Parity between engines: genrepro and llama.cpp</h2>',
                     "new token 6 (steps[5])", "<title>Runs whose tokens are still identical between the engines</title>",
                     "libggml-cpu-haswell.so"]:
        if expected not in dom:
            fail("the rendered parity page lacks %r" % expected)
    geometry = geometry_of(dom)
    if geometry["width"] > WIDTH or not 0 < geometry["height"] <= MAX_HEIGHT:
        fail("the parity report is %dx%d px; this test renders it %d px wide and up to %d px tall" %
             (geometry["width"], geometry["height"], WIDTH, MAX_HEIGHT))
    png = browser.screenshot_of_loaded(measured, geometry["height"], os.path.join(scratch, "parity.png"))
    if a.keep:
        shutil.copyfile(png, os.path.splitext(a.keep)[0] + "-parity.png")
    problems = problems_of(pixels_of(png, Image), geometry, verdict=False)
    if problems:
        fail("the screenshot of the parity report: " + "; ".join(m for _, m in problems))
    print("parity page %dx%d: the section, its divergence and the survival curve, %d section headings and the last "
          "element drawn, %d charts with both axes" % (WIDTH, geometry["height"], len(geometry["headings"]),
                                                       len(geometry["charts"])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--golden", required=True, help="golden/fixture")
    ap.add_argument("--keep", help="copy the screenshot here (to look at it)")
    ap.add_argument("--no-controls", action="store_true", help="leave out the negative controls")
    a = ap.parse_args()
    chromium = find_chromium()
    if not chromium and os.environ.get("CI") == "true":
        fail("CI=true but no Chromium is installed: scripts/setup.sh --tests installs it in CI, where this test "
             "must run, not skip")
    if not chromium:
        skip("no Chromium installed (scripts/setup.sh installs Debian's chromium when CI=true or "
             "GENREPRO_SETUP_CHROMIUM=1)")
    try:
        from PIL import Image
    except ImportError:
        skip("the Python Imaging Library is not installed for %s (apt-get install python3-pil)" % sys.executable)
    scratch = tempfile.mkdtemp(prefix="genrepro-report-shot-")
    try:
        with open(os.path.join(a.golden, "greedy.json")) as f:
            mutated = json.load(f)["runs"][0]["id"]
        evidence = os.path.join(scratch, "mutated.json")
        with open(evidence, "w") as f:
            f.write(json.dumps(pooled_fixture_evidence(a.binary, a.golden, mutated)))
        out = os.path.join(scratch, "report")
        r = subprocess.run([a.binary, "report", evidence, "--golden", a.golden, "--out", out], capture_output=True,
                           timeout=TIMEOUT_S)
        if r.returncode != 0:
            fail("genrepro report: exit %d: %s" % (r.returncode, r.stderr.decode()))
        report = os.path.join(out, "report.html")
        browser = Chromium(chromium, scratch)
        try:
            check_report(a, browser, scratch, report, mutated, evidence, Image)
        finally:
            browser.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check_report(a, browser, scratch, report, mutated, evidence, Image):
    """Checks 1 to 5 of the module docstring on the report, its controls, then the sensitivity page."""
    measured = with_additions(report, "measured.html", body_end=GEOMETRY_SCRIPT)
    dom = browser.dom(measured)
    for expected in ['<h2 id="verdict-against-the-golden">Verdict against the golden</h2>',
                     '<a href="#experiment-greedy">' + mutated + "</a>", "new token 6 (steps[5])"]:
        if expected not in dom:
            fail("the rendered page lacks %r" % expected)
    geometry = geometry_of(dom)
    if geometry["width"] > WIDTH:
        # Checksums and paths break (an unbroken sha256 column once made the page 1292 px wide
        # in a 1280 px window), so nothing may widen the page.
        fail("the page is %d px wide in a %d px window" % (geometry["width"], WIDTH))
    if not 0 < geometry["height"] <= MAX_HEIGHT:
        fail("the page is %d px tall; this test renders pages up to %d px" % (geometry["height"], MAX_HEIGHT))
    if not geometry["charts"]:
        fail("the report has no chart (figure svg) to check")
    if len(geometry["headings"]) < 3:
        fail("the report has %d section headings, expected at least 3" % len(geometry["headings"]))

    shot = browser.screenshot_of_loaded(measured, geometry["height"], os.path.join(scratch, "report.png"))
    if a.keep:
        shutil.copyfile(shot, a.keep)
    pixels = pixels_of(shot, Image)
    problems = problems_of(pixels, geometry)
    if problems:
        fail("the screenshot of the report: " + "; ".join(m for _, m in problems))
    print("screenshot %dx%d: not blank, verdict on the first screen, %d section headings and the last element "
          "drawn, %d charts with both axes" % (WIDTH, geometry["height"], len(geometry["headings"]),
                                               len(geometry["charts"])))

    if not a.no_controls:
        for name, broken, kind in CONTROLS:
            found = problems_of(broken(pixels, geometry), geometry)
            if not any(k == kind for k, _ in found):
                fail("control %r: the %r check did not fail; found: %s" % (name, kind, found or "nothing"))
            print("control %r: fails as it must: %s" % (name, next(m for k, m in found if k == kind)))

    check_sensitivity_page(a, browser, scratch, evidence, Image)
    check_parity_page(a, browser, scratch, Image)


if __name__ == "__main__":
    main()
