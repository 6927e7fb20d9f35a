"""The history side of the derived index: past commits of HEAD, their message words and the files they changed.

Read from ``git log`` of HEAD only (never other refs: a checkout of an older commit sees only
its past, a commit on another branch is not there), newest first and bounded: at most
``MAX_COMMITS`` non-merge commits, commits touching more than ``MAX_FILES_PER_COMMIT`` files
skipped (a reformat or a vendoring says nothing about which files belong together), each
message cut at ``MAX_MESSAGE_BYTES``. Only source files (a code extension, not a test path) are kept,
whether or not they exist now: the rows of a commit depend on the commit alone, so a checkout moved
between commits holds what a fresh index at its HEAD holds (a file deleted and later restored keeps the
commits read while it was gone); the ranking reads only the files indexed now. Stored in
``runtime/index.db`` beside the code tables and refreshed
incrementally from the last indexed HEAD: a refresh with HEAD unchanged is one
``git rev-parse``; a HEAD that is not a descendant of the indexed one (a rewrite, a checkout
of another line) rebuilds the tables. No git repository, or no commit yet: empty tables, no cost.

Commit messages and file names are untrusted data: they are parsed from a NUL-separated
stream whose structure they cannot forge (file names follow a `:status` token, headers are
checked), read through ``brain.gitsafe`` (no hooks, pager or repository-named programs),
never passed to a shell, and bounded in size and time.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from pathlib import Path

from ..records import field, record
from .code import CODE_EXTENSIONS, CODE_TOKENIZE, is_test_path, transaction
from .tokenize import token_text
from ..lazyre import lazy

__all__ = ["HISTORY_SCHEMA", "MAX_COMMITS", "MAX_FILES_PER_COMMIT", "MAX_MESSAGE_BYTES", "FIRST_PARENT",
           "Commit", "parse_log", "refresh_history", "clear_history", "known_head"]

MAX_COMMITS = 10_000  # the newest commits of HEAD kept: older history says less about today's files
MAX_FILES_PER_COMMIT = 50  # a commit touching more files (a reformat, a rename of everything) is skipped
MAX_MESSAGE_BYTES = 8_000  # of each message: a pasted log in a message is not more evidence
MAX_SUBJECT_CHARS = 100
FIRST_PARENT = False  # all commits reachable from HEAD: a merge workflow keeps its work on the second parents
LOG_TIMEOUT = 300.0  # seconds for the whole `git log` read; past it the history read so far is dropped
_CHUNK = 1 << 20
_HEADER = lazy(rb"\n?([0-9a-f]{40}(?:[0-9a-f]{24})?) (\d{1,12})")  # sha1 or sha256, commit time

HISTORY_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS hist_commits(id INTEGER PRIMARY KEY, sha TEXT UNIQUE, time INTEGER, subject TEXT,
    nfiles INTEGER);
CREATE TABLE IF NOT EXISTS hist_files(commit_id INTEGER, path TEXT);
CREATE INDEX IF NOT EXISTS hist_files_path ON hist_files(path);
CREATE INDEX IF NOT EXISTS hist_files_commit ON hist_files(commit_id);
CREATE VIRTUAL TABLE IF NOT EXISTS hist_fts USING fts5(message, tokenize = "{CODE_TOKENIZE}");
"""
_HEAD_KEY = "history_head"


@record
class Commit:
    """One commit as read from the log: its files are every path it touched (with their status letter)."""

    sha: str
    time: int
    message: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (status letter, path)
    touched: int = 0  # all paths, including those past the kept ones


def _items(stream):
    """The NUL-separated items of ``stream`` (bytes), each cut at ``MAX_MESSAGE_BYTES``: memory stays
    bounded whatever one item's length (git itself ends a message at a NUL byte, so none is forged)."""
    partial = bytearray()
    overflow = False
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\0", start)
            if end < 0:
                if not overflow:
                    partial += chunk[start:]
                    if len(partial) > MAX_MESSAGE_BYTES:
                        del partial[MAX_MESSAGE_BYTES:]
                        overflow = True
                break
            if not overflow:
                partial += chunk[start:end]
            yield bytes(partial[:MAX_MESSAGE_BYTES])
            partial.clear()
            overflow = False
            start = end + 1


def parse_log(items, limit: int = MAX_COMMITS) -> list[Commit]:
    """Commits from the items of ``git log -z --raw --format=%H %ct%x00%B`` (newest first), at most ``limit``.

    The shape is: header, message, then for each path a `:status` item and the path item; then the
    next header. A path item always follows a status item, so no file name or message can pass for
    a header or a status; an item out of place (a malformed stream) is skipped until the next header."""
    commits: list[Commit] = []
    cur: Commit | None = None
    state = "header"  # what the next item is: header, message, status-or-header, path
    status = ""
    for item in items:
        if state == "path":
            if cur is not None:
                cur.touched += 1
                if len(cur.files) <= MAX_FILES_PER_COMMIT:
                    cur.files.append((status, os.fsdecode(item)))
            state = "status"
            continue
        if state == "message":
            if cur is not None:
                cur.message = item.decode("utf-8", errors="replace")
            state = "status"
            continue
        if state == "status" and item.lstrip(b"\n").startswith(b":"):
            fields = item.rsplit(b" ", 1)
            status = fields[-1][:1].decode("ascii", errors="replace") if len(fields) == 2 else "?"
            state = "path"
            continue
        match = _HEADER.fullmatch(item)
        if match is None:
            state = "header"  # resynchronise on the next header
            continue
        if cur is not None:
            commits.append(cur)
            if len(commits) >= limit:
                return commits
        cur = Commit(match.group(1).decode("ascii"), int(match.group(2)), "")
        state = "message"
    if cur is not None and len(commits) < limit:
        commits.append(cur)
    return commits


