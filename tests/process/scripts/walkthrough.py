#!/usr/bin/env python3
"""docs/walkthrough.md, run as written: every command of its console blocks runs in a scratch
directory with the build's genrepro first on PATH, and what it prints (stdout and stderr
together, as a terminal shows them) must be what the page shows. A change of output fails this
test until the page is updated.

How the page is read (the conventions are the page's own, written for a reader; the directives
are HTML comments, invisible on GitHub):

- ```console blocks: each line starting with "$ " is a command (bash -c, in the scratch
  directory; it goes on over the next lines while a single quote is open); the lines after it,
  up to the next "$ " line, are its output. `echo $?` sees the
  previous command's exit code.
- Elisions a reader already understands:
    a line that is only "…" (or "...") stands for any number of lines, none included;
    a line ending in "…" stands for any line that starts with the text before it.
- <!-- walkthrough: file NAME -->  before a code block: the test writes the block to NAME.
- <!-- walkthrough: run -->        before a ```sh block: the test runs it (bash) and ignores its output.
- <!-- walkthrough: skip -->       before a console block: not run (what needs a real machine set-up).
- <!-- walkthrough: terminal ANSWER ANSWER ... -->  before a console block: its first command runs
  on a pseudo-terminal (stdin, stdout and stderr), and each ANSWER is typed when the command asks
  (its output ends in "? " or ": "), as a person at the terminal would; the terminal's echo
  puts the answers into the transcript where the page shows them.
- <!-- walkthrough: volatile REGEX -->  anywhere: what REGEX matches (Python re) is replaced by
  "⟨volatile⟩" in the page's output and in the command's before they are compared (thread
  counts, times, sizes that depend on the machine).
- The scratch directory is shown on the page as /work/scratch/walk (the directory the page was
  made in): the test writes it that way in the commands' output.
"""
import argparse
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

PAGE_DIR = "/work/scratch/walk"
DIRECTIVE = re.compile(r"^<!--\s*walkthrough:\s*(\w+)\s*(.*?)\s*-->\s*$")


def parse(page):
    """The page as steps: ('file', name, text), ('run', text), ('console', [(cmd, [expected])], terminal_answers)."""
    steps, volatile = [], []
    lines = page.splitlines()
    pending = None  # the directive that applies to the next code block
    i = 0
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.match(line.strip())
        if m:
            kind, arg = m.group(1), m.group(2)
            if kind == "volatile":
                volatile.append(re.compile(arg))
            elif kind in ("file", "run", "skip", "terminal"):
                pending = (kind, arg)
            else:
                raise SystemExit(f"walkthrough.md:{i + 1}: unknown directive {kind!r}")
            i += 1
            continue
        fence = re.match(r"^```(\w*)\s*$", line)
        if not fence:
            i += 1
            continue
        lang = fence.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[i + 1:j]
        kind, arg = pending if pending else (None, "")
        pending = None
        where = i + 1
        i = j + 1
        if kind == "skip":
            continue
        if kind == "file":
            steps.append(("file", arg, "\n".join(body) + "\n", where))
        elif kind == "run":
            steps.append(("run", "\n".join(body) + "\n", where))
        elif lang == "console":
            commands = []
            open_quote = False  # a command whose single quotes are not closed goes on (python3 -c '...)
            for n, b in enumerate(body):
                if open_quote:
                    commands[-1] = (commands[-1][0] + "\n" + b, commands[-1][1], commands[-1][2])
                    open_quote = commands[-1][0].count("'") % 2 == 1
                elif b.startswith("$ "):
                    commands.append((b[2:], [], where + 1 + n))
                    open_quote = b.count("'") % 2 == 1
                elif commands:
                    commands[-1][1].append(b)
                else:
                    raise SystemExit(f"walkthrough.md:{where}: console block output before any command")
            answers = arg.split() if kind == "terminal" else None
            steps.append(("console", commands, answers, where))
    return steps, volatile


def elided(line):
    return line.strip() in ("…", "...")


def line_matches(expected, actual):
    if expected.endswith("…"):
        return actual.startswith(expected[:-1])
    return expected == actual


