"""Memory repositories: the project, the user-level layers, and declared satellites.

brain runs git only in repositories it knows (every command through brain.gitsafe, which
pins the repository and switches off what its configuration could run):

- the **project** repository (the nearest `.git` at or above the folder holding `.brain/`);
- each user-level **layer** under `$BRAIN_HOME` (`kernel`, `instance`, `personal`) that is a
  repository of its own;
- the **satellites** declared in `sync.satellites` (`notes/team` for `.brain/notes/team/`,
  `.` for `.brain/` itself, `kernel:agents/shared` inside a layer), each with a real `.git`
  folder.

A `.git` found anywhere else inside the memory (planted by hand, left over) is never run:
a write under it is not committed (``UntrustedRepository``, logged; the write stands),
`brain sync` reports it as ``refused`` and keeps it out of every other repository's commit.

- ``commit_write``: with ``sync.commit_on_write`` on, a memory write is committed in the
  known repository that owns the path, with a message naming the writer and the reason.
  Only that path is committed; hooks are off (it is memory, not code). Inside a git operation
  (brain's pre-commit hook, a rebase/merge/cherry-pick/revert/bisect stopped half-way, another
  git command holding the index) brain never commits on its own: the change is staged into the
  commit being made (``git_operation``), or left for the next commit while the index is held.
  ``Brain.commit_batch`` gathers the writes of one command (`brain map`, `report-done`) into one commit.
- ``sync_all``: for each memory repository, commit pending memory changes, fetch its
  upstream, merge, and push. Memory is laid out to merge cleanly (one file per entry
  where entries accumulate; generated sections are reproducible from code), so git's
  own merge handles concurrent writes to different files. A real conflict is aborted
  (``git merge --abort``): the local side stays checked out, the remote side stays in
  the remote-tracking ref, nothing is pushed, and the report names the files.
"""

from __future__ import annotations

import fcntl
import logging
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SettingsError, SyncError, UntrustedRepository
from ..gitsafe import OPERATION_STATE, GitRepo, find_worktree_root, hook_environment, hook_index_file

__all__ = ["commit_write", "commit_change", "git_operation",
           "memory_repos", "untrusted_repos", "declared_satellites", "sync_all", "sync_repo",
           "RepoSync", "SyncReport", "MemoryRepo"]

log = logging.getLogger("brain.sync")

_LAYERS = ("kernel", "instance", "personal")
_INDEX_HELD = dict(OPERATION_STATE)["index.lock"]
_UNDECLARED = "a .git inside the memory that `sync.satellites` does not declare"


@dataclass(frozen=True)
class MemoryRepo:
    root: Path
    kind: str  # project | brain | kernel | instance | personal | satellite
    scope: str = "."  # the memory inside the repository
    excluded: tuple[str, ...] = ()  # nested repositories, known or refused (never added as gitlinks)

    def pathspec(self) -> list[str]:
        return [self.scope, *(f":(exclude){x}" for x in self.excluded)]

    def git(self) -> GitRepo:
        """The pinned runner; a repository inside the memory must have a real `.git` folder."""
        from ..memory.layers import PRIVATE_LAYERS

        return GitRepo(self.root, dot_git_folder=self.kind in ("brain", "satellite"),
                       private=self.kind in PRIVATE_LAYERS)  # what git writes in personal/ stays 0600/0700


@dataclass
class RepoSync:
    repo: str
    kind: str
    status: str  # up_to_date | pulled | pushed | pulled_pushed | committed | no_remote | conflict | dry_run | error | refused
    committed: bool = False
    pulled: int = 0
    pushed: int = 0
    conflicts: list[str] = field(default_factory=list)
    local: str | None = None
    remote: str | None = None
    error: str | None = None  # status "error": what git said; "refused": why brain ran no git there

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

    @property
    def refused(self) -> list[RepoSync]:
        return [r for r in self.repos if r.status == "refused"]

    def to_dict(self) -> dict:
        return {"repos": [r.to_dict() for r in self.repos], "conflicts": len(self.conflicts),
                "errors": len(self.errors), "refused": len(self.refused)}


def _lock(brain):
    from ..memory.private import ensure_private_dir, open_private

    ensure_private_dir(brain.runtime)
    handle = os.fdopen(open_private(brain.runtime / "git.lock", os.O_RDWR | os.O_APPEND), "a+b")
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle


