"""Pages of a conversation log by number, without reading the whole thread.

What a page counts. A page holds ``size`` *entries*, and an entry is a line: every
newline-terminated line of the thread's segments, oldest segment first, plus the
unterminated tail of a rotated segment (a fragment torn by a crash just before the
rotation). The live segment's unterminated tail is not an entry yet: it is a line being
written right now, or a torn fragment that the next append closes with a newline
(``ConversationLog.append`` starts its turn on a fresh line), after which it is one.
An entry that is not a turn (torn, foreign, blank) keeps its place on its page, is not
shown, and is counted in ``Page.skipped`` (the damaged entries of that page);
``Page.total`` counts entries. So entry *n* of a thread is line *n* of its segments read
in order, a page's boundaries never move once its lines are written, and `brain log`,
the web thread viewer and any other caller number pages alike: they all go through
``ConversationLog.page``, which is this index.

Why lines and not valid turns (which ``ConversationLog.page`` counted before): where a
page starts would then depend on decoding every line before it (about half a second of
``decode_turn`` for a 100,000-turn thread on a busy machine), or on an index of valid
turns that must decode every line to be built; counting lines needs only the bytes. A page showing 49 turns and "1 skipped" tells the reader where the damage is.

How a page is found fast. Per segment the index keeps sparse checkpoints: how many lines
end before every 64 KiB boundary. Building them is one pass of ``bytes.count(b"\\n")``
over the segment into one reused buffer (no per-line Python work: 0.5-1 ms a MiB, so
15-30 ms for the 25 MB of a 100,000-turn thread on a busy 2-CPU machine); a page is then a
bisect over the checkpoints, one 64 KiB read at each end to find the exact line starts,
and one read of the page's bytes (under 1 ms). Segments are
append-only, so the checkpoints are extended from where counting stopped when the live
segment grows, and reused as they are while a segment's (device, inode, size, mtime) is
unchanged. A segment that was replaced or rewritten (another inode, fewer bytes, other
first bytes, other bytes just before where counting stopped, or a new mtime at the
same size) is recounted from zero, so stale offsets are not used (what goes unseen is a
same-size rewrite inside one mtime tick that keeps both compared ends). The segment list is
taken again after counting and the read is retried if a rotation or prune happened in
between, so a page never misses or mixes segments.

Nothing is persisted: no sidecar that could tear or go stale, nothing to rebuild; the
counting pass is cheap enough that the simplest design is also fast enough. A fresh
process (the CLI) pays one counting pass; a long-lived one (the web UI, the MCP server)
keeps the checkpoints in its ``ConversationLog`` and afterwards counts only new bytes
(a rotated segment is counted once more under its new name).
"""

from __future__ import annotations

import os
import threading
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

from ..errors import InvalidInput, NotFound
from ..inputs import bounded_lines
from .turns import MAX_TURN_BYTES, Turn, decode_turn

__all__ = ["Page", "PageIndex", "CHUNK", "MAX_PAGE_SIZE"]

CHUNK = 1 << 16          # bytes between two checkpoints
OPTIMISTIC_READS = 5     # reads without the rotation lock before one read with it
_READ = 1 << 20          # bytes read at once while counting, into one reused buffer: memory stays flat
_PRINT = 64              # bytes compared at the head and at the counted end of a segment
MAX_PAGE_SIZE = 10000
_WHOLE_READ = 8 << 20    # a page's bytes up to this are read with one pread; more are read line by line


@dataclass
class Page:
    """One page of a thread. ``total`` counts entries (turns and damaged lines) of the whole
    thread; ``skipped`` counts the damaged entries on this page (they are not in ``turns``);
    ``numbers`` holds each turn's entry number in the thread (1 = the oldest), so a reader can number
    turns without the damaged ones shifting the rest."""

    thread: str
    page: int
    pages: int
    size: int
    total: int
    turns: list[Turn]
    skipped: int
    numbers: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        turns = [t.to_dict() for t in self.turns]
        if len(self.numbers) == len(turns):
            turns = [t | {"entry": n} for t, n in zip(turns, self.numbers)]
        return {"thread": self.thread, "page": self.page, "pages": self.pages, "size": self.size,
                "total": self.total, "skipped": self.skipped, "turns": turns}