def matches(expected, actual):
    """Expected lines (with elisions) against actual lines: True or False."""
    memo = {}

    def go(e, a):
        key = (e, a)
        if key in memo:
            return memo[key]
        if e == len(expected):
            r = a == len(actual)
        elif elided(expected[e]):
            r = any(go(e + 1, k) for k in range(a, len(actual) + 1))
        else:
            r = a < len(actual) and line_matches(expected[e], actual[a]) and go(e + 1, a + 1)
        memo[key] = r
        return r

    return go(0, 0)


def normalise(text, volatile, scratch):
    text = text.replace(scratch, PAGE_DIR)
    out = []
    for line in text.split("\n"):
        for v in volatile:
            line = v.sub("⟨volatile⟩", line)
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return out


def run_piped(command, prev_exit, env, cwd):
    # stdout and stderr into one pipe, line-buffered (coreutils' stdbuf library, inherited by every
    # process of the command), so they interleave as on a terminal.
    p = subprocess.run(["bash", "-c", f"( exit {prev_exit} ); {command}"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def run_on_terminal(command, answers, env, cwd):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe("bash", ["bash", "-c", command], env)
    transcript = b""
    answers = list(answers)
    deadline = time.time() + 300
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            transcript += chunk
            continue
        # Nothing more for now: the command waits for an answer, or is working.
        tail = transcript.rstrip(b" ")
        if answers and transcript.endswith(b" ") and (tail.endswith(b"?") or tail.endswith(b":") or tail.endswith(b"]")):
            os.write(fd, answers.pop(0).encode() + b"\n")
            time.sleep(0.05)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    text = transcript.decode("utf-8", "replace").replace("\r\n", "\n")
    return os.waitstatus_to_exitcode(status), text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--page", required=True)
    ap.add_argument("--bin-dir", required=True, help="the directory holding the built genrepro")
    ap.add_argument("--work", help="where to run the page (default: a new directory under $TMPDIR, removed after a pass); "
                                    "outside any git work tree, as the page's output says (bless records no commit)")
    ap.add_argument("--keep-going", action="store_true", help="report every mismatch, not only the first")
    ap.add_argument("--times", action="store_true", help="print each command's wall time")
    a = ap.parse_args()
    steps, volatile = parse(open(a.page, encoding="utf-8").read())
    if a.work:
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)
        work = os.path.realpath(a.work)
    else:
        work = os.path.realpath(tempfile.mkdtemp(prefix="genrepro-walkthrough-"))
    env = dict(os.environ)
    env["PATH"] = os.path.realpath(a.bin_dir) + os.pathsep + env.get("PATH", "")
    for k in ("CI", "GITHUB_ACTIONS", "GENREPRO_MODEL"):
        env.pop(k, None)
    env["TERM"] = "dumb"
    stdbuf = next((p for p in ("/usr/libexec/coreutils/libstdbuf.so", "/usr/lib/coreutils/libstdbuf.so") if os.path.exists(p)), None)
    piped_env = dict(env)
    if stdbuf:
        piped_env.update(LD_PRELOAD=stdbuf, _STDBUF_O="L", _STDBUF_E="0")
    failures, commands_run = [], 0
    prev_exit = 0
    for step in steps:
        if step[0] == "file":
            _, name, text, where = step
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                f.write(text)
        elif step[0] == "run":
            _, text, where = step
            p = subprocess.run(["bash", "-e", "-c", text], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                failures.append(f"walkthrough.md:{where}: the sh block failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
                break
        else:
            _, commands, answers, where = step
            for n, (command, expected, line_no) in enumerate(commands):
                started = time.time()
                if answers is not None and n == 0:
                    prev_exit, out = run_on_terminal(command, answers, env, work)
                else:
                    prev_exit, out = run_piped(command, prev_exit, piped_env, work)
                commands_run += 1
                if a.times:
                    print(f"{time.time() - started:6.2f} s  $ {command.splitlines()[0][:100]}")
                want = normalise("\n".join(expected), volatile, work)
                got = normalise(out, volatile, work)
                if not matches(want, got):
                    failures.append(f"walkthrough.md:{line_no}: $ {command}\n--- the page shows:\n" + "\n".join(want) +
                                    "\n--- the command printed:\n" + "\n".join(got))
                    if not a.keep_going:
                        break
            if failures and not a.keep_going:
                break
    for f in failures:
        print("FAIL:", f, "\n")
    if failures:
        print(f"the page ran in {work} (kept for a look)")
    if not failures:
        print(f"ok: {commands_run} commands of {a.page} printed what the page shows")
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    elif commands_run == 0:
        print("no command ran")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
