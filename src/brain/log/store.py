"""The conversation log: `runtime/conversations/<thread>/log.jsonl`, append-only.

Every turn is one whole JSON line written with a single ``write()`` on a file
opened with O_APPEND, so concurrent writers never interleave and a crash leaves at
worst one torn last line. Readers skip (and count) torn or foreign lines; a writer
that finds the file not ending in a newline starts its line on a fresh one, so a
torn fragment never swallows the next turn.

The log is for humans only (DESIGN §1, the frontier rule): nothing here is ever
handed to an agent; only the distilled handoff (see ``handoff``) is.

Rotation: when the live segment passes ``rotate_bytes`` or its first turn is older
than ``rotate_seconds``, it is renamed `log.<seq>.<UTC stamp>.jsonl` and a new one starts.
Rotated segments whose last write is older than ``retention_seconds`` are deleted
(0 keeps them forever).

Pages (``page``) come from ``pages.PageIndex``: an entry is a line, a damaged line keeps
its place and is counted as skipped (why, and how a page is found without reading the
thread: see that module). ``iter_turns`` reads the same entries in order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..appendonly import append_whole
from ..errors import InvalidInput
from ..inputs import bounded_lines
from ..memory.files import file_lock
from ..memory.private import PRIVATE_FILE_MODE, ensure_private_dir, open_private
from .pages import Page, PageIndex
from .turns import MAX_TURN_BYTES, Turn, check_thread_id, decode_turn, encode_turn

__all__ = ["ConversationLog", "Page", "ThreadInfo", "ReadStats"]

LIVE = "log.jsonl"


@dataclass
class ReadStats:
    turns: int = 0
    skipped: int = 0  # torn or foreign lines


@dataclass
class ThreadInfo:
    thread: str
    parties: list[str] = field(default_factory=list)
    bytes: int = 0
    segments: int = 0
    updated: float = 0.0

    def to_dict(self) -> dict:
        return {"thread": self.thread, "parties": self.parties, "bytes": self.bytes, "segments": self.segments,
                "updated": self.updated}


class ConversationLog:
    """All conversation logs of one brain (a folder of thread folders)."""

    def __init__(self, root: Path, *, rotate_bytes: int = 8 * 1024 * 1024, rotate_seconds: float = 30 * 86400,
                 retention_seconds: float = 90 * 86400, clock=time.time, redactor=None) -> None:
        self.root = Path(root)
        self.redactor = redactor  # brain.security.Redactor: secrets never reach a log line
        self.rotate_bytes = rotate_bytes
        self.rotate_seconds = rotate_seconds
        self.retention_seconds = retention_seconds
        self.clock = clock
        self._made: set[str] = set()
        self._started: dict[tuple[int, int], float] = {}  # (dev, inode) of a live segment -> its first turn's time
        self._parties: dict[str, set[str]] = {}
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}
        self._depth: dict[str, int] = {}
        self.page_index = PageIndex(self.segments, LIVE, stable=self.lock)  # serves ``page``; ``forget()`` drops its checkpoints

    # -- paths -----------------------------------------------------------------
    def folder(self, thread: str) -> Path:
        return self.root / check_thread_id(thread)

    def segments(self, thread: str) -> list[Path]:
        """The thread's segments, oldest first; the live `log.jsonl` last."""
        folder = self.folder(thread)
        if not folder.is_dir():
            return []
        rotated = sorted((p for p in folder.glob("log.*.jsonl") if p.name != LIVE), key=lambda p: (_segment_seq(p), p.name))
        live = folder / LIVE
        return rotated + ([live] if live.exists() else [])

    @contextlib.contextmanager
    def lock(self, thread: str):
        """Serialize rotation and the handoff fold of one thread (appends themselves need no lock).

        Re-entrant within a process (an in-process RLock, then one flock per process), so a
        fold that holds it can append and rotate without deadlocking on its own flock.
        """
        folder = self.folder(thread)
        with self._guard:
            rlock = self._locks.setdefault(thread, threading.RLock())
        with rlock:
            depth = self._depth.get(thread, 0)
            if depth:
                self._depth[thread] = depth + 1
                try:
                    yield
                finally:
                    self._depth[thread] -= 1
                return
            self._mkdir(folder)
            with os.fdopen(_open_no_link(folder / ".lock", os.O_RDWR | os.O_APPEND | os.O_CREAT), "a+b") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                self._depth[thread] = 1
                try:
                    yield
                finally:
                    self._depth[thread] = 0
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _mkdir(self, folder: Path) -> None:
        """The thread's folder, created if needed; refused when it (or conversations/) is a link, which a
        cloned repository could commit to make brain append its logs anywhere (UnsafeLink)."""
        key = str(folder)
        if key not in self._made:
            ensure_private_dir(folder)  # human-only logs: 0700 folders, 0600 files whatever the umask
            for part in (folder, folder.parent):
                if part.is_symlink():
                    from ..errors import UnsafeLink

                    raise UnsafeLink(str(part), os.readlink(part), "conversation folder")
            self._made.add(key)

    # -- writing ---------------------------------------------------------------
    def append(self, turn: Turn, *, redact: bool = True) -> int:
        """Append one turn as one whole line (secrets redacted first); returns the bytes written.

        ``redact=False`` is for a caller that already passed the turn through ``redacted``."""
        data = encode_turn(self.redacted(turn) if redact else turn)
        folder = self.folder(turn.thread)
        self._mkdir(folder)
        path = folder / LIVE
        self._maybe_rotate(turn.thread, path)
        fd = _open_no_link(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            # The look at the last byte and the write are one step under the file's lock: a concurrent
            # append caught half-copied would otherwise look torn and earn a spurious blank line.
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # a torn fragment before us (a killed writer) stays a line of its own
            written = append_whole(fd, data, str(path))  # all of it, or the log as it was (IncompleteWrite)
        finally:
            os.close(fd)  # closing releases the lock
        self._note_parties(turn)
        return written

    def redacted(self, turn: Turn) -> Turn:
        """The turn with secret shapes replaced in its text and file list (the same object when there is none)."""
        if self.redactor is None:
            return turn
        from ..security.redact import refuse_secret_name

        for value, what in ((turn.speaker, "speaker"), (turn.to, "to"), (turn.ref, "ref"), (turn.kind, "kind"),
                            (turn.thread, "thread")):
            refuse_secret_name(self.redactor, value, what)  # names become folders, parties and index entries
        text = self.redactor(turn.text)
        files = tuple(self.redactor(f) if isinstance(f, str) else f for f in turn.files)
        if text == turn.text and files == turn.files:
            return turn
        return dataclasses.replace(turn, text=text, files=files)

    def _segment_start(self, path: Path, st: os.stat_result) -> float | None:
        key = (st.st_dev, st.st_ino)
        if key not in self._started:
            try:
                with open(path, "rb") as handle:
                    for raw, _size, _whole in bounded_lines(handle, MAX_TURN_BYTES):
                        turn = decode_turn(raw) if raw is not None else None
                        if turn is not None:
                            self._started[key] = turn.at
                            break
                        if handle.tell() > 65536:
                            break
            except FileNotFoundError:
                return None
        return self._started.get(key)

    def _needs_rotation(self, path: Path) -> bool:
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        if st.st_size == 0:
            return False
        if self.rotate_bytes and st.st_size >= self.rotate_bytes:
            return True
        if self.rotate_seconds:
            start = self._segment_start(path, st)
            return start is not None and self.clock() - start >= self.rotate_seconds
        return False

    def _maybe_rotate(self, thread: str, path: Path) -> None:
        if not self._needs_rotation(path):
            return
        with self.lock(thread):
            if not self._needs_rotation(path):  # another writer rotated it meanwhile
                return
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(self.clock()))
            seq = 1 + max((_segment_seq(p) for p in self.segments(thread) if p.name != LIVE), default=0)
            target = path.with_name(f"log.{seq:08d}.{stamp}.jsonl")
            os.replace(path, target)
            self.prune(thread)

    def prune(self, thread: str) -> list[str]:
        """Delete rotated segments older than the retention; returns their names."""
        if not self.retention_seconds:
            return []
        removed = []
        cutoff = self.clock() - self.retention_seconds
        with self.lock(thread):  # as rotation does: a page read holding it sees no segment go
            for seg in self.segments(thread):
                if seg.name == LIVE:
                    continue
                with contextlib.suppress(FileNotFoundError):
                    if seg.stat().st_mtime < cutoff:
                        seg.unlink()
                        removed.append(seg.name)
        return removed

    def prune_all(self) -> dict[str, list[str]]:
        """Apply the retention to every thread (rotation applies it to the thread it rotates)."""
        return {info.thread: removed for info in self.threads() if (removed := self.prune(info.thread))}

    # -- parties ---------------------------------------------------------------
    def _note_parties(self, turn: Turn) -> None:
        """Remember who talks in a thread (rarely changes: written only when a new party appears)."""
        new = {p for p in (turn.speaker, turn.to) if p}
        known = self._parties.get(turn.thread)
        if known is None:
            known = set(self.parties(turn.thread))
            self._parties[turn.thread] = known
        if new <= known:
            return
        with self.lock(turn.thread):
            known |= set(self.parties(turn.thread)) | new
            _write_json(self.folder(turn.thread) / "parties.json", sorted(known))
        with file_lock(self.root / ".index.lock"):
            index_path = self.root / "index.json"
            index = _read_json(index_path, {})
            if not isinstance(index, dict):
                index = {}
            for party in known:
                index[party] = sorted(set(index.get(party, [])) | {turn.thread})
            _write_json(index_path, index)

    def parties(self, thread: str) -> list[str]:
        data = _read_json(self.folder(thread) / "parties.json", [])
        return [p for p in data if isinstance(p, str)] if isinstance(data, list) else []

    def threads_of(self, party: str) -> list[str]:
        """Threads in which ``party`` spoke or was spoken to."""
        index = _read_json(self.root / "index.json", {})
        threads = index.get(party, []) if isinstance(index, dict) else []
        return [t for t in threads if isinstance(t, str)]

    # -- reading ---------------------------------------------------------------
    def iter_turns(self, thread: str, stats: ReadStats | None = None) -> Iterator[Turn]:
        """Every readable turn, oldest first, skipping (and counting) torn, foreign or blank lines.

        The entries are those ``page`` numbers: the live segment's unterminated tail is not
        one yet (being written, or torn and closed by the next append)."""
        stats = stats if stats is not None else ReadStats()
        segments = self.segments(thread)
        for seg in segments:
            live = seg is segments[-1] and seg.name == LIVE
            try:
                handle = open(seg, "rb")
            except FileNotFoundError:  # pruned while we read
                continue
            with handle:
                for raw, _size, whole in bounded_lines(handle, MAX_TURN_BYTES):  # a longer line is damaged
                    if not whole and live:
                        continue
                    turn = decode_turn(raw) if whole and raw is not None else None
                    if turn is None:
                        stats.skipped += 1
                        continue
                    stats.turns += 1
                    yield turn

    def page(self, thread: str, page: int | None = None, size: int = 50) -> Page:
        """Page ``page`` (1 = oldest; negative counts from the end; None = the newest) of ``size`` entries.

        An entry is a line; a damaged one keeps its place and is counted in ``Page.skipped``
        (``pages`` explains why). Served from checkpoints kept in this object, so a reader that
        keeps its ``ConversationLog`` (the web UI, the MCP server) counts only new bytes."""
        return self.page_index.page(thread, page, size)

    def entries(self, thread: str) -> int:
        """How many entries ``page`` numbers in ``thread`` (0 for none); counting keeps the checkpoints warm."""
        return self.page_index.total(thread)

    def threads(self) -> list[ThreadInfo]:
        """Every conversation, most recently updated first."""
        if not self.root.is_dir():
            return []
        found = []
        for folder in self.root.iterdir():
            if not folder.is_dir():
                continue
            try:
                check_thread_id(folder.name)
            except InvalidInput:
                continue
            info = ThreadInfo(folder.name, self.parties(folder.name))
            for seg in self.segments(folder.name):
                with contextlib.suppress(FileNotFoundError):
                    st = seg.stat()
                    info.bytes += st.st_size
                    info.segments += 1
                    info.updated = max(info.updated, st.st_mtime)
            if info.segments:
                found.append(info)
        found.sort(key=lambda i: (-i.updated, i.thread))
        return found


def _segment_seq(path: Path) -> int:
    """The rotation number of `log.<seq>.<stamp>.jsonl` (0 for a name brain did not write)."""
    part = path.name.split(".")[1] if path.name.count(".") >= 2 else ""
    return int(part) if part.isdigit() else 0


def _open_no_link(path: Path, flags: int) -> int:
    """``os.open`` that never follows a link planted in place of a log or lock file (UnsafeLink)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    except OSError as exc:
        if os.path.islink(path):
            from ..errors import UnsafeLink

            raise UnsafeLink(str(path), os.readlink(path), "conversation file") from None
        raise exc


def _read_json(path: Path, default):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _write_json(path: Path, data) -> None:
    """Replace a small runtime file atomically (old or new, never torn; derived, so no fsync)."""
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, ensure_ascii=False, sort_keys=True))
    os.replace(tmp, path)
