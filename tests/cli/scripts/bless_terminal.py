#!/usr/bin/env python3
"""genrepro bless on a real pseudo-terminal: the interactive review tested through a
pseudo-terminal, with accept, reject and skip each checked.

The binary runs with stdin, stdout and stderr on a pty (so isatty(0) is true, as for a person), and
this script answers each prompt as it appears. Checked: the review shows each changed run with its
verdict and coloured token diff; accept writes that run, reject and skip keep the golden's; the
exit codes; and off a terminal, without --yes, bless refuses in one line with exit 2 instead of
waiting for an answer. The in-process tests (tests/cli_inprocess/bless_review_test.cpp) cover the
logic; this covers what only a terminal shows.
"""
import argparse
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time

# A prompt normally appears within milliseconds; a hung bless must fail, not block ctest.
TIMEOUT_S = 20
PROMPT = b"quit (q)? "
GREEDY = "greedy/p0/greedy-429460cc"
SAMPLING = "sampling/p0/sample-t1-s42-2ce330fa"


def fail(msg, transcript=b""):
    sys.stderr.write("FAIL: " + msg + "\n")
    if transcript:
        sys.stderr.write("--- terminal transcript ---\n" + transcript.decode("utf-8", "replace") + "\n")
    sys.exit(1)


def change_last_token(doc, run_id):
    run = next(r for r in doc["runs"] if r["id"] == run_id)
    run["output_ids"][2] = 31
    run["text"] = "the river bank was t10 t20 t31"
    run["continuation"] = " t10 t20 t31"
    step = run["steps"][2]
    # A near-tie (0.45001 vs 0.44999): greedy can only pick its best candidate, so the two swap
    # places (as tests/cli_inprocess/bless_review_test.cpp does); a sampled run draws the runner-up.
    if run["params"]["mode"] == "greedy":
        top = step["top"]
        top[0]["id"], top[1]["id"] = top[1]["id"], top[0]["id"]
        top[0]["text"], top[1]["text"] = top[1]["text"], top[0]["text"]
        p = top[0]["prob"]
    else:
        p = step["top"][1]["prob"]
    step.update({"token_id": 31, "token_text": " t31", "prob": p, "prob_t1": p})


def last_token(path, run_id):
    with open(path) as f:
        doc = json.load(f)
    return next(r for r in doc["runs"] if r["id"] == run_id)["output_ids"][2]


def on_terminal(args, answers):
    """Runs args on a pty; sends answers[i] after the i-th prompt. Returns (exit code, transcript)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    transcript = b""
    pending = list(answers)
    seen_prompts = 0
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        if time.monotonic() > deadline:
            proc.kill()
            fail("no answer from genrepro bless within %d s" % TIMEOUT_S, transcript)
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk and proc.poll() is not None:
                break
            transcript += chunk
            if transcript.count(PROMPT) > seen_prompts:
                seen_prompts = transcript.count(PROMPT)
                if not pending:
                    proc.kill()
                    fail("asked more questions than expected", transcript)
                os.write(master, pending.pop(0).encode() + b"\n")
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=TIMEOUT_S)
    os.close(master)
    if pending:
        fail("expected %d more prompt(s)" % len(pending), transcript)
    return code, transcript


def probe_pty():
    """None when this machine gives a pseudo-terminal, else why not (no /dev/ptmx or devpts in a
    chroot or a minimal container)."""
    try:
        master, slave = pty.openpty()
    except OSError as e:
        return str(e)
    os.close(master)
    os.close(slave)
    return None


def main():
    why_not = probe_pty()
    if why_not:
        print("skipped: genrepro bless on a terminal needs a pseudo-terminal, and none can be opened here: " + why_not)
        sys.exit(77)
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--data", required=True, help="tests/cli/data/diff")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="genrepro-bless-tty-")
    try:
        golden = os.path.join(scratch, "golden")
        base = os.path.join(a.data, "golden.json")
        r = subprocess.run([a.binary, "bless", base, "--into", golden, "--yes"], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIMEOUT_S)
        if r.returncode != 0:
            fail("first bless --yes: exit %d: %s" % (r.returncode, r.stderr.decode()))
        with open(base) as f:
            doc = json.load(f)
        change_last_token(doc, GREEDY)
        change_last_token(doc, SAMPLING)
        evidence = os.path.join(scratch, "changed.json")
        with open(evidence, "w") as f:
            json.dump(doc, f)
        cmd = [a.binary, "bless", evidence, "--into", golden]

        # skip, skip: nothing written, exit 1 (the golden still differs).
        before = open(os.path.join(golden, "greedy.json"), "rb").read()
        code, t = on_terminal(cmd, ["s", "s"])
        if code != 1 or b"0 accepted, 0 rejected, 2 skipped; nothing written" not in t:
            fail("skip, skip: expected exit 1 and nothing written, got exit %d" % code, t)
        if open(os.path.join(golden, "greedy.json"), "rb").read() != before:
            fail("skip changed greedy.json", t)

        # accept, reject: the first run from the evidence, the second kept.
        code, t = on_terminal(cmd, ["a", "r"])
        for expected in [b"[1/2] greedy.json: changed run " + GREEDY.encode() + b": near-tie at new token 3 (steps[2])",
                         b"\x1b[31m t30\x1b[0m", b"\x1b[32m t31\x1b[0m", b"[2/2] sampling.json: changed run",
                         b"1 accepted, 1 rejected, 0 skipped; wrote 1 golden file(s)"]:
            if expected not in t:
                fail("accept, reject: %r not shown" % expected, t)
        if code != 1:
            fail("accept, reject: expected exit 1, got %d" % code, t)
        if last_token(os.path.join(golden, "greedy.json"), GREEDY) != 31:
            fail("accepted run not written", t)
        if last_token(os.path.join(golden, "sampling.json"), SAMPLING) != 30:
            fail("rejected run was written", t)

        # Off a terminal, without --yes: one line, exit 2, at once.
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)
        lines = [l for l in r.stderr.decode().splitlines() if l.strip()]
        if r.returncode != 2 or len(lines) != 1 or "not asking without a terminal" not in lines[0]:
            fail("off a terminal: expected exit 2 and one line, got exit %d, stderr %r" % (r.returncode, r.stderr))
        print("bless on a pty: skip, accept, reject and the no-terminal refusal as expected")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
