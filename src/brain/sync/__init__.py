"""Satellite repositories: each layer and the project memory may be its own git repository.

- ``commit_write``: with ``sync.commit_on_write`` on, a memory write is committed in
  the repository that owns the written path (the nearest ``.git`` at or above it: a
  satellite such as ``.brain/notes/todo/``, a layer under ``$BRAIN_HOME``, ``.brain/``
  itself, or the project), with a message naming the writer and the reason. Only
  that path is committed; hooks are skipped (it is memory, not code).
- ``sync_all``: for each memory repository, commit pending memory changes, fetch its
  upstream, merge, and push. Memory is laid out to merge cleanly (one file per entry
  where entries accumulate; generated sections are reproducible from code), so git's
  own merge handles concurrent writes to different files. A real conflict is aborted
  (``git merge --abort``): the local side stays checked out, the remote side stays in
  the remote-tracking ref, nothing is pushed, and the report names the files.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SyncError
from .gitops import Git, find_repo_root

__all__ = ["commit_write", "memory_repos", "sync_all", "sync_repo", "RepoSync", "SyncReport", "MemoryRepo"]


@dataclass(frozen=True)
class MemoryRepo:
    root: Path
    kind: str  # project | brain | kernel | instance | personal | satellite
    scope: str = "."  # the memory inside the repository
    excluded: tuple[str, ...] = ()  # nested satellite repositories (never added as gitlinks)

    def pathspec(self) -> list[str]:
        return [self.scope, *(f":(exclude){x}" for x in self.excluded)]


@dataclass
class RepoSync:
    repo: str
    kind: str
    status: str  # up_to_date | pulled | pushed | pulled_pushed | committed | no_remote | conflict | dry_run
    committed: bool = False
    pulled: int = 0
    pushed: int = 0
    conflicts: list[str] = field(default_factory=list)
    local: str | None = None
    remote: str | None = None
    error: str | None = None  # status "error": what git said (the other repositories are still synced)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SyncReport:
    repos: list[RepoSync] = field(default_factory=list)

    @property
    def conflicts(self) -> list[RepoSync]:
        return [r for r in self.repos if r.status == "conflict"]

    @property
    def errors(self) -> list[RepoSync]:
        return [r for r in self.repos if r.status == "error"]

    def to_dict(self) -> dict:
        return {"repos": [r.to_dict() for r in self.repos], "conflicts": len(self.conflicts),
                "errors": len(self.errors)}


def _lock(brain):
    brain.runtime.mkdir(parents=True, exist_ok=True)
    handle = open(brain.runtime / "git.lock", "a+b")
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle


# -- commit on write ---------------------------------------------------------------------
def _owner_repo(brain, path: Path, layer: str | None) -> Path | None:
    base = brain.layers.path(layer) if layer not in (None, "", "project") else brain.dir
    root = find_repo_root(path.parent if not path.is_dir() else path)
    if root is None:
        return None
    base = base.resolve()
    # a repository above the layer root of a user-level layer is not the layer's (e.g. a home in git)
    if layer not in (None, "", "project") and root != base and base not in root.parents and root not in (base,):
        return None
    return root


def commit_write(brain, path: Path, *, writer: str | None, reason: str | None, layer: str | None = None) -> str | None:
    """Commit the written ``path`` in its owning repository; the new commit id, or None (no repo / no change)."""
    root = _owner_repo(brain, Path(path), layer)
    if root is None:
        return None
    git = Git(root)
    rel = Path(path).resolve().relative_to(root.resolve()).as_posix()
    where = rel if layer in (None, "", "project") else f"{layer}:{rel}"
    subject = f"memory: {where} by {writer or 'unnamed writer'}"
    clean_reason = brain.redactor(reason.strip()) if reason and reason.strip() else None
    message = subject + (f" — {clean_reason.splitlines()[0][:120]}" if clean_reason else "")
    body = f"\n\nWriter: {writer or 'unnamed'}\nMachine: {brain.settings.machine}\n"
    if clean_reason:
        body += f"Reason: {clean_reason[:2000]}\n"
    message, body = brain.redactor(message), brain.redactor(body)  # a commit keeps its path, writer and reason forever
    handle = _lock(brain)
    try:
        git.run("add", "--", rel)
        out = git.run("commit", "-q", "--no-verify", "-m", message + body, "--", rel, check=False, identity=True)
        if out.returncode != 0:
            if "nothing" in (out.stdout + out.stderr).lower():
                return None  # same content as committed
            raise SyncError(str(root), "commit", out.stderr or out.stdout)
        return git.rev("HEAD")
    finally:
        handle.close()


# -- discovery ---------------------------------------------------------------------------
def memory_repos(brain) -> list[MemoryRepo]:
    """Every git repository holding memory of this brain, project first, then layers and satellites."""
    found: list[MemoryRepo] = []
    seen: set[Path] = set()

    def add(root: Path, kind: str, scope: str = ".") -> None:
        root = root.resolve()
        if root not in seen:
            seen.add(root)
            found.append(MemoryRepo(root, kind, scope))

    if (brain.dir / ".git").exists():
        add(brain.dir, "brain")
    else:
        project = find_repo_root(brain.dir)
        if project is not None:
            add(project, "project", os.path.relpath(brain.dir, project))
    roots = [(brain.dir, "brain")] + [(brain.layers.path(layer), layer) for layer in ("kernel", "instance", "personal")]
    for base, kind in roots:
        if kind != "brain" and (base / ".git").exists():
            add(base, kind)
        for child in _satellites(base):
            add(child, "satellite")
    out = []
    for repo in found:
        inner = tuple(sorted(os.path.relpath(o.root, repo.root) for o in found
                             if o.root != repo.root and repo.root in o.root.parents))
        out.append(MemoryRepo(repo.root, repo.kind, repo.scope, inner))
    return out


def _satellites(base: Path, depth: int = 2) -> list[Path]:
    out: list[Path] = []
    if depth == 0 or not base.is_dir():
        return out
    try:
        entries = sorted((e for e in os.scandir(base) if e.is_dir(follow_symlinks=False)
                          and e.name not in (".git", "runtime") and not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        path = Path(entry.path)
        if (path / ".git").exists():
            out.append(path)
        else:
            out.extend(_satellites(path, depth - 1))
    return out


# -- sync --------------------------------------------------------------------------------
def _upstream(git: Git) -> tuple[str, str] | None:
    out = git.run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False)
    if out.returncode == 0 and "/" in out.stdout.strip():
        remote, _, branch = out.stdout.strip().partition("/")
        return remote, branch
    remotes = git.run("remote", check=False).stdout.split()
    branch = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    if "origin" in remotes and branch:
        return "origin", branch
    return None


def _count(git: Git, a: str, b: str) -> int:
    out = git.run("rev-list", "--count", f"{a}..{b}", check=False)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def sync_repo(brain, repo: MemoryRepo, *, push: bool = True, dry_run: bool = False, attempts: int = 3) -> RepoSync:
    git = Git(repo.root)
    result = RepoSync(str(repo.root), repo.kind, "up_to_date")
    upstream = _upstream(git)
    # 1. pending memory changes become a commit of their own (the merge needs a clean memory tree)
    spec = repo.pathspec()
    changes = git.run("status", "--porcelain", "--untracked-files=all", "--", *spec).stdout.strip()
    if dry_run:
        result.status = "dry_run"
        result.committed = bool(changes)
        return result
    if changes:
        git.run("add", "-A", "--", *spec)
        if git.run("diff", "--cached", "--quiet", "--", *spec, check=False).returncode != 0:
            git.run("commit", "-q", "--no-verify", "-m", f"memory: sync from {brain.settings.machine}", "--", *spec,
                    identity=True)
            result.committed = True
            result.status = "committed"
    if upstream is None:
        result.status = "no_remote"
        return result
    remote, branch = upstream
    for _ in range(attempts):
        fetched = git.run("fetch", "-q", remote, branch, check=False)
        if fetched.returncode != 0 and "couldn't find remote ref" not in fetched.stderr.lower():
            raise SyncError(str(repo.root), f"fetch {remote} {branch}", fetched.stderr)
        local = git.rev("HEAD")
        theirs = git.rev("FETCH_HEAD") if fetched.returncode == 0 else None  # None: an empty remote
        result.local, result.remote = local, theirs
        if theirs is not None and local is not None and not git.is_ancestor(theirs, local):
            result.pulled += _count(git, local, theirs)
            merged = git.run("merge", "-q", "--no-edit", "--no-verify", theirs, check=False, identity=True) \
                if _merge_takes_no_verify(git) else git.run("merge", "-q", "--no-edit", theirs, check=False,
                                                             identity=True)
            if merged.returncode != 0:
                files = git.run("diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
                if files:
                    git.run("merge", "--abort", check=False)
                    result.status, result.conflicts = "conflict", files
                    return result
                raise SyncError(str(repo.root), f"merge {theirs[:10]}", merged.stderr or merged.stdout)
        elif theirs is None and local is None:
            return result
        if not push:
            break
        local = git.rev("HEAD")
        ahead = _count(git, theirs, local) if theirs else 1
        if ahead == 0:
            break
        pushed = git.run("push", "-q", remote, f"HEAD:refs/heads/{branch}", check=False)
        if pushed.returncode == 0:
            result.pushed += ahead
            break
        if "rejected" not in pushed.stderr and "fetch first" not in pushed.stderr:
            raise SyncError(str(repo.root), f"push {remote} {branch}", pushed.stderr)
    else:
        raise SyncError(str(repo.root), f"push {remote} {branch}", f"still rejected after {attempts} attempts")
    if result.pulled and result.pushed:
        result.status = "pulled_pushed"
    elif result.pulled:
        result.status = "pulled"
    elif result.pushed:
        result.status = "pushed"
    return result


_NO_VERIFY: dict[str, bool] = {}


def _merge_takes_no_verify(git: Git) -> bool:
    """``git merge --no-verify`` exists since git 2.24; older gits just run the hooks."""
    if "ok" not in _NO_VERIFY:
        out = git.run("merge", "-h", check=False)
        _NO_VERIFY["ok"] = "--no-verify" in (out.stdout + out.stderr)
    return _NO_VERIFY["ok"]


def sync_all(brain, *, push: bool = True, dry_run: bool = False) -> SyncReport:
    """Sync every memory repository; conflicts are reported per repository (see ``SyncReport.conflicts``)."""
    report = SyncReport()
    handle = _lock(brain)
    try:
        for repo in memory_repos(brain):
            try:
                report.repos.append(sync_repo(brain, repo, push=push, dry_run=dry_run))
            except SyncError as exc:  # one unreachable remote does not stop the other repositories
                report.repos.append(RepoSync(str(repo.root), repo.kind, "error", error=brain.redactor(exc.message)))
    finally:
        handle.close()
    return report
