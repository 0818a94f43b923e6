#!/usr/bin/env python3
"""genrepro run interrupted and resumed, as a process sees it (issue 11; docs/resume.md).

A grid of 100 runs is started for real and stopped part-way with SIGINT, SIGTERM and SIGKILL (once
the checkpoint holds a few finished runs). Each time: the evidence file that was there before is
byte for byte intact, the checkpoint holds the finished runs, and `--resume` completes to the same
evidence as an uninterrupted run (volatile fields aside). Also: a cut-short last line (a kill
mid-write) is dropped, not fatal; a checkpoint from other experiments, another model or another
build is refused with exit 2 and left untouched; a second writer of the same --out is refused; an
unwritable --out is refused before the model loads; and with --disk, a full disk (a 256 KiB tmpfs,
in a private mount namespace) stops the run with one line, keeps the old evidence and a whole
checkpoint, and --resume finishes once there is room.

The expected evidence is the uninterrupted run's, an independent execution of the same grid; the
checks compare it field by field after dropping exactly the fields docs/evidence-format.md calls
volatile.
"""
import argparse
import fcntl
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

RUNS = 100
# Seconds any one command may take. A run here takes 2 s; a sanitizer build on a loaded machine
# takes up to 20 times longer (scripts/sanitize.sh sets GENREPRO_TEST_SLOWDOWN).
WAIT_S = 60 * float(os.environ.get("GENREPRO_TEST_SLOWDOWN", "1"))


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def write_grid(path, name="grid100", tokens=4, use_cache=False):
    spec = {
        "name": name,
        "description": "100 short sampled runs: long enough to interrupt and resume.",
        "prompts": ["the river bank was", "once upon a time"],
        "max_new_tokens": tokens,
        "use_cache": use_cache,
        "runs": [{"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, 26))}],
        "record": {"top_candidates": 2},
    }
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)


def write_mixed_grid(path):
    """104 runs: 52 recomputed (4 tokens each), then 52 with the KV cache (8 tokens each, in
    lock-step batches that finish out of order)."""
    spec = {
        "name": "mixed104",
        "description": "Recompute and KV-cache runs: long enough to interrupt in either phase.",
        "prompts": ["the river bank was", "once upon a time"],
        "runs": [
            {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, 14)),
             "use_cache": False, "max_new_tokens": 4},
            {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, 14)),
             "use_cache": True, "max_new_tokens": 8},
        ],
        "record": {"top_candidates": 2},
    }
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)


def stripped(path):
    with open(path) as f:
        d = json.load(f)
    d.pop("created_utc", None)
    d["environment"]["threads"].pop("runs_concurrently", None)
    if "numerics" in d:
        d["numerics"].pop("execution", None)
    for r in d["runs"]:
        r.pop("timing", None)
    return d


def lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


