"""The heartbeat of a connected agent: its session stays alive for as long as its connection is open.

Liveness comes from heartbeats (brain.coord.rules.liveness). An agent connected over stdio
that sits waiting for its user makes no call for minutes; without this it would show
stalled after ``coord.stall_seconds`` and gone after ``coord.gone_seconds`` (skipped by
broadcasts, its checkpoint handed to a successor) while it is still there. The MCP server
beats for it, a few times per stall window, from its handshake until the connection closes.
A server that dies stops beating, and its registered pid makes it gone at once anyway.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["ConnectionHeartbeat", "beat_interval"]

log = logging.getLogger("brain.coord")


def beat_interval(stall_seconds: float) -> float:
    """Three beats per stall window (a missed one never stalls the session), at most one a second."""
    return max(stall_seconds / 3.0, 1.0) if stall_seconds >= 3 else max(stall_seconds / 3.0, 0.05)


class ConnectionHeartbeat:
    """A daemon thread calling ``coord.heartbeat(session)`` every ``interval`` seconds until ``stop``."""

    def __init__(self, coord, session: str, interval: float) -> None:
        self.coord, self.session, self.interval = coord, session, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat {session}", daemon=True)

    def start(self) -> "ConnectionHeartbeat":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.coord.heartbeat(self.session)
            except Exception as exc:  # noqa: BLE001 - ended elsewhere (its hooks), or the store is down: stop
                log.debug("heartbeat of %s stopped: %s", self.session, exc)
                return

    def stop(self) -> None:
        """Stop beating (the connection closed) and wait for the thread, bounded by one interval."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.interval + 5.0)
