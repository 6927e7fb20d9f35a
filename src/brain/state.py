"""The derived environment (`brain state`): computed at call time, never stored.

Git branch and head, how many files are changed, recent commit subjects, and for
each service declared in settings whether something listens on its port.
"""

from __future__ import annotations

import socket
from pathlib import Path

from .gitsafe import project_repo

__all__ = ["derive_state", "port_open"]


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def derive_state(repo: Path, services: list[dict], recent: int = 5) -> dict:
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
        checked.append({"name": service["name"], "host": host, "port": service["port"],
                        "listening": port_open(host, service["port"])})
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
        mark = "listening" if service["listening"] else "nothing listening"
        lines.append(f"service {service['name']} on {service['host']}:{service['port']}: {mark}")
    return "\n".join(lines)
