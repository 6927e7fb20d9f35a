"""A progress line on stderr for a code index build that keeps an agent waiting.

A task boot on a repository whose code index is missing or stale refreshes what changed
before it ranks; on a big repository that can take many seconds, and a silent wait looks
like a hang. After ``delay`` seconds this says what is going on, on stderr only (never
stdout, never an MCP answer), at most once a second, and how long it took at the end.
"""

from __future__ import annotations

import sys
import time

__all__ = ["DelayedProgress", "PROGRESS_DELAY"]

PROGRESS_DELAY = 1.0  # seconds of silence before the first line


class DelayedProgress:
    """``progress(done, total, what)`` callable: silent for short builds, one line a second after ``delay``."""

    def __init__(self, label: str, stream=None, *, delay: float = PROGRESS_DELAY, every: float = 1.0) -> None:
        self.label = label
        self.stream = stream
        self.delay = delay
        self.every = every
        self.started = time.monotonic()
        self.last = 0.0
        self.said = False

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # a closed stderr must not cost the boot its answer
            pass

    def __call__(self, done: int, total: int, what: str = "") -> None:
        now = time.monotonic()
        if now - self.started < self.delay or total <= 0:
            return
        if done >= total:
            if self.said:
                self._write(f"brain: {self.label}: {total} files in {now - self.started:.1f} s\n")
                self.said = False
            return
        if self.said and now - self.last < self.every:
            return
        self.last = now
        self.said = True
        self._write(f"brain: {self.label}: {done}/{total} files ({what or 'indexing'}), "
                    f"{now - self.started:.0f} s so far\n")
