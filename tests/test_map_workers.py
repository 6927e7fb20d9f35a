"""A `brain map` killed with SIGKILL takes its worker processes with it (brain.workers)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

DEADLINE = 60.0
SOURCE = "".join(f"def function_{i}(a, b):\n    '''Doc {i}.'''\n    return a + b * {i}\n\n\n" for i in range(120))


def forked_children(pid: int) -> list[int]:
    """The children of ``pid`` that are forks of it (same command line: pool workers, not git)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        try:
            same = Path(f"/proc/{entry}/cmdline").read_bytes() == command
        except OSError:
            continue
        if int(fields[1]) == pid and same:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def poll(condition, deadline: float, what: str):
    """Wait (bounded) until ``condition()`` is true, by polling /proc."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"not within {deadline:g} s: {what}")


def two_or_none(found: list[int]) -> list[int]:
    return found if len(found) >= 2 else []


def test_sigkilled_map_leaves_no_worker_alive(brain, repo):
    (brain.dir / "brain.yml").write_text((brain.dir / "brain.yml").read_text() + "\ncards:\n  workers: 2\n")
    for package in ("alpha", "beta", "gamma"):
        folder = repo / package
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        for i in range(600):
            (folder / f"m{i}.py").write_text(SOURCE)
    proc = subprocess.Popen([sys.executable, "-m", "brain", "map", "--json"], cwd=repo,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        workers = poll(lambda: two_or_none(forked_children(proc.pid)), DEADLINE, "map started its two workers")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE)
        poll(lambda: not any(alive(w) for w in workers), DEADLINE, f"workers {workers} died with their parent")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for worker in workers:  # on the old code: end the orphans this test made
            if alive(worker):
                os.kill(worker, signal.SIGKILL)


POOL = """
import os, signal, sys
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
import brain.workers as workers
workers.set_death_signal = lambda sig: None  # as where prctl does not exist: the lifeline alone
with workers.Lifeline() as lifeline, ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
        initializer=lifeline.initializer, initargs=lifeline.initargs) as pool:
    print(pool.submit(os.getpid).result(), flush=True)
    signal.pause()
"""


def test_the_lifeline_alone_ends_a_worker_whose_parent_was_killed():
    proc = subprocess.Popen([sys.executable, "-c", POOL], stdout=subprocess.PIPE, text=True)
    worker = 0
    try:
        worker = int(proc.stdout.readline())
        assert alive(worker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE)
        poll(lambda: not alive(worker), DEADLINE, f"worker {worker} saw its lifeline close")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if worker and alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_sigkilled_http_server_leaves_no_worker_alive(brain, repo):
    """The same guarantee for `brain serve --http --workers 2` (brain.mcp.prefork, one death-signal helper)."""
    import pytest

    pytest.importorskip("mcp")
    from test_mcp_helpers import LISTENING, LineReader

    brain.tokens.create("alice", role="backend", machine="m1")  # workers serve token holders only
    proc = subprocess.Popen([sys.executable, "-m", "brain", "serve", "--http", "--port", "0", "--workers", "2"],
                            cwd=repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: list[int] = []
    try:
        err = LineReader(proc.stderr)
        while True:
            line = err.readline()
            assert line is not None, "the server exited before listening"
            if line.startswith(LISTENING):
                break
        workers = poll(lambda: two_or_none(forked_children(proc.pid)), DEADLINE, "the server forked two workers")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE)
        poll(lambda: not any(alive(w) for w in workers), DEADLINE, f"workers {workers} died with their parent")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
        for worker in workers:
            if alive(worker):
                os.kill(worker, signal.SIGKILL)
