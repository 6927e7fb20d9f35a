"""`python bench/serve_profiled.py OUT serve --http ...`: `brain serve` with cProfile in every thread.

The server's tools run on worker threads, which a plain ``python -m cProfile`` does not see:
each thread gets its own profiler here, and the merged stats go to OUT when the server stops
(SIGINT). Used by ``bench/bench_team.py --profile OUT``; read with ``python -m pstats OUT``.
Each profiler times its thread's CPU (``time.thread_time``), not the wall clock: on a loaded machine
the wall clock charges other processes' turns (and every wait for a lock) to whatever was running.
"""

from __future__ import annotations

import atexit
import cProfile
import pstats
import sys
import threading
import time

profiles: list[cProfile.Profile] = []
_guard = threading.Lock()
_bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]


def _profiled_bootstrap(self) -> None:
    profile = cProfile.Profile(time.thread_time)
    with _guard:
        profiles.append(profile)
    profile.enable()
    try:
        _bootstrap(self)
    finally:
        profile.disable()


def _dump(out: str) -> None:
    stats = None
    for profile in profiles:
        profile.disable()
        profile.create_stats()
        if not profile.stats:
            continue
        if stats is None:
            stats = pstats.Stats(profile)
        else:
            stats.add(profile)
    if stats is not None:
        stats.dump_stats(out)


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["brain", *sys.argv[2:]]
    threading.Thread._bootstrap_inner = _profiled_bootstrap  # type: ignore[attr-defined]
    main_profile = cProfile.Profile(time.thread_time)
    profiles.append(main_profile)
    atexit.register(_dump, out)
    from brain.cli.main import main as brain_main

    main_profile.enable()
    try:
        code = brain_main()
    finally:
        main_profile.disable()
    sys.exit(code)


if __name__ == "__main__":
    main()
