"""Several server processes on one listening socket (``brain serve --http --workers N``).

One Python process serves on one core (the GIL), however many agents call it. The
parent binds the socket, forks the workers, and only supervises: a stop signal is
passed on to every worker, a worker that dies is replaced, and a worker that dies
right after its start by itself (a broken install, a damaged settings file) stops
the server instead of restarting in a loop. Workers get SIGTERM if the parent dies, so a killed
server leaves no orphan listening on the port. A stop is bounded: a worker still running ``STOP_GRACE_S``
after its SIGTERM (a request that never ends, a shutdown that waits on one) is killed, so `brain serve`
always exits. Stop signals are blocked across each fork, so a new worker never runs the parent's handler.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from typing import Callable

from ..errors import BackendError

__all__ = ["run_workers"]

QUICK_DEATH_S = 2.0  # a worker that exits sooner than this after its start is broken, not unlucky
STOP_GRACE_S = 15.0  # a worker still running this long after its SIGTERM is killed
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _die_with_parent(parent: int) -> None:
    """SIGTERM this process when its parent exits (Linux prctl; elsewhere nothing); exit now if the parent
    is already gone (it died between the fork and the prctl)."""
    from ..workers import set_death_signal

    set_death_signal(signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(0)


def _fork(target: Callable[[], None]) -> int:
    parent = os.getpid()
    # blocked across the fork: a stop arriving before the child's own handlers are set waits for them,
    # instead of running the parent's handler (which would stop the siblings and leave this child serving)
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        raise
    if pid:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        return pid
    code = 0
    try:  # the child: default signal handling (the server installs its own), then serve
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        _die_with_parent(parent)
        target()
    except KeyboardInterrupt:
        pass
    except BaseException:  # noqa: BLE001 - report, then leave without running the parent's cleanup
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


def _signal_all(pids, sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def run_workers(count: int, target: Callable[[], None], *, announce: Callable[[], None] | None = None,
                grace: float = STOP_GRACE_S) -> None:
    """Run ``target`` in ``count`` forked workers until a stop signal; replace workers that die. After a stop,
    workers still running ``grace`` seconds later are killed."""
    stopping = False
    workers: dict[int, float] = {}

    def stop(signum, _frame) -> None:
        nonlocal stopping
        if not stopping:
            deadline = threading.Timer(grace, lambda: _signal_all(list(workers), signal.SIGKILL))
            deadline.daemon = True
            deadline.start()
        stopping = True
        _signal_all(list(workers), signal.SIGTERM)  # SIGTERM, not the signal received: a second SIGINT forces an exit

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for _ in range(count):
            workers[_fork(target)] = time.monotonic()
        if announce is not None:
            announce()
        while workers:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            started = workers.pop(pid, None)
            if started is None or stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            if code > 0 and time.monotonic() - started < QUICK_DEATH_S:  # failed by itself, not killed
                stop(signal.SIGTERM, None)
                for other in list(workers):
                    os.waitpid(other, 0)
                raise BackendError(f"a server worker exited right after its start (exit code {code})",
                                   hint="run with --workers 1 (and BRAIN_LOG=debug) to see why")
            sys.stderr.write(f"brain: server worker {pid} exited (code {code}); starting another\n")
            workers[_fork(target)] = time.monotonic()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