class Genrepro:
    def __init__(self, binary, model, work):
        self.binary, self.model, self.work = binary, model, work

    def args(self, experiment, out, *extra):
        return [self.binary, "run", experiment, "--model", self.model, "--out", out, *extra]

    def run(self, experiment, out, *extra):
        return subprocess.run(self.args(experiment, out, *extra), cwd=self.work, capture_output=True, text=True,
                              timeout=WAIT_S)

    def interrupted(self, experiment, out, sig, after_lines, *extra):
        """Starts a run, waits until its checkpoint holds `after_lines` lines, sends `sig`."""
        checkpoint = os.path.join(self.work, out + ".checkpoint")
        p = subprocess.Popen(self.args(experiment, out, *extra), cwd=self.work, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.time() + WAIT_S
        while lines(checkpoint) < after_lines and p.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        if p.poll() is not None:
            fail(f"the run ended (exit {p.returncode}) before its checkpoint held {after_lines} lines: {p.stderr.read()}")
        p.send_signal(sig)
        out_text, err_text = p.communicate(timeout=WAIT_S)
        return p.returncode, err_text


def expect(result, code, *phrases, what=""):
    if result.returncode != code:
        fail(f"{what}: exit {result.returncode}, expected {code}; stderr: {result.stderr}")
    for phrase in phrases:
        if phrase not in result.stderr:
            fail(f"{what}: stderr lacks {phrase!r}: {result.stderr}")


def nudged_model(model, into):
    """A copy of the model whose ln_f.bias moved: another model with the same architecture."""
    shutil.copytree(model, into)
    path = os.path.join(into, "model.safetensors")
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        start, end = json.loads(f.read(n))["ln_f.bias"]["data_offsets"]
        f.seek(8 + n + start)
        values = struct.unpack(f"<{(end - start) // 4}f", f.read(end - start))
        f.seek(8 + n + start)
        f.write(struct.pack(f"<{len(values)}f", *[v + 0.01 for v in values]))
    return into


def check_signals(g, work):
    write_mixed_grid(os.path.join(work, "mixed.json"))
    expect(g.run("mixed.json", "reference.json"), 0, what="uninterrupted run")
    reference = stripped(os.path.join(work, "reference.json"))
    total = len(reference["runs"])
    if total < 100:
        fail(f"the grid has {total} runs, expected at least 100")

    # SIGINT while runs are recomputed two at a time; SIGTERM while KV-cache batches run (after the
    # first batch has finished); SIGKILL in between.
    for sig, code, after in ((signal.SIGINT, 130, 6), (signal.SIGTERM, 143, total // 2 + 5), (signal.SIGKILL, -9, 30)):
        name = signal.Signals(sig).name
        out = f"out-{name}.json"
        out_path = os.path.join(work, out)
        checkpoint = out_path + ".checkpoint"
        with open(out_path, "w") as f:
            f.write('{"an": "older evidence file that must survive"}\n')
        before = read_bytes(out_path)
        rc, err = g.interrupted("mixed.json", out, sig, after)
        if rc != code:
            fail(f"{name}: exit {rc}, expected {code}; stderr: {err}")
        if read_bytes(out_path) != before:
            fail(f"{name}: {out} changed although the run did not finish")
        kept = lines(checkpoint) - 1
        if not after - 1 <= kept < total:
            fail(f"{name}: the checkpoint holds {kept} runs, expected at least {after - 1} and fewer than {total}")
        if sig != signal.SIGKILL and f"{kept} of {total} runs finished and kept in {out}.checkpoint" not in err:
            fail(f"{name}: the message does not say what was kept: {err}")
        if sig == signal.SIGKILL:
            # A kill in the middle of a write leaves a last line without its end.
            with open(checkpoint, "ab") as f:
                f.write(b'{"id": "mixed104/p1/sample-t1.3-p0.9-s13-0000')
        if sig == signal.SIGINT:
            r = g.run("mixed.json", out)
            expect(r, 2, "add --resume", what=f"{name}: run again without --resume")
        r = g.run("mixed.json", out, "--resume")
        expect(r, 0, f"resuming: {kept} finished run(s) kept", what=f"{name}: --resume")
        if sig == signal.SIGKILL and "cut short" not in r.stderr:
            fail(f"{name}: the dropped last line was not reported: {r.stderr}")
        if stripped(out_path) != reference:
            fail(f"{name}: the resumed evidence differs from the uninterrupted run's")
        if os.path.exists(checkpoint):
            fail(f"{name}: the checkpoint is still there after the evidence was written")
        print(f"ok: {name} after {kept} of {total} runs: exit {rc}, old evidence intact, --resume gives the "
              "uninterrupted evidence")


def check_refusals(g, work, model):
    rc, err = g.interrupted("grid.json", "refused.json", signal.SIGINT, 4)
    checkpoint = os.path.join(work, "refused.json.checkpoint")
    kept = read_bytes(checkpoint)

    def refused(what, phrase, experiment="grid.json", *extra):
        r = subprocess.run([g.binary, "run", experiment, "--out", "refused.json", "--resume", *extra], cwd=work,
                           capture_output=True, text=True, timeout=WAIT_S)
        expect(r, 2, phrase, what=what)
        if r.stderr.count("\n") > 3:  # the model line, the plan line, and the error
            fail(f"{what}: more than one error line: {r.stderr}")
        if read_bytes(checkpoint) != kept:
            fail(f"{what}: the refused checkpoint was changed")
        print(f"ok: {what}: exit 2, checkpoint untouched")

    os.makedirs(os.path.join(work, "other"), exist_ok=True)
    write_grid(os.path.join(work, "other", "grid.json"), tokens=5)
    refused("other experiments", "is from different experiments: experiments[0].sha256", "other/grid.json",
            "--model", model)
    refused("another model", "is from a different model: model.files.model.safetensors.sha256", "grid.json",
            "--model", nudged_model(model, os.path.join(work, "model-v2")))

    # Another build: the same checkpoint as a different genrepro commit would have written it.
    with open(checkpoint, "rb") as f:
        head, rest = f.read().split(b"\n", 1)
    first = json.loads(head)["line"]  # every line is {"sha256": <of the body>, "line": body}
    # (a rebuilt binary of the same dirty tree has the same commit string: the files' sha256 tell)
    library = sorted(first["key"]["genrepro"]["files_sha256"])[0]
    first["key"]["genrepro"]["files_sha256"][library] = "0" * 64
    body = json.dumps(first, separators=(",", ":")).encode()
    with open(checkpoint, "wb") as f:
        f.write(b'{"sha256":"' + hashlib.sha256(body).hexdigest().encode() + b'","line":' + body + b"}\n" + rest)
    kept = read_bytes(checkpoint)
    refused("another build", "is from a different build of genrepro: genrepro.files_sha256.", "grid.json", "--model", model)

    # A damaged line that is not the last is not guessed at.
    with open(checkpoint, "wb") as f:
        f.write(head + b"\n" + b"{not json\n" + rest)
    kept = read_bytes(checkpoint)
    refused("a damaged line", "line 2:", "grid.json", "--model", model)

    # A run line edited by hand (one digit of its output ids) without its digest: found by the digest.
    second, others = rest.split(b"\n", 1)
    at = second.index(b'"output_ids":[') + len(b'"output_ids":[')
    edited = second[:at] + (b"2" if second[at:at + 1] == b"1" else b"1") + second[at + 1:]
    with open(checkpoint, "wb") as f:
        f.write(head + b"\n" + edited + b"\n" + others)
    kept = read_bytes(checkpoint)
    refused("an edited line", "line 2: its bytes hash to sha256", "grid.json", "--model", model)

    # Two writers of one --out: the second finds the checkpoint locked.
    with open(checkpoint, "r+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = g.run("grid.json", "refused.json", "--resume")
        expect(r, 2, "another genrepro process is writing this checkpoint", what="a second writer")
        if "running" in r.stderr:
            fail(f"a second writer: refused only after the plan: {r.stderr}")
    print("ok: a second writer of the same --out: exit 2 before anything runs")

    r = g.run("grid.json", "/proc/genrepro-cannot-write-here.json")
    expect(r, 2, "/proc/genrepro-cannot-write-here.json.checkpoint: cannot", what="an unwritable --out")
    if "running" in r.stderr:
        fail(f"an unwritable --out: found only after the plan: {r.stderr}")
    print("ok: an unwritable --out: exit 2 before anything runs")


def check_full_disk(g, work, size, where):
    """Runs inside a private mount namespace (see main): the output goes to a tmpfs of `size`,
    which fills up while the checkpoint grows (128k) or when the evidence is written (256k)."""
    disk = tempfile.mkdtemp(dir=work, prefix="disk-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", disk], check=True)
    try:
        out = os.path.join(disk, "evidence.json")
        with open(out, "w") as f:
            f.write('{"an": "older evidence file that must survive"}\n')
        before = read_bytes(out)
        r = g.run("grid.json", out)
        expect(r, 2, "No space left on device", where, what="a full disk")
        if len([l for l in r.stderr.splitlines() if l.startswith("genrepro: error")]) != 1:
            fail(f"a full disk: not one error line: {r.stderr}")
        if read_bytes(out) != before:
            fail("a full disk: the old evidence changed")
        checkpoint = out + ".checkpoint"
        data = read_bytes(checkpoint)
        if not data.endswith(b"\n") or any(not line.strip().startswith(b"{") for line in data.splitlines()):
            fail("a full disk: the checkpoint is not whole lines")
        kept = data.count(b"\n") - 1
        leftovers = [n for n in os.listdir(disk) if n.startswith(".")]
        if leftovers:
            fail(f"a full disk: temporary files left behind: {leftovers}")
        subprocess.run(["mount", "-o", "remount,size=8m", disk], check=True)
        r = g.run("grid.json", out, "--resume")
        expect(r, 0, f"resuming: {kept} finished run(s) kept", what="--resume after the disk had room")
        # (equality with an uninterrupted run is the signals part's check; here: every run, in order)
        if [r["index"] for r in stripped(out)["runs"]] != list(range(RUNS)):
            fail("a full disk: the resumed evidence does not hold every run in index order")
        print(f"ok: a disk full at {size} ({where!r}): exit 2 with one line, old evidence intact, {kept} runs kept, "
              "--resume completes")
    finally:
        subprocess.run(["umount", disk], check=False)


def check_disk_in_namespace(g, work, binary, model):
    # A small tmpfs needs a mount: as root directly, else in a user namespace; without either,
    # the full-disk check is reported as not run (it is not faked with something else).
    write_grid(os.path.join(work, "grid.json"))
    mount_ns = ["unshare", "--mount", "--propagation", "private"] if os.geteuid() == 0 else \
               ["unshare", "--user", "--map-root-user", "--mount"]
    r = subprocess.run(mount_ns + [sys.executable, os.path.abspath(__file__), "--binary", binary, "--model", model,
                                   "--work", work, "--part", "disk-inside"], capture_output=True, text=True,
                       timeout=4 * WAIT_S)
    if r.returncode != 0 and "unshare" in r.stderr and "Operation not permitted" in r.stderr:
        print("skipped: a full disk (no mount namespace here: " + r.stderr.strip() + ")")
        return
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        fail("the full-disk check failed: " + r.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--part", required=True, choices=["signals", "refusals", "disk", "disk-inside"],
                    help="signals: SIGINT/SIGTERM/SIGKILL and --resume; refusals: what --resume and a second "
                         "writer refuse; disk: a full disk (disk-inside: that check, inside a mount namespace)")
    ap.add_argument("--work")
    a = ap.parse_args()
    binary, model = os.path.abspath(a.binary), os.path.abspath(a.model)
    if a.part == "disk-inside":
        g = Genrepro(binary, model, a.work)
        check_full_disk(g, a.work, "128k", "cannot append to the checkpoint")
        check_full_disk(g, a.work, "256k", "all 100 runs are kept in")
        return
    work = tempfile.mkdtemp(prefix="genrepro-resume-")
    try:
        g = Genrepro(binary, model, work)
        if a.part == "signals":
            check_signals(g, work)
        elif a.part == "refusals":
            write_grid(os.path.join(work, "grid.json"))
            check_refusals(g, work, model)
        else:
            check_disk_in_namespace(g, work, binary, model)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
