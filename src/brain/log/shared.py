"""Conversation logs kept in the repository's shared store, one folder per checkout, so they outlive the worktree.

Why: a log kept in the working tree's `.brain/runtime/` went with `git worktree remove` (git deletes the
ignored files with the folder, before brain can see it), and a supervisor who removed a finished agent's
worktree lost its conversation for good. In a git checkout every log is written to
`<common git dir>/brain/<key>/conversations/<checkout id>/<thread>/`, beside the coordination store, and
read from there by every checkout (decision 0065).

The checkout id (``c`` + 16 hex digits, random) is kept in the working tree's `runtime/checkout-id`:
git reuses a removed worktree's name for the next one added under it, so the name cannot key the logs;
the id goes with the folder, and a re-added worktree gets a new one. `checkout.json` beside the threads
records the worktree's name, branch and path as it was last seen, for the listing of removed ones.

Moving an older checkout's `runtime/conversations/` (``move_legacy``) is one file at a time, each
committed before its source goes: a segment is placed in the shared folder (a hard link, or a copy
fsync-ed under a temporary name and then linked, never replacing a file), the folder is fsync-ed, and
only then is the source unlinked. A process killed anywhere leaves each segment in the source, in the
target, or in both; the next open redoes the move, and a source segment whose bytes are already in the
target is dropped rather than copied twice. Outside git the logs stay in runtime/conversations/.
"""

from __future__ import annotations

import contextlib
import errno
import filecmp
import os
import shutil
import time
from pathlib import Path

from ..checkout import CHECKOUT_ID_FILE, CONVERSATIONS_FOLDER, prepare_store_dir, read_checkout_id
from ..errors import InvalidInput, UnsafeLink
from ..memory.files import file_lock
from ..memory.private import ensure_private_dir, open_private
from .store import LIVE, ConversationLog, _read_json, _segment_seq, _write_json
from .turns import check_thread_id

__all__ = ["conversations_root", "ensure_checkout_id", "move_legacy", "read_record", "CHECKOUT_RECORD"]

CHECKOUT_RECORD = "checkout.json"  # in conversations/<id>/: the worktree's name, branch and path, last seen
_MIGRATE_LOCK = ".migrate.lock"
_STATE = "handoff.json"
_PARTIES = "parties.json"

# Called after each step of a move with the step's name: None in use. A test sets it to stop the process there
# (tests/test_log_shared.py kills a child with SIGKILL at each step and checks the next open loses nothing).
after_step = None


def _step(name: str) -> None:
    if after_step is not None:
        after_step(name)


def conversations_root(brain) -> Path:
    """The folder of ``brain``'s conversation logs, made ready: in a git checkout, the shared store's
    `conversations/<checkout id>/` (the id made, `checkout.json` written, an older runtime/conversations/
    moved in); outside git, runtime/conversations/ as before."""
    legacy = brain.runtime / "conversations"
    checkout = brain.checkout
    if checkout is None:
        return legacy
    store = brain.store_dir
    prepare_store_dir(store)  # private folders, no link in them (UnsafeLink), a clear error when read-only
    checkout_id = ensure_checkout_id(brain.runtime)
    root = store / CONVERSATIONS_FOLDER / checkout_id
    if _copied_from_another(root, brain, checkout):
        (brain.runtime / CHECKOUT_ID_FILE).unlink(missing_ok=True)
        checkout_id = ensure_checkout_id(brain.runtime)
        root = store / CONVERSATIONS_FOLDER / checkout_id
    for folder in (root.parent, root):
        ensure_private_dir(folder)
        if os.path.islink(folder):
            raise UnsafeLink(str(folder), os.readlink(folder), "conversation folder")
    _record_checkout(root, checkout)
    if os.path.lexists(legacy):
        move_legacy(legacy, ConversationLog(root))
    return root


