"""The derived environment (`brain state`): computed at call time, never stored.

Git branch and head, how many files are changed, recent commit subjects, and for
each service declared in settings whether something listens on its port.

``services`` may come from a cloned repository's brain.yml (and `brain_state` is any
token's tool on the team server), so the repository must not choose where brain
connects nor how long it waits: only loopback hosts are probed, unless this machine's own
settings allow a host (``state.allowed_hosts`` in brain.local.yml, ``BRAIN_STATE_HOSTS``);
no name is even looked up otherwise. The list is bounded (settings: ``SERVICES_MAX``) and
every port is probed at once, with one deadline for them all (``PROBE_SECONDS``): a port
whose accept queue is full (SYNs dropped) costs that deadline once, not once per entry.
"""

from __future__ import annotations

import errno
import selectors
import socket
import time
from pathlib import Path

from .gitsafe import project_repo

__all__ = ["derive_state", "port_open", "probe_ports", "host_allowed", "PROBE_SECONDS"]

PROBE_SECONDS = 0.5  # one deadline for every probe of a `brain state`


def host_allowed(host: str, allowed: list[str] | tuple[str, ...] = ()) -> bool:
    """Loopback (by address or ``localhost``), or named by this machine's settings."""
    from .team.hosts import is_loopback

    return is_loopback(host) or host.strip().lower() in {h.strip().lower() for h in allowed}


def port_open(host: str, port: int, timeout: float = PROBE_SECONDS) -> bool:
    return probe_ports([(host, port)], timeout)[0]


def probe_ports(targets: list[tuple[str, int]], timeout: float = PROBE_SECONDS) -> list[bool]:
    """Whether something accepts a TCP connection on each ``(host, port)``: all connects in flight at once,
    non-blocking, until they all answer or ``timeout`` seconds pass (then the rest count as not listening)."""
    results = [False] * len(targets)
    selector = selectors.DefaultSelector()
    pending: dict[socket.socket, int] = {}
    try:
        for i, (host, port) in enumerate(targets):
            try:
                family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
                sock = socket.socket(family, kind, proto)
            except OSError:
                continue
            sock.setblocking(False)
            code = sock.connect_ex(address)
            if code == 0:
                results[i] = True
                sock.close()
            elif code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
                pending[sock] = i
                selector.register(sock, selectors.EVENT_WRITE)
            else:
                sock.close()
        deadline = time.monotonic() + timeout
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for key, _events in selector.select(left):
                sock = key.fileobj
                results[pending.pop(sock)] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
                selector.unregister(sock)
                sock.close()
    finally:
        for sock in pending:
            sock.close()
        selector.close()
    return results


def derive_state(repo: Path, services: list[dict], recent: int = 5, allowed_hosts: list[str] | tuple[str, ...] = ()
                 ) -> dict:
    git: dict = {"repository": False}
    runner = project_repo(repo, timeout=5)
    inside = runner.output("rev-parse", "--is-inside-work-tree") if runner else None
    if inside and inside.strip() == "true":
        branch = (runner.output("rev-parse", "--abbrev-ref", "HEAD") or "").strip() or None
        head = (runner.output("rev-parse", "--short", "HEAD") or "").strip() or None
        status = runner.output("status", "--porcelain") or ""
        subjects = (runner.output("log", f"-{recent}", "--format=%s") or "").splitlines()
        git = {
            "repository": True,
            "branch": branch,
            "head": head,
            "changed_files": len([line for line in status.splitlines() if line.strip()]),
            "recent_commits": subjects,
        }
    checked = []
    for service in services:
        host = service.get("host", "127.0.0.1")
        entry = {"name": service["name"], "host": host, "port": service["port"], "listening": None}
        if not host_allowed(host, allowed_hosts):
            entry["skipped"] = "not a loopback host: allow it in state.allowed_hosts (brain.local.yml)"
        checked.append(entry)
    probed = [entry for entry in checked if "skipped" not in entry]
    for entry, listening in zip(probed, probe_ports([(e["host"], e["port"]) for e in probed])):
        entry["listening"] = listening
    return {"git": git, "services": checked}


def render_state(state: dict) -> str:
    git = state["git"]
    lines = []
    if git.get("repository"):
        lines.append(f"branch {git['branch']} at {git['head'] or '(no commit)'}, {git['changed_files']} changed file(s)")
        for subject in git["recent_commits"]:
            lines.append(f"  - {subject}")
    else:
        lines.append("not a git repository")
    for service in state["services"]:
        mark = ("not probed: " + service["skipped"]) if service.get("skipped") else (
            "listening" if service["listening"] else "nothing listening")
        lines.append(f"service {service['name']} on {service['host']}:{service['port']}: {mark}")
    return "\n".join(lines)
