"""The install record of each client (`runtime/installs/<client>.json`): what install found and wrote.

Uninstall trusts this record: it puts back the bytes it holds (into `~/.codex/config.toml`,
the repository's files) and edits the files it names (`~/.claude.json`, `info/exclude`). A
record is made on this machine; one that git tracks came with a clone (`git add -f` of an
ignored `runtime/` file), and following it would let a repository's author choose what brain
writes into the user's own client config. So a tracked record is refused (``SettingsError``,
exit 4) before anything is read from it.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import SettingsError
from .jsonedit import read_json_object

__all__ = ["manifest_path", "read_manifest", "write_manifest"]


def manifest_path(brain, client: str) -> Path:
    return brain.runtime / "installs" / f"{client}.json"


def _refuse_tracked(brain, path: Path) -> None:
    from ..gitsafe import project_repo

    repo = project_repo(brain.dir)
    if repo is None or not path.exists():
        return
    tracked = (repo.output("ls-files", "-z", "--", str(path)) or "").strip("\0")
    if tracked:
        raise SettingsError(str(path), None, "brain's own install record, never versioned",
                            f"a file tracked by git (it came with the repository); run `git rm --cached {path}`, "
                            "delete it, then install again")


def read_manifest(brain, client: str) -> dict:
    """The record of ``client``'s install (``{}`` when there is none); a tracked one is refused."""
    path = manifest_path(brain, client)
    _refuse_tracked(brain, path)
    return read_json_object(path)


def write_manifest(brain, client: str, manifest: dict) -> None:
    from ..memory.files import atomic_write_bytes

    atomic_write_bytes(manifest_path(brain, client), json.dumps(manifest, indent=2).encode("utf-8"), private=True)
