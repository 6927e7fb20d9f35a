"""The git pre-commit hook: refresh the cards of the staged modules and stage them.

``install_git_hook`` writes `<hooks dir>/pre-commit` (honouring core.hooksPath). A hook
that is already there and is not ours is never overwritten: the install refuses with a
clear error, or with ``chain=True`` keeps it as `pre-commit.local` and runs it first
(its failure stops the commit, as before). ``refresh_staged`` is what the hook runs.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path

from ..errors import InvalidInput, SyncError
from ..gitsafe import GitRepo, hook_index_file, project_repo
from .discovery import card_rel_path

__all__ = ["install_git_hook", "uninstall_git_hook", "refresh_staged", "HOOK_MARKER", "hook_script"]

HOOK_MARKER = "# brain:pre-commit-hook"
CHAINED = "pre-commit.local"


def _project_git(repo: Path, *, hook: bool = False) -> GitRepo:
    """The project repository's runner; inside the hook, git's own index (``GIT_INDEX_FILE``) is used."""
    git = project_repo(repo, index_file=hook_index_file() if hook else None)
    if git is None:
        raise InvalidInput(f"{repo} is not inside a git repository", field="repo",
                           hint="run this inside a git repository")
    return git


def _git(git: GitRepo, *args: str) -> str:
    try:
        return git.run(*args).stdout
    except SyncError as exc:
        raise InvalidInput(f"git {' '.join(args)} failed: {exc.detail[:200]}", field="repo",
                           hint="run this inside a git repository") from None


def hooks_dir(repo: Path) -> Path:
    """The hooks folder git uses; refused when the repository's own `core.hooksPath` points outside it
    (brain writes a file there: the repository's configuration must not choose where)."""
    git = _project_git(repo)
    try:
        folder, owned = git.hooks_dir()
    except SyncError as exc:
        raise InvalidInput(f"git rev-parse --git-path hooks failed: {exc.detail[:200]}", field="repo",
                           hint="run this inside a git repository") from None
    if not owned:
        raise InvalidInput(f"core.hooksPath in the repository's own git config points outside it ({folder}); "
                           "not installing a hook there", field="hook",
                           hint="set core.hooksPath to a folder inside the repository, or in your global git config")
    return folder


def hook_script(python: str | None = None) -> str:
    python = python or sys.executable
    return f"""#!/bin/sh
{HOOK_MARKER}
# Installed by `brain install git-hook`: refreshes the module cards of the staged files
# and stages them, so each card lands in the same commit as its code.
hook_dir=$(dirname "$0")
if [ -x "$hook_dir/{CHAINED}" ]; then
    "$hook_dir/{CHAINED}" "$@" || exit $?
fi
if [ -n "$BRAIN_SKIP_HOOK" ]; then
    exit 0
fi
if {shlex.quote(python)} -c "import brain" >/dev/null 2>&1; then
    exec {shlex.quote(python)} -m brain map --staged
elif command -v brain >/dev/null 2>&1; then
    exec brain map --staged
else
    echo "brain pre-commit hook: brain is not installed; cards not refreshed" >&2
    exit 0
fi
"""


def _refuse_links(folder: Path) -> None:
    """A hook folder inside the work tree (core.hooksPath = .husky, ...) holds files the repository ships: a
    `pre-commit` (or its chained copy) that is a link would make brain read, move or chmod what it points to."""
    from ..errors import UnsafeLink

    for name in ("pre-commit", CHAINED):
        if os.path.islink(folder / name):
            raise UnsafeLink(str(folder / name), os.readlink(folder / name), "git hook file")


def _write_hook(folder: Path, text: str) -> None:
    """Write the hook through a fresh temporary file (O_EXCL | O_NOFOLLOW, so a planted link is never written
    through) renamed over `pre-commit` (a rename replaces, never follows)."""
    tmp = folder / f".pre-commit.brain.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), 0o755)
        os.replace(tmp, folder / "pre-commit")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _hook_text(path: Path) -> str:
    """An existing hook's text ("" for a link, a non-file or a hook past the bound of repository files):
    what is not read is treated as a foreign hook, never overwritten or removed without --chain/--force."""
    from ..errors import InputTooLarge
    from ..inputs import read_repository_file

    try:
        data = read_repository_file(path)
    except InputTooLarge:
        return ""
    return "" if data is None else data.decode("utf-8", errors="replace")


def install_git_hook(brain, *, chain: bool = False, force: bool = False) -> dict:
    """Install the pre-commit hook; refuse (Conflict-like InvalidInput) to replace a foreign hook unless chained."""
    folder = hooks_dir(brain.repo)
    folder.mkdir(parents=True, exist_ok=True)
    _refuse_links(folder)
    path = folder / "pre-commit"
    chained = None
    if path.exists() or path.is_symlink():
        current = _hook_text(path)
        if HOOK_MARKER not in current:
            if chain:
                target = folder / CHAINED
                if target.exists():
                    raise InvalidInput(f"{target} already exists: cannot chain the current pre-commit hook", field="hook",
                                       hint="merge the two hooks by hand, then run `brain install git-hook` again")
                os.replace(path, target)
                target.chmod(target.stat().st_mode | 0o111)
                chained = str(target)
            elif not force:
                raise HookExists(str(path))
    _write_hook(folder, hook_script())
    if chained is None and (folder / CHAINED).exists():
        chained = str(folder / CHAINED)
    return {"hook": str(path), "chained": chained}


def uninstall_git_hook(brain) -> dict:
    folder = hooks_dir(brain.repo)
    _refuse_links(folder)
    path = folder / "pre-commit"
    if not path.exists() or HOOK_MARKER not in _hook_text(path):
        return {"hook": str(path), "removed": False, "restored": None}
    path.unlink()
    restored = None
    if (folder / CHAINED).exists():
        os.replace(folder / CHAINED, path)
        restored = str(path)
    return {"hook": str(path), "removed": True, "restored": restored}


class HookExists(InvalidInput):
    """A pre-commit hook that brain did not write is in the way."""

    kind = "hook_exists"

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} exists and was not written by brain; not replacing it", field="hook",
                         hint="`brain install git-hook --chain` keeps it and runs it first; --force replaces it")
        self.path = path


