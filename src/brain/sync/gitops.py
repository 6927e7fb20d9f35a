"""A thin runner for the git commands of commit-on-write and ``brain sync``.

Every command runs with a timeout, no prompt (``GIT_TERMINAL_PROMPT=0``) and, when the
repository has no identity configured, a neutral one, so a memory commit never hangs
on a question or fails for want of ``user.name``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import SyncError

__all__ = ["Git", "find_repo_root"]

_IDENTITIES: dict[str, list[str]] = {}  # per repository, for the life of the process (a server commits often)


def find_repo_root(path: Path, stop: Path | None = None) -> Path | None:
    """The nearest folder at or above ``path`` holding a ``.git`` entry (not above ``stop``'s repo)."""
    path = Path(path)
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
        if stop is not None and folder == stop.parent:
            break
    return None


class Git:
    def __init__(self, root: Path, timeout: float = 60.0) -> None:
        self.root = Path(root)
        self.timeout = timeout
        self._identity: list[str] | None = None

    def _env(self) -> dict[str, str]:
        return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}

    def identity(self) -> list[str]:
        if self._identity is None and str(self.root) in _IDENTITIES:
            self._identity = _IDENTITIES[str(self.root)]
        if self._identity is None:
            name = self.run("config", "user.name", check=False).stdout.strip()
            email = self.run("config", "user.email", check=False).stdout.strip()
            env = os.environ
            self._identity = [] if (name or env.get("GIT_AUTHOR_NAME")) and (email or env.get("GIT_AUTHOR_EMAIL")) \
                else ["-c", "user.name=brain", "-c", "user.email=brain@localhost"]
            _IDENTITIES[str(self.root)] = self._identity
        return self._identity

    def run(self, *args: str, check: bool = True, identity: bool = False) -> subprocess.CompletedProcess:
        cmd = ["git", *(self.identity() if identity else []), *args]
        try:
            out = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=self.timeout,
                                 env=self._env())
        except subprocess.TimeoutExpired:
            raise SyncError(str(self.root), " ".join(args), f"timed out after {self.timeout:.0f} s") from None
        except OSError as exc:
            raise SyncError(str(self.root), " ".join(args), str(exc)) from None
        if check and out.returncode != 0:
            raise SyncError(str(self.root), " ".join(args), out.stderr or out.stdout)
        return out

    def rev(self, ref: str) -> str | None:
        out = self.run("rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
        return out.stdout.strip() or None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0