# -- which repositories are known --------------------------------------------------------
def _layer_base(brain, layer: str) -> Path:
    return Path(brain.layers.path(layer)).resolve()


def declared_satellites(brain) -> list[tuple[Path, str]]:
    """``(folder, base)`` of every `sync.satellites` entry (base: `project` or a layer name).

    An entry is a folder inside `.brain/` (`notes/team`, `.` for `.brain/` itself) or inside a
    layer (`kernel:agents/shared`); anything that leaves its base, names `runtime/` or a `.git`
    is a ``SettingsError``."""
    found: list[tuple[Path, str]] = []
    for entry in brain.settings.get("sync.satellites") or []:
        layer, sep, rel = entry.partition(":")
        if not sep or layer not in _LAYERS:
            layer, rel = "project", entry
        base = brain.dir if layer == "project" else _layer_base(brain, layer)
        norm = posixpath.normpath(rel.strip() or ".")
        parts = norm.split("/")
        if (rel.startswith("/") or parts[0] == ".." or any(p.lower() == ".git" for p in parts)
                or (layer == "project" and parts[0] == "runtime") or "\\" in rel):
            raise SettingsError(str(brain.dir / "brain.yml"), "sync.satellites",
                                "a folder inside .brain/ (`notes/team`, `.`) or a layer (`kernel:agents`)", entry)
        folder = (base / norm).resolve() if norm != "." else base
        if folder != base and base not in folder.parents:  # a link out of the memory
            raise SettingsError(str(brain.dir / "brain.yml"), "sync.satellites",
                                "a folder inside .brain/ (`notes/team`, `.`) or a layer (`kernel:agents`)", entry)
        if layer != "project" and folder == base:
            continue  # a layer root is known whenever it is a repository
        found.append((folder, layer))
    return found


def _known_roots(brain) -> dict[Path, str]:
    """Every repository brain runs git in, by root: kind (project | brain | layer name | satellite)."""
    known: dict[Path, str] = {}
    for folder, _ in declared_satellites(brain):
        if os.path.lexists(folder / ".git"):
            known[folder] = "brain" if folder == brain.dir else "satellite"
    for layer in _LAYERS:
        base = _layer_base(brain, layer)
        if os.path.lexists(base / ".git"):
            known.setdefault(base, layer)
    if brain.dir not in known:
        project = find_worktree_root(brain.repo)
        if project is not None:
            known.setdefault(project.resolve(), "project")
    return known


def untrusted_repos(brain, known: dict[Path, str] | None = None) -> list[Path]:
    """Folders inside `.brain/` or a layer that hold a `.git` brain does not know (never run, reported)."""
    known = _known_roots(brain) if known is None else known
    bases = [brain.dir, *(b for b in (_layer_base(brain, layer) for layer in _LAYERS) if b.is_dir())]
    found: list[Path] = []
    for base in bases:
        stack = [base]
        while stack:
            folder = stack.pop()
            if os.path.lexists(folder / ".git") and folder not in known:
                found.append(folder)
                continue
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name == ".git" or not entry.is_dir(follow_symlinks=False):
                    continue
                if folder == brain.dir and entry.name == "runtime":
                    continue
                stack.append(Path(entry.path))
    return sorted(set(found))


# -- commit on write ---------------------------------------------------------------------
def _owner_repo(brain, path: Path, layer: str | None) -> tuple[Path, str] | None:
    """The known repository that owns ``path``; ``UntrustedRepository`` when a stray `.git` lies between.

    A project write belongs to a declared satellite inside `.brain/` or else to the project
    repository; a layer write to a declared satellite inside that layer or else to the layer's
    own repository (never to a repository above the layer, such as a home folder kept in git)."""
    project_layer = layer in (None, "", "project")
    base = brain.dir if project_layer else _layer_base(brain, layer)

    def candidate(root: Path, kind: str) -> bool:
        if kind == "project":
            return project_layer
        if kind in _LAYERS:
            return kind == layer
        return root == base or base in root.parents

    owners = {root: kind for root, kind in _known_roots(brain).items() if candidate(root, kind)}
    above_base = project_layer and "project" in owners.values()
    for folder in Path(path).resolve().parents:
        if folder in owners:
            return folder, owners[folder]
        if os.path.lexists(folder / ".git"):
            raise UntrustedRepository(str(folder), _UNDECLARED)
        if folder == base and not above_base:
            break
    return None