@dataclass
class _Counted:
    """What is known of one segment: its lines up to ``size`` bytes, with a checkpoint per CHUNK."""

    ident: tuple[int, int]               # (device, inode)
    stamp: tuple[int, int, int, int]     # (device, inode, size, mtime_ns) when last counted
    head: bytes                          # its first bytes
    size: int = 0                        # bytes counted
    lines: int = 0                       # newlines in [0, size)
    torn: bool = False                   # bytes after the last newline
    end: bytes = b""                     # the bytes just before ``size``
    marks: array = field(default_factory=lambda: array("q", [0]))  # marks[c]: newlines in [0, c * chunk)

    def entries(self, live: bool) -> int:
        return self.lines + (self.torn and not live)


class _Changed(Exception):
    """A segment changed under a read (pruned, replaced): count again."""


class PageIndex:
    """Checkpoints of every segment of the threads read so far; ``page`` serves any page.

    ``segments(thread)`` lists a thread's segment paths, oldest first; the last one is the
    live segment when it is named ``live``. ``chunk`` is the bytes between two checkpoints
    (tests make it tiny). Thread-safe (one lock: pages are short reads).
    """

    def __init__(self, segments: Callable[[str], list[Path]], live: str = "log.jsonl", *,
                 stable: Callable[[str], ContextManager], chunk: int = CHUNK) -> None:
        if chunk < 1:
            raise InvalidInput("chunk must be positive", field="chunk")
        self._list = segments
        self._live = live
        self._stable = stable
        self._chunk = chunk
        self._known: dict[str, dict[Path, _Counted]] = {}
        self._lock = threading.Lock()

    def page(self, thread: str, page: int | None = None, size: int = 50) -> Page:
        """Page ``page`` (1 = oldest; negative counts from the end; None = the newest) of ``size`` entries."""
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_PAGE_SIZE:
            raise InvalidInput(f"page size must be between 1 and {MAX_PAGE_SIZE}", field="size")
        if page is not None and (isinstance(page, bool) or not isinstance(page, int)):
            raise InvalidInput("page must be a whole number", field="page")
        return self._retrying(thread, lambda: self._page(thread, page, size))

    def total(self, thread: str) -> int:
        """The entries of ``thread`` (0 for an unknown one)."""
        return self._retrying(thread, lambda: sum(c.entries(live) for _, c, live in self._refresh(thread)))

    def forget(self, thread: str | None = None) -> None:
        """Drop the checkpoints of one thread (or all): they are counted again when next read."""
        with self._lock:
            if thread is None:
                self._known.clear()
            else:
                self._known.pop(thread, None)

    # -- internals ----------------------------------------------------------------------------------------
    def _retrying(self, thread: str, read):
        """Read optimistically (appends never disturb a read); a thread rotating under every attempt is
        read once more holding its rotation lock (``stable``), which appends do not take."""
        with self._lock:
            for _ in range(OPTIMISTIC_READS):
                try:
                    return read()
                except _Changed:  # rotated, pruned or replaced under the read: what was counted stays valid
                    pass
            with self._stable(thread):
                return read()

    def _refresh(self, thread: str) -> list[tuple[Path, _Counted, bool]]:
        paths = self._list(thread)
        known = self._known.get(thread, {})
        fresh: dict[Path, _Counted] = {}
        out = []
        for i, path in enumerate(paths):
            counted = _count(path, known.get(path), self._chunk)
            if counted is None:  # pruned while we listed
                continue
            fresh[path] = counted
            out.append((path, counted, i == len(paths) - 1 and path.name == self._live))
        if self._list(thread) != paths:  # rotated meanwhile: the listing may have missed a segment
            raise _Changed
        if fresh:
            self._known[thread] = fresh
        else:
            self._known.pop(thread, None)
        return out

    def _page(self, thread: str, page: int | None, size: int) -> Page:
        segments = self._refresh(thread)
        if not segments:
            raise NotFound(f"conversation {thread}", hint="`brain log` lists the conversations")
        total = sum(c.entries(live) for _, c, live in segments)
        pages = max(1, -(-total // size))
        number = pages if page is None else (pages + 1 + page if page < 0 else page)
        if number < 1 or number > pages:
            raise InvalidInput(f"page {page} is out of range 1..{pages}", field="page")
        first, last = (number - 1) * size, min(number * size, total)
        turns: list[Turn] = []
        numbers: list[int] = []
        skipped = offset = 0
        for path, counted, live in segments:
            count = counted.entries(live)
            lo, hi = max(first - offset, 0), min(last - offset, count)
            offset += count
            if lo < hi:
                start = offset - count + lo + 1  # the entry number of this segment's first line read
                for i, (raw, whole) in enumerate(_read_entries(path, counted, lo, hi, self._chunk)):
                    turn = decode_turn(raw) if whole else None
                    if turn is None:
                        skipped += 1
                    else:
                        turns.append(turn)
                        numbers.append(start + i)
        return Page(thread, number, pages, size, total, turns, skipped, numbers)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _count(path: Path, known: _Counted | None, chunk: int) -> _Counted | None:
    """The checkpoints of ``path``: ``known`` as it is, extended over new bytes, or counted afresh."""
    try:
        if known is not None and _stamp(os.stat(path)) == known.stamp:
            return known
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        stamp = _stamp(st)
        if known is not None and not _extends(fd, st, known):
            known = None
        if known is None:
            known = _Counted(stamp[:2], stamp, os.pread(fd, _PRINT, 0))
        pos, end = known.size, st.st_size
        lines, torn, marks = known.lines, known.torn, array("q", known.marks)  # ``known`` changes only on success
        buffer = view = None
        while pos < end:
            if buffer is None:
                buffer = bytearray(min(_READ, end - pos))
                view = memoryview(buffer)
            got = os.preadv(fd, [view[:min(len(buffer), end - pos)]], pos)
            if not got:  # truncated meanwhile
                raise _Changed
            i = 0
            while i < got:
                stop = min(got, i + chunk - pos % chunk)
                lines += buffer.count(b"\n", i, stop)
                pos += stop - i
                i = stop
                if pos % chunk == 0:
                    marks.append(lines)
            torn = buffer[got - 1] != 10  # the last byte read is not a newline
        known.lines, known.torn, known.marks, known.size = lines, torn, marks, pos
        known.end = os.pread(fd, min(_PRINT, pos), pos - min(_PRINT, pos))
        known.stamp = stamp
        return known
    finally:
        os.close(fd)


def _extends(fd: int, st: os.stat_result, known: _Counted) -> bool:
    """Whether the open file is ``known`` with bytes appended (or untouched)."""
    if (st.st_dev, st.st_ino) != known.ident or st.st_size < known.size:
        return False
    if st.st_size == known.size and st.st_mtime_ns != known.stamp[3]:
        return False  # written in place
    if os.pread(fd, len(known.head), 0) != known.head:
        return False
    return os.pread(fd, len(known.end), known.size - len(known.end)) == known.end


def _line_start(fd: int, counted: _Counted, n: int, chunk: int) -> int:
    """The byte offset where line ``n`` (0-based, n <= counted.lines) of the segment starts."""
    if n == 0:
        return 0
    k = n - 1                              # line n starts after the k-th newline (0-based)
    c = bisect_right(counted.marks, k) - 1  # the chunk holding that newline
    base = c * chunk
    data = os.pread(fd, min(chunk, counted.size - base), base)
    at = -1
    for _ in range(k - counted.marks[c] + 1):
        at = data.find(b"\n", at + 1)
        if at < 0:
            raise _Changed
    return base + at + 1


def _read_entries(path: Path, counted: _Counted, lo: int, hi: int, chunk: int) -> list[tuple[bytes, bool]]:
    """Entries ``lo``..``hi`` of a segment as (bytes without the newline, newline-terminated)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise _Changed from None
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != counted.ident:  # rotated or replaced since it was counted
            raise _Changed
        start = _line_start(fd, counted, lo, chunk)
        stop = _line_start(fd, counted, hi, chunk) if hi <= counted.lines else counted.size
        if stop - start > _WHOLE_READ:  # perhaps a planted multi-GB line: read line by line, each bounded
            return _read_entries_bounded(fd, start, stop, lo, hi, counted.lines)
        data = os.pread(fd, stop - start, start)
        if len(data) != stop - start:
            raise _Changed
    finally:
        os.close(fd)
    parts = data.split(b"\n")
    return [(part, i + lo < counted.lines) for i, part in enumerate(parts[:hi - lo])]


def _read_entries_bounded(fd: int, start: int, stop: int, lo: int, hi: int, lines: int) -> list[tuple[bytes, bool]]:
    """``_read_entries`` for a span too large to read at once: a line longer than a turn can be
    (MAX_TURN_BYTES) is an empty, damaged entry, its bytes never held."""
    out: list[tuple[bytes, bool]] = []
    with os.fdopen(os.dup(fd), "rb") as handle:
        handle.seek(start)
        for raw, size, _whole in bounded_lines(handle, MAX_TURN_BYTES):
            index = lo + len(out)
            out.append(((raw or b"").rstrip(b"\n"), index < lines))
            start += size
            if len(out) == hi - lo or start >= stop:
                break
    if len(out) != hi - lo:
        raise _Changed
    return out
