"""Start several real `brain` processes at the same instant: each child says it is ready on one pipe and
waits (bounded) on another, which the parent closes once all are ready, so they race for real.

``run_together(argvs, cwd=..., env=...)`` returns the CompletedProcess-like results in order."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass

BOUND = 120  # seconds any wait here may take at most

_CHILD = """
import os, select, sys
ready, go = int(sys.argv[1]), int(sys.argv[2])
os.write(ready, b"r"); os.close(ready)
if not select.select([go], [], [], float(sys.argv[3]))[0]:
    sys.exit(99)  # the gate never opened: a bounded wait, not a hang
os.close(go)
os.execv(sys.executable, [sys.executable, *sys.argv[4:]])
"""


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run_together(argvs: list[list[str]], *, cwd, env: dict | None = None, umask: int | None = None) -> list[Result]:
    """Run ``python ARGV...`` for each argv (e.g. ``["-m", "brain", "decision", "new", "x"]``), all released together."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    procs = []
    try:
        for argv in argvs:
            procs.append(subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(ready_w), str(go_r), str(BOUND), *argv], cwd=cwd,
                env={**os.environ, **(env or {})}, pass_fds=(ready_w, go_r), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=(lambda: os.umask(umask)) if umask is not None else None))
        os.close(ready_w)
        ready_w = -1
        os.close(go_r)
        go_r = -1
        seen, deadline = 0, time.monotonic() + BOUND
        while seen < len(argvs):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([ready_r], [], [], left)[0]:
                raise TimeoutError(f"only {seen} of {len(argvs)} processes became ready")
            chunk = os.read(ready_r, 64)
            if not chunk:
                raise RuntimeError(f"a process died before it was ready ({seen} of {len(argvs)} ready)")
            seen += len(chunk)
        os.close(go_w)  # every child's select returns at once (end of file)
        go_w = -1
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=BOUND)
            results.append(Result(proc.returncode, out, err))
        return results
    finally:
        for fd in (ready_r, ready_w, go_r, go_w):
            if fd >= 0:
                os.close(fd)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
