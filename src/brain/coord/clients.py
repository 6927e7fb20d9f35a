"""Which client process a brain process works for, read from /proc.

One Claude Code session runs brain twice: its hooks (short processes started through a
shell) and its MCP server (a child that lives as long as the client). Both find the
same client process — the first ancestor that is not a shell — so they can share one
coordination session instead of showing a person two agents where there is one.
Elsewhere than Linux nothing is known and each process keeps its own session.

``client_role`` turns the name a client gives at the MCP handshake into its session's role.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

__all__ = ["client_pid", "client_of", "process_started", "joins_client", "client_role", "KNOWN_CLIENTS"]

# clientInfo.name of the clients people run -> the role their sessions get (one name per program)
KNOWN_CLIENTS = {"codex": "codex", "codex-mcp-client": "codex", "codex-cli": "codex", "claude-code": "claude-code"}


def client_role(client_name: object) -> str:
    """The session role of an MCP client from its ``clientInfo.name``: a known client's usual name, else
    the name cut to role characters (letters, digits, '-', '_'; at most 40), else the default role.

    The name is whatever the client sent: anything else than a short name becomes the default role."""
    from ..security.territories import DEFAULT_ROLE

    name = client_name.strip() if isinstance(client_name, str) and len(client_name) <= 200 else ""
    known = KNOWN_CLIENTS.get(name.lower())
    if known:
        return known
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:40].strip("-") or DEFAULT_ROLE

_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "fish", "env", "timeout", "nice", "nohup"}


def _stat(pid: int) -> tuple[str, list[str]] | None:
    """(command name, the fields after it) of /proc/<pid>/stat, or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.index("(") + 1: stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def _first_client(pid: int) -> int | None:
    """``pid`` or its first ancestor that is not a shell."""
    for _ in range(8):
        if pid <= 1:
            return None
        found = _stat(pid)
        if found is None:
            return None
        comm, fields = found
        if comm not in _SHELLS:
            return pid
        pid = int(fields[1])
    return None


def client_pid() -> int | None:
    """The client process that started this one: the first ancestor that is not a shell.

    A client runs a hook command through a shell that exits with it, so the parent pid
    alone would make a session look dead at once. None when /proc cannot tell."""
    return _first_client(os.getppid())


def client_of(pid: int) -> int | None:
    """The client process that started process ``pid`` (see ``client_pid``), or None."""
    found = _stat(pid)
    return _first_client(int(found[1][1])) if found else None


def joins_client(client: int, *, servers: bool) -> Callable[[int, float], bool]:
    """Which existing sessions a process working for ``client`` may share (``Coordinator.join_or_start_session``).

    Sessions recording the client's own pid (its hooks') started after the client did, and with
    ``servers``, sessions of processes the client started (its MCP server's). An MCP server passes
    ``servers=False``: one program may run several servers for several agents, and those stay apart.
    """
    since = process_started(client) or 0.0

    def joinable(pid: int, started: float) -> bool:
        if pid == client:
            return started >= since - 1.0  # an older session belonged to an earlier owner of the pid
        return servers and client_of(pid) == client

    return joinable


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds), or None: tells a reused pid from its first owner."""
    found = _stat(pid)
    if found is None:
        return None
    try:
        ticks = int(found[1][19])  # field 22 of stat: start time in clock ticks since boot
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None
