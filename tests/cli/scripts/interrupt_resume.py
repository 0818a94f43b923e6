#!/usr/bin/env python3
"""genrepro run interrupted and resumed, as a process sees it (docs/resume.md).

A grid of 56 runs is started for real and stopped part-way with SIGKILL (once the checkpoint holds
15 finished runs): the evidence file that was there before is byte for byte intact, the checkpoint
holds the finished runs, a cut-short last line (a kill mid-write) is dropped, not fatal, and
`--resume` completes to the same evidence as an uninterrupted run (volatile fields aside). SIGINT
and SIGTERM, which run's own handler stops, are sent in-process (tests/cli_inprocess/
interrupt_test.cpp), and so are the refusals of --resume (RunResume.*). With --part disk: a full
disk (a small tmpfs, in a private mount namespace) stops the run with one line, keeps the old
evidence and a whole checkpoint, and --resume finishes once there is room; where the machine
grants no mount namespace or tmpfs, that part exits 77 (skipped) and says why.

The expected evidence is the uninterrupted run's, an independent execution of the same grid; the
checks compare it field by field after dropping exactly the fields docs/evidence-format.md calls
volatile.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# The full-disk grid: 24 runs (2 prompts x 2 temperatures x 6 seeds), and tmpfs sizes that its
# checkpoint (about 2.6 KB a run) and evidence (about 4.3 KB a run) outgrow at the two places the
# check wants: 32k fills while the checkpoint grows, 96k holds the whole checkpoint but not the
# evidence beside it. (The assertions do not need more runs; each run costs a few ms of a process.)
DISK_SEEDS = 6
RUNS = 4 * DISK_SEEDS
# ctest's SKIP_RETURN_CODE for this script (tests/cli/interrupt_resume.cmake).
SKIP = 77
# Seconds any one command may take. A run here takes 2 s; a sanitizer build on a loaded machine
# takes up to 20 times longer (scripts/sanitize.sh sets GENREPRO_TEST_SLOWDOWN).
WAIT_S = 60 * float(os.environ.get("GENREPRO_TEST_SLOWDOWN", "1"))


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def write_grid(path, name="grid24", tokens=4, use_cache=False):
    spec = {
        "name": name,
        "description": f"{RUNS} short sampled runs: enough to fill a small disk.",
        "prompts": ["the river bank was", "once upon a time"],
        "max_new_tokens": tokens,
        "use_cache": use_cache,
        "runs": [{"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, DISK_SEEDS + 1))}],
        "record": {"top_candidates": 2},
    }
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)


def write_mixed_grid(path, seeds=7):
    """4 x `seeds` runs recomputed (4 tokens each), then as many with the KV cache (8 tokens each,
    in lock-step batches that finish out of order): 56 runs by default."""
    spec = {
        "name": f"mixed{8 * seeds}",
        "description": "Recompute and KV-cache runs: long enough to interrupt in either phase.",
        "prompts": ["the river bank was", "once upon a time"],
        "runs": [
            {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, seeds + 1)),
             "use_cache": False, "max_new_tokens": 4},
            {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": list(range(1, seeds + 1)),
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
    d.pop("resumed", None)  # volatile: which checkpoint the runs were kept from
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


def check_sigkill(g, work):
    """SIGKILL, which no handler sees, in the middle of the grid: what only a process can show.
    (SIGINT and SIGTERM, which run's handler stops at a safe point, are driven in-process by
    tests/cli_inprocess/interrupt_test.cpp on the same grid.)"""
    write_mixed_grid(os.path.join(work, "mixed.json"))
    expect(g.run("mixed.json", "reference.json"), 0, what="uninterrupted run")
    reference = stripped(os.path.join(work, "reference.json"))
    total = len(reference["runs"])
    if total < 50:
        fail(f"the grid has {total} runs, expected at least 50")

    # 15 runs in: while the first, recomputed half runs, with 41 runs to go (the poll is 5 ms).
    sig, code, after = signal.SIGKILL, -9, 16
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
    # A kill in the middle of a write leaves a last line without its end.
    with open(checkpoint, "ab") as f:
        f.write(b'{"id": "mixed56/p1/sample-t1.3-p0.9-s7-0000')
    r = g.run("mixed.json", out, "--resume")
    expect(r, 0, f"resuming: {kept} finished run(s) kept", what=f"{name}: --resume")
    if "cut short" not in r.stderr:
        fail(f"{name}: the dropped last line was not reported: {r.stderr}")
    if stripped(out_path) != reference:
        fail(f"{name}: the resumed evidence differs from the uninterrupted run's")
    if os.path.exists(checkpoint):
        fail(f"{name}: the checkpoint is still there after the evidence was written")
    print(f"ok: {name} after {kept} of {total} runs: exit {rc}, old evidence intact, a cut-short last line dropped, "
          "--resume gives the uninterrupted evidence")


def check_full_disk(g, work, size, where):
    """Runs inside a private mount namespace (see main): the output goes to a tmpfs of `size`,
    which fills up while the checkpoint grows (32k) or when the evidence is written (96k)."""
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
        # (equality with an uninterrupted run is the sigkill part's check; here: every run, in order)
        if [r["index"] for r in stripped(out)["runs"]] != list(range(RUNS)):
            fail("a full disk: the resumed evidence does not hold every run in index order")
        print(f"ok: a disk full at {size} ({where!r}): exit 2 with one line, old evidence intact, {kept} runs kept, "
              "--resume completes")
    finally:
        subprocess.run(["umount", disk], check=False)


def mount_namespace_command():
    """The unshare prefix that gives a private mount namespace: as root directly, else in a user
    namespace mapped to root."""
    if os.geteuid() == 0:
        return ["unshare", "--mount", "--propagation", "private"]
    return ["unshare", "--user", "--map-root-user", "--mount"]


def probe_mounts(work):
    """Tries, in a throwaway child, exactly what the full-disk check needs: the private mount
    namespace, a small tmpfs, a remount to a larger size, the umount. Returns None when all work,
    else why not (a chroot, an unprivileged container, no user namespaces, no unshare)."""
    target = tempfile.mkdtemp(dir=work, prefix="probe-")
    script = ("set -e; mount -t tmpfs -o size=128k tmpfs \"$1\"; mount -o remount,size=256k \"$1\"; "
              "umount \"$1\"")
    try:
        r = subprocess.run(mount_namespace_command() + ["sh", "-c", script, "probe", target],
                           capture_output=True, text=True, timeout=WAIT_S)
    except FileNotFoundError as e:
        return f"no unshare command ({e})"
    finally:
        shutil.rmtree(target, ignore_errors=True)
    if r.returncode != 0:
        return f"{' '.join(mount_namespace_command())} + mount -t tmpfs failed (exit {r.returncode}): " + \
               (r.stderr.strip() or "no message")
    return None


def check_disk_in_namespace(g, work, binary, model):
    # A small tmpfs needs a mount: as root directly, else in a user namespace. Where neither is
    # granted, the full-disk check is reported as skipped with the reason (ctest SKIP_RETURN_CODE),
    # never faked with something else and never passed silently.
    why_not = probe_mounts(work)
    if why_not:
        print("skipped: a full disk needs a private mount namespace and a tmpfs, which this machine does not grant: "
              + why_not)
        sys.exit(SKIP)
    write_grid(os.path.join(work, "grid.json"))
    r = subprocess.run(mount_namespace_command() + [sys.executable, os.path.abspath(__file__), "--binary", binary,
                                                    "--model", model, "--work", work, "--part", "disk-inside"],
                       capture_output=True, text=True, timeout=4 * WAIT_S)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        fail("the full-disk check failed: " + r.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--part", required=True, choices=["sigkill", "disk", "disk-inside"],
                    help="sigkill: SIGKILL mid-grid and --resume; disk: a full disk (disk-inside: that check, inside a mount namespace)")
    ap.add_argument("--work")
    a = ap.parse_args()
    binary, model = os.path.abspath(a.binary), os.path.abspath(a.model)
    if a.part == "disk-inside":
        g = Genrepro(binary, model, a.work)
        check_full_disk(g, a.work, "32k", "cannot append to the checkpoint")
        check_full_disk(g, a.work, "96k", f"all {RUNS} runs are kept in")
        return
    work = tempfile.mkdtemp(prefix="genrepro-resume-")
    # (sys.exit(SKIP) inside passes through the finally below, which removes the work directory)
    try:
        g = Genrepro(binary, model, work)
        if a.part == "sigkill":
            check_sigkill(g, work)
        else:
            check_disk_in_namespace(g, work, binary, model)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