def commit_write(brain, path: Path, *, writer: str | None, reason: str | None, layer: str | None = None) -> str | None:
    """Commit the written ``path`` in its owning repository; the new commit id, or None (no repo / no change)."""
    return commit_change(brain, [Path(path)], writer=writer, reason=reason, layer=layer)


def commit_change(brain, paths: list[Path], *, writer: str | None, reason: str | None, layer: str | None = None,
                  action: str = "") -> str | None:
    """Commit a memory change (``action``: "" for a write, ``delete``, ``move``) of ``paths`` in one commit.

    A path that exists is added, one that is gone has its deletion staged, so `brain rm` and `brain mv`
    leave the repository as clean as `brain write` does. Paths of different repositories (a move out of a
    satellite) are committed in each, with the same message. The last new commit id, or None."""
    groups: dict[Path, tuple[str, list[str]]] = {}
    wheres: list[str] = []
    for path in paths:
        owner = _owner_repo(brain, Path(path), layer)
        resolved = Path(path).parent.resolve() / Path(path).name  # a deleted file does not resolve itself
        if owner is None:
            wheres.append(resolved.name)
            continue
        root, kind = owner
        rel = resolved.relative_to(root).as_posix()
        groups.setdefault(root, (kind, []))[1].append(rel)
        wheres.append(rel if layer in (None, "", "project") else f"{layer}:{rel}")
    if not groups:
        return None
    what = " to ".join(wheres) if action == "move" else ", ".join(wheres[:3]) + (
        f" and {len(wheres) - 3} more" if len(wheres) > 3 else "")
    subject = f"memory: {action + ' ' if action else ''}{what} by {writer or 'unnamed writer'}"
    clean_reason = brain.redactor(reason.strip()) if reason and reason.strip() else None
    message = subject + (f" — {clean_reason.splitlines()[0][:120]}" if clean_reason else "")
    body = f"\n\nWriter: {writer or 'unnamed'}\nMachine: {brain.settings.machine}\n"
    if clean_reason:
        body += f"Reason: {clean_reason[:2000]}\n"
    message, body = brain.redactor(message), brain.redactor(body)  # a commit keeps its path, writer and reason forever
    head = None
    handle = _lock(brain)
    try:
        for root, (kind, rels) in groups.items():
            git = MemoryRepo(root, kind).git()
            busy = git_operation(git, kind)
            if busy is not None:  # never a commit of our own inside the user's: stage for theirs, or leave it
                _stage_for_users_commit(git, kind, rels, busy)
                continue
            _stage(git, root, rels)
            staged = git.run("diff", "--cached", "--no-renames", "--name-only", "-z", "--", *rels).stdout.split("\0")
            staged = [rel for rel in rels if rel in staged]
            if not staged:
                continue  # same content as committed, or a file git never had
            out = git.run("commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message + body, "--", *staged,
                          check=False, identity=True)
            if out.returncode != 0:
                if "nothing" in (out.stdout + out.stderr).lower():
                    continue
                raise SyncError(str(root), "commit", out.stderr or out.stdout)
            head = git.rev("HEAD")
        return head
    finally:
        handle.close()


def _stage(git: GitRepo, root: Path, rels: list[str]) -> None:
    for rel in rels:
        if os.path.lexists(root / rel):
            git.run("add", "--", rel)
        else:  # deleted: stage the deletion when git knew the file, else there is nothing to record
            git.run("rm", "-q", "--cached", "--ignore-unmatch", "--", rel)


def git_operation(git: GitRepo, kind: str) -> str | None:
    """Why brain must not commit in this repository now (a git operation is under way), or None.

    The hook environment (``GIT_INDEX_FILE``/``GIT_DIR``) speaks for the project repository: the hook
    brain installs is the project's. The state files (rebase, merge, cherry-pick, revert, bisect,
    index.lock) are read in each repository's own git dir."""
    if kind == "project":
        inside = hook_environment()
        if inside is not None:
            return inside
    return git.operation_in_progress()


