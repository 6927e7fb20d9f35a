"""Forked worker processes that die with the process that forked them.

A ``brain map`` killed with SIGKILL runs no cleanup: the workers of its process pool
(cards/mapper.py) stayed alive for good, blocked reading a pipe nobody would write to.
Two mechanisms, either enough alone:

- Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in each worker, so the kernel kills it when
  its parent dies (checked right after, in case the parent died first);
- anywhere: a *lifeline* pipe whose write end only the parent keeps (each worker closes its
  inherited copy); a daemon thread in the worker blocks reading the other end and ends the
  worker at end-of-file, which the kernel delivers when the parent is gone. No polling.

Use ``Lifeline`` around the pool: ``initializer=lifeline.initializer, initargs=lifeline.initargs``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["Lifeline", "die_with_parent", "set_death_signal"]

PR_SET_PDEATHSIG = 1


class Lifeline:
    """The parent's side: a pipe kept open while the workers may run; closing it ends them."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.initargs = (os.getpid(), self.read_fd, self.write_fd)
        self.initializer = die_with_parent

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> "Lifeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def die_with_parent(parent: int, read_fd: int, write_fd: int) -> None:
    """Worker initializer: arrange to be killed (or to exit) as soon as ``parent`` dies."""
    try:
        os.close(write_fd)  # only the parent's copy may keep the lifeline open
    except OSError:
        pass
    if sys.platform.startswith("linux"):
        set_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_wait_for_eof, args=(read_fd,), name="brain-lifeline", daemon=True).start()


def set_death_signal(sig: int) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies (Linux prctl; elsewhere nothing).

    Call it in the child right after the fork, then compare ``os.getppid()`` with the parent's pid:
    a parent that died before this call sends nothing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here: the lifeline alone does it
        pass


def _wait_for_eof(read_fd: int) -> None:
    try:
        while os.read(read_fd, 1):
            pass
    except OSError:
        pass
    os._exit(1)
