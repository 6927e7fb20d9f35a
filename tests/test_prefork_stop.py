"""`brain serve --http --workers N` stops in bounded time (brain.mcp.prefork): a worker that ignores its
SIGTERM is killed after the grace period, so the parent always exits; real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

BOUND = 60  # seconds any wait here may take before the test fails

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from brain.mcp.prefork import run_workers

    def stubborn():  # a worker whose shutdown never ends: it ignores the stop it is sent
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.write(1, f"worker {os.getpid()}\\n".encode())
        while True:
            signal.pause()

    run_workers(2, stubborn, announce=lambda: os.write(1, b"ready\\n"), grace=float(sys.argv[1]))
    os.write(1, b"stopped\\n")
""")


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")
def test_a_worker_that_ignores_its_stop_is_killed_after_the_grace_and_the_server_exits():
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, "0.5"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        seen, workers = [], []
        while len(workers) < 2 or "ready" not in seen:  # both workers ignore stops now, and the parent is ready
            line = proc.stdout.readline().decode().strip()
            assert line, "the server ended before its workers started"
            seen.append(line)
            if line.startswith("worker "):
                workers.append(int(line.split()[1]))
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=BOUND) == 0
        assert proc.stdout.read().decode().split() == ["stopped"]
        for pid in workers:  # reaped by the parent: no worker outlives the server
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=BOUND)