def _stage_for_users_commit(git: GitRepo, kind: str, rels: list[str], busy: str) -> None:
    """Inside a git operation: stage the change into the index of the commit being made, never commit.

    In a hook that is git's own index (``GIT_INDEX_FILE``); in a rebase or merge stopped for the user,
    the working tree's index, so the change goes into the user's next commit. While another git command
    holds the index (index.lock) nothing is touched: the change stays in the working tree for the next
    commit or `brain sync`."""
    index = hook_index_file() if kind == "project" else None
    if index is None and (busy == _INDEX_HELD or git.operation_in_progress() == _INDEX_HELD):
        log.info("memory changed during %s: left uncommitted (%s)", busy, ", ".join(rels))
        return
    root = git.root
    _stage(GitRepo(root, index_file=index, dot_git_folder=kind in ("brain", "satellite")) if index else git,
           root, rels)
    log.info("memory changed during %s: staged for that commit, not committed (%s)", busy, ", ".join(rels))


# -- discovery ---------------------------------------------------------------------------
def memory_repos(brain, untrusted: list[Path] | None = None) -> list[MemoryRepo]:
    """Every known repository holding memory of this brain, project first, then layers and satellites."""
    known = _known_roots(brain)
    untrusted = untrusted_repos(brain, known) if untrusted is None else untrusted
    order = {"project": 0, "brain": 0, "kernel": 1, "instance": 2, "personal": 3, "satellite": 4}
    out = []
    for root, kind in sorted(known.items(), key=lambda item: (order[item[1]], str(item[0]))):
        scope = os.path.relpath(brain.dir, root) if kind == "project" else "."
        top = (root / scope).resolve() if scope != "." else root
        inner = [o for o in [*known, *untrusted] if o != root and (top == o or top in o.parents)]
        out.append(MemoryRepo(root, kind, scope, tuple(sorted(os.path.relpath(o, root) for o in inner))))
    return out


# -- sync --------------------------------------------------------------------------------
def _upstream(git: GitRepo) -> tuple[str, str] | None:
    out = git.run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}", check=False)
    if out.returncode == 0 and "/" in out.stdout.strip():
        remote, _, branch = out.stdout.strip().partition("/")
        return remote, branch
    remotes = git.run("remote", check=False).stdout.split()
    branch = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False).stdout.strip()
    if "origin" in remotes and branch:
        return "origin", branch
    return None


def _count(git: GitRepo, a: str, b: str) -> int:
    out = git.run("rev-list", "--count", f"{a}..{b}", check=False)
    return int(out.stdout.strip() or 0) if out.returncode == 0 else 0


def sync_repo(brain, repo: MemoryRepo, *, push: bool = True, dry_run: bool = False, attempts: int = 3) -> RepoSync:
    git = repo.git()
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
            git.run("commit", "-q", "--no-verify", "--no-gpg-sign", "-m", f"memory: sync from {brain.settings.machine}",
                    "--", *spec, identity=True)
            result.committed = True
            result.status = "committed"
    if upstream is None:
        result.status = "no_remote"
        return result
    remote, branch = upstream
    for _ in range(attempts):
        fetched = git.fetch(remote, branch)
        if fetched.returncode != 0 and "couldn't find remote ref" not in fetched.stderr.lower():
            raise SyncError(str(repo.root), f"fetch {remote} {branch}", fetched.stderr)
        local = git.rev("HEAD")
        theirs = git.rev("FETCH_HEAD") if fetched.returncode == 0 else None  # None: an empty remote
        result.local, result.remote = local, theirs
        if theirs is not None and local is not None and not git.is_ancestor(theirs, local):
            result.pulled += _count(git, local, theirs)
            merged = git.run("merge", "-q", "--no-edit", "--no-stat", "--no-gpg-sign",
                             *(["--no-verify"] if _merge_takes_no_verify(git) else []), theirs, check=False,
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
        pushed = git.push(remote, f"HEAD:refs/heads/{branch}")
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


def _merge_takes_no_verify(git: GitRepo) -> bool:
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
        known = _known_roots(brain)
        untrusted = untrusted_repos(brain, known)
        for repo in memory_repos(brain, untrusted):
            try:
                report.repos.append(sync_repo(brain, repo, push=push, dry_run=dry_run))
            except UntrustedRepository as exc:
                report.repos.append(RepoSync(str(repo.root), repo.kind, "refused", error=exc.reason))
            except SyncError as exc:  # one unreachable remote does not stop the other repositories
                report.repos.append(RepoSync(str(repo.root), repo.kind, "error", error=brain.redactor(exc.message)))
        for folder in untrusted:
            report.repos.append(RepoSync(str(folder), "untrusted", "refused", error=_UNDECLARED))
    finally:
        handle.close()
    return report