def ensure_checkout_id(runtime: Path) -> str:
    """This checkout's id, made once: written whole (temporary file, fsync) and linked into place without
    replacing one another process made meanwhile, which is then the one used."""
    found = read_checkout_id(runtime)
    if found is not None:
        return found
    if os.path.islink(Path(runtime) / CHECKOUT_ID_FILE):
        path = Path(runtime) / CHECKOUT_ID_FILE
        raise UnsafeLink(str(path), os.readlink(path), "checkout id file")
    if os.path.lexists(Path(runtime) / CHECKOUT_ID_FILE):
        # another process linked it in (whole) since the read above: theirs is the id; else it is not brain's
        found = read_checkout_id(runtime)
        if found is not None:
            return found
        raise InvalidInput(f"{Path(runtime) / CHECKOUT_ID_FILE} is not a checkout id brain wrote", field="checkout-id",
                           hint="delete it: brain makes a new one (this checkout's logs then start a new folder)")
    ensure_private_dir(runtime)
    new = "c" + os.urandom(8).hex()
    tmp = Path(runtime) / f".{CHECKOUT_ID_FILE}.{os.getpid()}.{os.urandom(3).hex()}.tmp"
    fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
    try:
        os.write(fd, (new + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, Path(runtime) / CHECKOUT_ID_FILE)
    except FileExistsError:
        pass  # another process of this checkout made it first: theirs is the id
    finally:
        os.unlink(tmp)
    _fsync_dir(Path(runtime))
    found = read_checkout_id(runtime)
    if found is None:
        raise InvalidInput(f"{Path(runtime) / CHECKOUT_ID_FILE} is not a checkout id brain wrote", field="checkout-id")
    return found


def _copied_from_another(root: Path, brain, checkout) -> bool:
    """Whether this working tree's runtime/ is a copy of another live checkout's (its id came along with a
    `cp -r`): the folder's record names another checkout whose runtime holds the same id. That one keeps the
    id; this one gets a new one, so their logs stay apart. A moved worktree (`git worktree move`) names a
    folder that is gone, and keeps its id."""
    recorded = read_record(root).get("path")
    if not isinstance(recorded, str) or not recorded or Path(recorded) == checkout.root:
        return False
    try:
        rel = brain.repo.resolve().relative_to(checkout.root)
        other = Path(recorded) / rel / ".brain" / "runtime"
        if other.resolve() == brain.runtime.resolve():
            return False
    except (ValueError, OSError):
        return False
    return read_checkout_id(other) == root.name


def read_record(folder: Path) -> dict:
    """A checkout folder's `checkout.json` (its worktree's name, branch, path as last seen), {} when unreadable."""
    path = folder / CHECKOUT_RECORD
    if os.path.islink(path):
        return {}
    data = _read_json(path, {})
    return data if isinstance(data, dict) else {}


def _record_checkout(root: Path, checkout) -> None:
    """Write `checkout.json` (name, branch, path) when it changed: what the listing shows once the worktree is gone."""
    record = {"worktree": checkout.name, "branch": checkout.branch(), "path": str(checkout.root),
              "linked": bool(checkout.linked)}
    current = _read_json(root / CHECKOUT_RECORD, None)
    if isinstance(current, dict) and {k: current.get(k) for k in record} == record:
        return
    _write_json(root / CHECKOUT_RECORD, {**record, "seen": time.time()})


# -- moving an older checkout's runtime/conversations/ ----------------------------------------------------------
def move_legacy(source: Path, log: ConversationLog) -> list[str]:
    """Move every thread of ``source`` (an older runtime/conversations/) into ``log``'s folder; returns the
    threads moved. One mover at a time (a lock in the target); safe to kill anywhere and run again."""
    if os.path.islink(source):
        raise UnsafeLink(str(source), os.readlink(source), "conversation folder")
    moved = []
    with file_lock(log.root / _MIGRATE_LOCK):
        if not source.is_dir():
            return moved
        _merge_index(source / "index.json", log)
        _step("index")
        for entry in sorted(os.scandir(source), key=lambda e: e.name):
            if not entry.is_dir(follow_symlinks=False):
                continue
            try:
                check_thread_id(entry.name)
            except InvalidInput:
                continue  # not a thread folder brain wrote: left where it is
            _move_thread(Path(entry.path), log, entry.name)
            moved.append(entry.name)
        _remove_folder(source)
        _step("done")
    return moved


def _merge_index(path: Path, log: ConversationLog) -> None:
    """Add the party -> threads index of the old folder to the target's (a union: running it twice adds nothing)."""
    old = _read_json(path, {}) if not os.path.islink(path) else {}
    if not isinstance(old, dict) or not old:
        return
    with file_lock(log.root / ".index.lock"):
        index = _read_json(log.root / "index.json", {})
        index = index if isinstance(index, dict) else {}
        for party, threads in old.items():
            if isinstance(party, str) and isinstance(threads, list):
                index[party] = sorted(set(index.get(party, [])) | {t for t in threads if isinstance(t, str)})
        _write_json(log.root / "index.json", index)


def _segments_of(folder: Path) -> list[Path]:
    """The log segments in ``folder`` (rotated by number, the live one last), refusing a link among them."""
    found = []
    for entry in os.scandir(folder):
        if entry.name == LIVE or (entry.name.startswith("log.") and entry.name.endswith(".jsonl")):
            if entry.is_symlink():
                raise UnsafeLink(entry.path, os.readlink(entry.path), "conversation file")
            if entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return sorted(found, key=lambda p: (p.name == LIVE, _segment_seq(p), p.name))


def _move_thread(source: Path, log: ConversationLog, thread: str) -> None:
    """Move one thread's files into the target thread folder, each committed (target folder fsync-ed) before its
    source is unlinked. The unlinks themselves are not fsync-ed: one a crash undoes brings a segment back whose
    bytes are already in the target, and the next move drops it."""
    with log.lock(thread):  # the target folder is made (0700, no link) and rotation waits for us
        target = log.folder(thread)
        for leftover in target.glob(".migrate-*.tmp"):  # a copy a killed mover did not finish
            leftover.unlink(missing_ok=True)
        already = _segments_of(target)
        state = source / _STATE
        if not already and os.path.isfile(state) and not os.path.islink(state) \
                and not os.path.lexists(target / _STATE):
            _place(state, target, _STATE)  # the fold state of this very log: the handoff goes on from it
            _step("state")
        added = False
        for segment in _segments_of(source):
            if segment.stat().st_size and not _already_there(segment, target):
                _place(segment, target, None, keep_name=not already)
                added = True
                _step("placed")
            segment.unlink()
            _step("unlinked")
        if added and already:
            (target / _STATE).unlink(missing_ok=True)  # turns joined a log that had its own: refolded from the log
        parties = _read_json(source / _PARTIES, []) if not os.path.islink(source / _PARTIES) else []
        if isinstance(parties, list) and parties:
            known = set(log.parties(thread)) | {p for p in parties if isinstance(p, str)}
            _write_json(target / _PARTIES, sorted(known))
        _remove_folder(source)
        _step("thread")


def _already_there(segment: Path, target: Path) -> bool:
    """Whether a segment of ``target`` holds exactly these bytes (moved before a kill cut the move short)."""
    size = segment.stat().st_size
    return any(other.stat().st_size == size and filecmp.cmp(segment, other, shallow=False)
               for other in _segments_of(target))


def _place(source: Path, target: Path, name: str | None, *, keep_name: bool = True) -> None:
    """Put ``source`` into ``target`` under ``name`` (None: a segment's place, ``_segment_name``), never
    replacing a file: a hard link on the same file system, else a copy fsync-ed under a temporary name and
    linked into place. The target folder is fsync-ed before returning, so the source may then go."""
    tmp = None
    try:
        while True:
            final = target / (name or _segment_name(source, target, keep_name))
            try:
                os.link(tmp or source, final, follow_symlinks=False)
                break
            except FileExistsError:
                if name is not None:
                    return  # a fixed name (the fold state) already there: kept
            except OSError as exc:
                if tmp is not None or exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP,
                                                        errno.EACCES):
                    raise
                tmp = _copy(source, target)  # another file system (or no hard links there): copy, then link
                _step("copied")
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    _fsync_dir(target)


