"""Where an MCP tool call runs: admitted per bearer token, its sync work on a worker thread, its waits on the loop.

The SDK runs a sync tool on anyio's worker threads (40 of them, shared by every caller). A
call that waits (``ask_agent`` may wait ten minutes for a reply) used to hold one the whole
time, so 45 asks of one token held them all: another token's ``brain_sessions`` waited
minutes, and the asked agent could not even heartbeat, so every ask ended ``stalled``.
Now:

- a wait holds no thread: it polls the ask's row (one short read on a thread) between
  ``anyio`` sleeps, woken at once by a reply made through this process;
- each token may have ``server.token_calls`` calls running at once in this process, waits
  included; one more is refused at once with ``Busy`` (tool error ``busy``), so one token
  holds at most that many threads and every other token's calls, heartbeats among them,
  still find one.

Without a token (stdio, a loopback server before the first token) there is no limit: the
caller is the machine's own user.

Sync tool calls run on at most ``TOOL_THREADS`` threads at once (a limiter of their own, FIFO),
not on all 40 of anyio's: a tool holds the GIL for nearly all its time and coordination writes
queue on one writer lock, so more threads buy no throughput, only thread switches — with 64
HTTP clients, 40 threads cost 0.3-0.4 ms more CPU per claim than 8 (``bench/bench_team.py``).
The limiter is FIFO, so a token with calls queued never overtakes another token's earlier call.

Heavy tools (``heavy=True``: a boot, a search; tens of milliseconds of CPU against a claim's
half millisecond) run in a lane of their own, ``HEAVY_THREADS`` threads, FIFO too: with 64 agents
booting, claiming and signalling, a claim no longer waits behind the boots queued before it on
one limiter (it did: claims in that mix had a p99 of half a second to 1.6 s), and at most that
many boots compete with the claims for the GIL at once. One: a boot holds the GIL for nearly all
its time, and a second boot thread bought a third more boots per second by taking the GIL from the
claims (PostgreSQL, 64 clients, load 20-27: claims in the mix p99 87-270 ms against 37-83 with one
thread; README, team server). ``--workers N`` gives each process its own lane.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import weakref
from contextlib import asynccontextmanager
from typing import Any, Callable

import anyio
import anyio.to_thread

from ..errors import Busy

__all__ = ["admitted", "in_thread", "wait_for_ask", "ask_changed", "TOKEN_CALLS_MAX", "TOOL_THREADS", "HEAVY_THREADS"]

TOKEN_CALLS_MAX = 256
TOOL_THREADS = 16  # threads running sync tool calls at once, per event loop: twice a token's default call limit
HEAVY_THREADS = 1  # threads running heavy tool calls (boots, searches) at once, per event loop, beside those
POLL_FIRST = 0.01  # seconds between two reads of a waited ask, doubling up to POLL_MOST
POLL_MOST = 0.25

_running: dict[tuple[int, str], int] = {}  # (id of the Brain, token name) -> calls running; touched on the loop only


@asynccontextmanager
async def admitted(brain):
    """Count this call against its token's limit for its span; ``Busy`` when the token is at the limit."""
    from ..team.identity import current_principal

    principal = current_principal()
    if principal is None:
        yield
        return
    limit = brain.settings.bounded("server.token_calls", 1, TOKEN_CALLS_MAX)
    key = (id(brain), principal.name)
    running = _running.get(key, 0)
    if running >= limit:
        raise Busy(principal.name, running, limit)
    _running[key] = running + 1
    try:
        yield
    finally:
        left = _running[key] - 1
        if left:
            _running[key] = left
        else:
            del _running[key]


_limiters: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]]" = \
    weakref.WeakKeyDictionary()


def _tool_limiter(heavy: bool = False) -> anyio.CapacityLimiter:
    """The running loop's limiter of tool threads, or of heavy-tool threads (made on first use: a limiter
    belongs to one loop)."""
    loop = asyncio.get_running_loop()
    limiters = _limiters.get(loop)
    if limiters is None:
        limiters = _limiters[loop] = (anyio.CapacityLimiter(TOOL_THREADS), anyio.CapacityLimiter(HEAVY_THREADS))
    return limiters[1 if heavy else 0]


async def in_thread(fn: Callable[..., Any], *args: Any, heavy: bool = False) -> Any:
    """``fn(*args)`` on a worker thread, at most ``TOOL_THREADS`` at once, or ``HEAVY_THREADS`` in the heavy
    lane (the context, and so the caller's principal, follows it)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=_tool_limiter(heavy))


# -- waiting on an ask -------------------------------------------------------------
_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
_waiters_guard = threading.Lock()


def ask_changed() -> None:
    """Wake every ask waiting in this process (a reply was written): callable from any thread."""
    with _waiters_guard:
        waiters = list(_waiters)
    for loop, event in waiters:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # that loop has closed
            pass


async def _pause(seconds: float) -> None:
    """Sleep up to ``seconds``, or less if ``ask_changed`` is called meanwhile."""
    loop = asyncio.get_running_loop()
    event = asyncio.Event()
    entry = (loop, event)
    with _waiters_guard:
        _waiters.add(entry)
    try:
        with anyio.move_on_after(seconds):
            await event.wait()
    finally:
        with _waiters_guard:
            _waiters.discard(entry)


async def wait_for_ask(coord, ticket: str, *, wait_seconds: float | None = None):
    """The outcome of ``ticket`` (reply, stalled, timeout), or ``pending`` once ``wait_seconds`` passed.

    Each turn is ``coord.wait`` with the shortest bound (one read of the row: it resolves a
    passed deadline or a stalled target exactly as a blocking wait does), on a worker thread
    for milliseconds; between turns the loop sleeps, holding no thread. The asker's session is
    refreshed every ``HEARTBEAT_EVERY`` seconds, as a blocking wait does."""
    from ..coord.asks import HEARTBEAT_EVERY
    from ..coord.model import AskResult
    from ..coord.rules import resolve_turn_timeout
    from ..errors import NotFound

    turn = None if wait_seconds is None else resolve_turn_timeout(wait_seconds, coord.ask_timeout())
    started = last_beat = time.monotonic()
    pause = POLL_FIRST
    while True:
        result = await in_thread(functools.partial(coord.wait, ticket, turn_timeout=1e-6))
        if result.outcome != "pending":
            return result
        now = time.monotonic()
        if turn is not None and now - started >= turn:
            return AskResult("pending", None, ticket)
        if now - last_beat >= HEARTBEAT_EVERY:
            last_beat = now
            asker = (await in_thread(coord.get_ask, ticket)).asker
            try:
                await in_thread(coord.heartbeat, asker)
            except NotFound:
                pass
        left = None if turn is None else turn - (now - started)
        await _pause(pause if left is None else max(0.0, min(pause, left)))
        pause = min(pause * 2, POLL_MOST)