def refresh_staged(brain, *, check: bool = False) -> dict:
    """Refresh the cards of the modules that own the staged files, then `git add` those cards.

    Never commits, even with ``sync.commit_on_write``: the cards go into the commit git is making
    (a commit of brain's own while git commits would move HEAD under it and fail the user's commit)."""
    with brain.commit_batch(writer=None, reason=None, commit=False):
        return _refresh_staged(brain, check=check)


def _refresh_staged(brain, *, check: bool) -> dict:
    from . import _mapper

    repo = brain.repo
    git = _project_git(repo, hook=True)
    staged = [p for p in _git(git, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMRD").split("\0") if p]
    mapper = _mapper(brain)
    brain_rel = brain.dir.relative_to(repo).as_posix() if brain.dir.is_relative_to(repo) else None
    contract_prefix = f"{brain_rel}/contracts/" if brain_rel else None
    modules: set[str] = set()
    for path in staged:
        if contract_prefix and path.startswith(contract_prefix) and path.endswith(".yml"):
            name = path[len(contract_prefix):-4]
            modules.add("." if name == "_root" else name)
            continue
        if brain_rel and path.startswith(brain_rel + "/"):
            continue
        owner = mapper.owner(path)
        if owner is not None:
            modules.add(owner)
    known = {m.name for m in mapper.modules()}
    stale, written, to_stage = [], [], []
    for name in sorted(modules & known):
        report = mapper.build(name, check=check)
        stale.extend(report.stale + report.missing)
        written.extend(report.written)
        if not check:
            to_stage.append(str((brain.dir / card_rel_path(name)).relative_to(repo)))
    decisions_rel = None
    try:
        from ..decisions import decisions_dir, index_is_current, write_index

        folder = decisions_dir(brain).relative_to(repo).as_posix()
        if any(p.startswith(folder + "/") for p in staged) and not index_is_current(brain):
            if not check:
                write_index(brain)
                decisions_rel = str((brain.dir / "decisions.md").relative_to(repo))
                to_stage.append(decisions_rel)
            else:
                stale.append("decisions.md")
    except ValueError:  # decisions folder outside the repository: nothing to stage
        pass
    if to_stage:
        _git(git, "add", "--", *(os.path.relpath(repo / p, git.root) for p in to_stage))
    return {"modules": sorted(modules & known), "written": written, "stale": stale, "staged": to_stage}
