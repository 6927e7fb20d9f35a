"""A no-op code refresh without a walk of the tree: what git already knows about the working tree.

A task boot brings the code index up to date first; walking every folder and stat-ing every
source file costs ~0.1 s of CPU on Django and grows with the repository. Git keeps the stat
data of every tracked file in its index, and ``git status`` (which the boot runs anyway for the
working tree's changed files) answers from it in C. So after each code refresh the index notes
HEAD and the files git reported as changed or untracked then; a later refresh is a no-op
without a walk when HEAD is the same and each file git reports now or reported then still has
the stamp (mtime, size) the code tables hold. A file git neither tracks nor lists (an ignored
one) is followed by its own stamp and its folder's mtime (a new file beside it changes that); an
ignored file in a folder the last walk saw none in waits for the next walk (`brain index`, `brain
map`, a new HEAD). With more such files than ``MAX_CANDIDATES``, or submodules, every refresh walks
as before. Anything else (no git, a git brain will not run, a different HEAD, a changed stamp)
answers "walk", never "unchanged".
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from contextvars import ContextVar
from pathlib import Path

from ..records import record

__all__ = ["GitState", "git_state", "known_git_state", "unchanged_since_refresh", "record_refresh", "MAX_CANDIDATES",
           "arrived"]

_KEY = "code_git"
MAX_CANDIDATES = 2000  # more changed files than this: the walk is as cheap as their stats


@record(frozen=True)
class GitState:
    """HEAD and the paths ``git status`` lists (changed, staged, untracked; a rename's both names)."""

    head: str | None
    paths: dict[str, str]  # repository-relative path -> its two status letters (v1 style: ' ' unchanged)


_ARRIVED: ContextVar[float | None] = ContextVar("brain_call_arrived", default=None)
_latest: dict[str, tuple[float, "GitState | None"]] = {}  # repo -> (when its last git status started, its answer)
_latest_lock = threading.Lock()


@contextlib.contextmanager
def arrived(when: float):
    """Within: the current call arrived at ``when`` (``time.monotonic()``), so any ``git status`` that
    started after that is an answer for it (the team server's tool calls; see ``git_state``)."""
    token = _ARRIVED.set(when)
    try:
        yield
    finally:
        _ARRIVED.reset(token)


def git_state(repo: Path) -> GitState | None:
    """``git status`` of the repository whose ``.git`` is in ``repo`` (``.brain/`` left out), or None
    when there is none or git fails. Memoized in the current boot: the boot's changed files and the
    refresh's check read the same answer.

    A call that says when it arrived (``arrived``: a team server's tool call) also takes the answer of
    a ``git status`` another call of this process started after that moment: what it would have seen
    running its own then, so each boot still equals the boot run alone at some moment of its call.
    Boots queued in the heavy lane (``brain.mcp.calls``) then mostly share one git process instead of
    each waiting for its own (a fork and a walk of the tree; tens of ms on a loaded machine)."""
    from ..boot.call import current_memo

    memo = current_memo()
    key = ("git_state", str(repo))
    if memo is not None and key in memo:
        return memo[key]
    state = _shared_state(repo)
    if memo is not None:
        memo[key] = state
    return state


def _shared_state(repo: Path) -> GitState | None:
    since = _ARRIVED.get()
    key = str(repo)
    if since is not None:
        with _latest_lock:
            latest = _latest.get(key)
        if latest is not None and latest[0] >= since:
            return latest[1]
    started = time.monotonic()  # before git reads anything: its answer is valid for calls arrived before
    state = _read_state(repo)
    with _latest_lock:
        if key not in _latest or _latest[key][0] < started:
            _latest[key] = (started, state)
    return state


def known_git_state(repo: Path) -> GitState | None:
    """The ``git status`` the current boot has already read for ``repo``, or None: never runs git (a
    boot without a task runs none, and a check that can use git's answer must not add one)."""
    from ..boot.call import current_memo

    memo = current_memo()
    return None if memo is None else memo.get(("git_state", str(repo)))


def _read_state(repo: Path) -> GitState | None:
    """One ``git status`` that leaves the user's index file alone (no stat refresh written back, no lock
    taken beside the user's own git), and `brain map`'s saved layout, which watches that file's mtime,
    stays valid: on brain's copy of the index with git's untracked cache (``gitstatus``), else ``git
    --no-optional-locks status`` listing every untracked file."""
    from ..gitsafe import project_repo
    from .gitstatus import cached_status

    out = cached_status(repo)  # git's untracked cache in brain's copy of the index (see gitstatus), when it can
    if out is None:
        git = project_repo(repo, timeout=5, here_only=True)
        out = git.output("--no-optional-locks", "status", "--porcelain=v2", "--branch", "--untracked-files=all", "-z",
                         "--", ".", ":(exclude).brain") if git is not None else None
    if out is None:
        return None
    head: str | None = None
    paths: dict[str, str] = {}
    items = out.split("\0")
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if item.startswith("# branch.oid "):
            oid = item[len("# branch.oid "):]
            head = None if oid == "(initial)" else oid
        elif item.startswith("1 "):  # 1 XY sub mH mI mW hH hI path
            fields = item.split(" ", 8)
            if len(fields) == 9:
                paths[fields[8]] = fields[1].replace(".", " ")
        elif item.startswith("2 "):  # 2 XY sub mH mI mW hH hI Xscore path, then the original path
            fields = item.split(" ", 9)
            if len(fields) == 10:
                paths[fields[9]] = fields[1].replace(".", " ")
            if i < len(items) and items[i]:
                paths.setdefault(items[i], "D ")  # the rename's source: gone from the tree
            i += 1
        elif item.startswith("u "):  # u XY sub m1 m2 m3 mW h1 h2 h3 path
            fields = item.split(" ", 10)
            if len(fields) == 11:
                paths[fields[10]] = fields[1].replace(".", " ")
        elif item.startswith("? "):
            paths[item[2:]] = "??"
    return GitState(head, paths)


def _stamp(repo: Path, rel: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of ``rel`` when ``code.scan_files`` would list it, else None."""
    from .code import CODE_EXTENSIONS, MAX_FILE_BYTES, _BUNDLED
    from .outdirs import FolderFilter

    parts = rel.split("/")
    name = parts[-1]
    keep = FolderFilter(str(repo)).keep
    if not all(keep(os.path.join(str(repo), *parts[:i]), d) for i, d in enumerate(parts[:-1])):
        return None
    if os.path.splitext(name)[1] not in CODE_EXTENSIONS or name.startswith(".") or _BUNDLED.search(name):
        return None
    try:
        st = os.stat(repo / rel)
    except OSError:
        return None
    if st.st_size > MAX_FILE_BYTES or not os.path.isfile(repo / rel):
        return None
    return (st.st_mtime_ns, st.st_size)


def _noted(db: sqlite3.Connection) -> dict | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
        return json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError):
        return None


def unchanged_since_refresh(db: sqlite3.Connection, repo: Path) -> bool:
    """Whether the code tables provably match the files, from git's answer and a stat of the files it
    names (see the module doc); False whenever that cannot be shown."""
    noted = _noted(db)
    if not noted or noted.get("walk") or not noted.get("head") or (repo / ".gitmodules").exists():
        return False
    state = git_state(repo)
    if state is None or state.head != noted["head"]:
        return False
    candidates = sorted(set(noted.get("dirty", ())) | set(noted.get("ignored", ())) | set(state.paths))
    if len(candidates) > MAX_CANDIDATES:
        return False
    for folder, mtime in (noted.get("folders") or {}).items():
        try:
            if os.stat(repo / folder if folder else repo).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    indexed: dict[str, tuple[int, int]] = {}
    for i in range(0, len(candidates), 500):
        chunk = candidates[i: i + 500]
        marks = ",".join("?" * len(chunk))
        for path, mtime, size in db.execute(f"SELECT path, mtime_ns, size FROM code_files WHERE path IN ({marks})", chunk):
            indexed[path] = (mtime, size)
    return all(_stamp(repo, p) == indexed.get(p) for p in candidates)


def record_refresh(db: sqlite3.Connection, repo: Path, current: dict[str, tuple[int, int]],
                   before: GitState | None, changed: bool = True) -> None:
    """Note, after a refresh that walked the tree (``current``: the files it found; ``changed``: it
    wrote rows), what a later ``unchanged_since_refresh`` compares with. ``before`` is git's answer from
    before the walk; git is asked again now, and a file either answer lists is checked next time."""
    from .build import transaction

    old = _noted(db)
    if (before is not None and old is not None and old.get("head") == before.head and not changed
            and not old.get("walk") and not old.get("folders") and set(before.paths) <= set(old.get("dirty", ()))):
        return  # nothing changed in the tables and git names no new file: the note stands
    after = _read_state(repo) if before is not None else None
    noted = None
    if before is not None and after is not None and before.head and before.head == after.head:
        dirty = set(before.paths) | set(after.paths)
        tracked = _tracked(repo)
        # indexed files git neither tracks nor lists (ignored): their stamps and folders are checked
        ignored = sorted(p for p in current if p not in dirty and (tracked is None or p not in tracked))
        walk = tracked is None or len(dirty) + len(ignored) > MAX_CANDIDATES
        folders: dict[str, int] = {}
        for path in ignored if not walk else ():
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            if folder not in folders:
                try:
                    folders[folder] = os.stat(repo / folder if folder else repo).st_mtime_ns
                except OSError:
                    walk = True
        noted = {"head": after.head, "walk": walk, "dirty": [] if walk else sorted(dirty),
                 "ignored": [] if walk else ignored, "folders": {} if walk else folders}
    if noted == old:
        return  # nothing new to note: no write lock
    with transaction(db):
        if noted is None:
            db.execute("DELETE FROM meta WHERE key = ?", (_KEY,))
        else:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_KEY, json.dumps(noted)))


def _tracked(repo: Path) -> set[str] | None:
    from ..gitsafe import project_repo

    git = project_repo(repo, timeout=30, here_only=True)
    out = git.output("ls-files", "-z", "--", ".") if git is not None else None
    return None if out is None else set(out.split("\0"))
