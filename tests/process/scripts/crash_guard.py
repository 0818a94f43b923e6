#!/usr/bin/env python3
"""A genrepro process that crashes says so in one line and exits 3 (cli/crash_guard.hpp).
`tokenize --input -` waits on its standard input; while it waits it is sent each fatal signal.
Control: the same process sent SIGKILL (which no handler sees) must not exit 3, so the check
can fail."""
import argparse
import os
import signal
import subprocess
import sys
import time


def waiting_on_stdin(pid, limit_s=30.0):
    """Until the process blocks in read(0, ...): its handlers are installed by then. A fixed sleep
    raced with slow starts (a loaded machine, a sanitizer build). /proc/PID/syscall shows the
    blocking call as "<nr> <arg0> ..."; read is 0 on x86-64 and 63 on arm64."""
    deadline = time.time() + limit_s
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            time.sleep(1.0)  # no /proc/PID/syscall here: give it a generous second
            return
        if len(fields) > 1 and fields[0] in ("0", "63") and int(fields[1], 16) == 0:
            return
        time.sleep(0.01)


def crash(binary, sig):
    p = subprocess.Popen([binary, "tokenize", "--model", os.environ["GENREPRO_TOKENIZER_DIR"], "--input", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waiting_on_stdin(p.pid)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    return p.returncode, err


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    a = ap.parse_args()
    failures = []
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        rc, err = crash(a.binary, sig)
        lines = [l for l in err.splitlines() if l.strip()]
        expected = f"genrepro: internal error (please report): the process received {sig.name}"
        if rc != 3 or lines != [expected]:
            failures.append(f"{sig.name}: exit {rc}, stderr {err!r}; expected exit 3 and {expected!r}")
    rc, _ = crash(a.binary, signal.SIGKILL)
    if rc == 3:
        failures.append("control: SIGKILL also gave exit 3, so exit 3 proves nothing")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok: 5 fatal signals each gave exit 3 and one line")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