def _segment_name(source: Path, target: Path, keep_name: bool) -> str:
    """Where a moved segment goes, so the turns keep their order: a live log stays the live log, after the
    target's own (rotated first, as rotation does: the caller holds the thread's lock); a rotated segment keeps
    its name in a folder it starts (``keep_name``), else takes the next number, after the target's."""
    seq = 1 + max((_segment_seq(p) for p in _segments_of(target) if p.name != LIVE), default=0)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    if source.name == LIVE:
        if os.path.lexists(target / LIVE):  # turns an older process wrote after the move: they come last
            with contextlib.suppress(FileNotFoundError):
                os.replace(target / LIVE, target / f"log.{seq:08d}.{stamp}.jsonl")
        return LIVE
    if keep_name and not os.path.lexists(target / source.name):
        return source.name
    return f"log.{seq:08d}.{stamp}.jsonl"


def _copy(source: Path, target: Path) -> Path:
    tmp = target / f".migrate-{os.getpid()}-{os.urandom(3).hex()}.tmp"
    src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        dst = open_private(tmp, os.O_WRONLY | os.O_EXCL)
        try:
            with open(src, "rb", closefd=False) as reader, open(dst, "wb", closefd=False) as writer:
                shutil.copyfileobj(reader, writer)
            os.fsync(dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return tmp


def _remove_folder(folder: Path) -> None:
    """Remove an emptied old folder: its locks, derived files and temporary files (never following a link),
    then the folder; one still holding something brain did not write is left in place."""
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                continue
            if entry.name in (".lock", ".index.lock", "index.json", _STATE, _PARTIES) \
                    or (entry.name.startswith(".") and entry.name.endswith(".tmp")) or entry.is_symlink():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