def _read_log(git, revisions: str, limit: int) -> list[Commit] | None:
    """The commits of ``revisions`` (newest first), or None when git fails or runs past ``LOG_TIMEOUT``."""
    args = ["log", "-z", "--raw", "--no-abbrev", "--no-renames", "--no-merges", "--no-color", f"-n{limit}",
            "--format=%H %ct%x00%B"]
    if FIRST_PARENT:
        args.append("--first-parent")
    try:
        proc = git.stream(*args, revisions, "--")
    except ValueError:
        return None
    timer = threading.Timer(LOG_TIMEOUT, proc.kill)
    timer.daemon = True
    timer.start()
    try:
        commits = parse_log(_items(proc.stdout), limit)
    except BaseException:
        proc.kill()
        proc.stdout.close()
        proc.wait()
        raise
    finally:
        timer.cancel()
    if len(commits) >= limit:
        proc.kill()  # stopped at the limit: git may still be writing
    proc.stdout.close()
    code = proc.wait()
    if len(commits) < limit and code != 0:
        return None  # git failed, or the watchdog stopped it: what was read may be cut anywhere
    return commits


def clear_history(db: sqlite3.Connection) -> None:
    """Empty the history tables (inside the caller's transaction)."""
    db.execute("DELETE FROM hist_commits")
    db.execute("DELETE FROM hist_files")
    db.execute("DELETE FROM hist_fts")
    db.execute("DELETE FROM meta WHERE key = ?", (_HEAD_KEY,))


def known_head(db: sqlite3.Connection) -> str | None:
    """The HEAD the history tables were last brought up to (None: not yet, or no repository)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (_HEAD_KEY,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def _has_rows(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM hist_commits LIMIT 1").fetchone() is not None


def refresh_history(db: sqlite3.Connection, repo: Path) -> dict[str, int]:
    """Bring the history tables up to HEAD of the repository at ``repo``; return counts.

    Run after ``refresh_code`` (the ranking reads the rows of the files indexed then)."""
    from ..errors import SyncError, UntrustedRepository
    from ..gitsafe import project_repo

    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'hist_commits'").fetchone() is None:
        db.executescript(HISTORY_SCHEMA)  # once per index file: a no-op refresh takes no write lock
    known = known_head(db)
    git = project_repo(repo, timeout=30, here_only=True)
    head = None
    if git is not None:
        try:
            head = git.rev("HEAD")
        except (SyncError, UntrustedRepository):
            head = None
    if head is None:  # no repository, no commit yet, or one brain will not run git in
        if known is not None or _has_rows(db):
            with transaction(db):
                clear_history(db)
        return {"commits": 0, "added": 0}
    if head == known:
        return {"commits": -1, "added": 0}  # -1: unchanged, not counted (a no-op refresh reads nothing)
    try:
        base = known if known and git.is_ancestor(known, head) else None
        commits = _read_log(git, f"{base}..{head}" if base else head, MAX_COMMITS)
    except (SyncError, UntrustedRepository):  # a timeout, or a configuration brain will not run git under
        commits = None
    if commits is None:
        return {"commits": -1, "added": 0}  # git failed: keep what is indexed, try again next refresh
    added = 0
    with transaction(db):
        if known_head(db) != known:  # another refresh moved it meanwhile: its work stands
            return {"commits": -1, "added": 0}
        if base is None:
            clear_history(db)
        for commit in reversed(commits):  # oldest first: ids grow with time, pruning drops the lowest
            if commit.touched > MAX_FILES_PER_COMMIT:
                continue
            kept = sorted({path for letter, path in commit.files if letter != "D" and _source(path)})
            subject = commit.message.strip().split("\n", 1)[0][:MAX_SUBJECT_CHARS]
            cur = db.execute("INSERT OR IGNORE INTO hist_commits(sha, time, subject, nfiles) VALUES (?,?,?,?)",
                             (commit.sha, commit.time, subject, commit.touched))
            if not cur.rowcount:
                continue
            rowid = cur.lastrowid
            db.execute("INSERT INTO hist_fts(rowid, message) VALUES (?, ?)", (rowid, token_text(commit.message)))
            db.executemany("INSERT INTO hist_files(commit_id, path) VALUES (?, ?)", [(rowid, p) for p in kept])
            added += 1
        _prune(db)
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_HEAD_KEY, head))
    total = db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0]
    return {"commits": total, "added": added}


@functools.lru_cache(maxsize=1 << 16)  # a file recurs in many commits
def _source(path: str) -> bool:
    """A path the code index could hold as a non-test source file, by its name alone (never by whether it
    exists now: see the module doc)."""
    return os.path.splitext(path)[1] in CODE_EXTENSIONS and not is_test_path(path)


def _prune(db: sqlite3.Connection) -> None:
    """Keep the newest ``MAX_COMMITS`` commits."""
    row = db.execute("SELECT id FROM hist_commits ORDER BY id DESC LIMIT 1 OFFSET ?", (MAX_COMMITS,)).fetchone()
    if row is None:
        return
    cut = row[0]
    db.execute("DELETE FROM hist_fts WHERE rowid <= ?", (cut,))
    db.execute("DELETE FROM hist_files WHERE commit_id <= ?", (cut,))
    db.execute("DELETE FROM hist_commits WHERE id <= ?", (cut,))
