"""Random access to a conversation log by page, for the thread viewer.

``ConversationLog.page`` reads the whole thread twice to serve one page: fine for the
CLI, too slow for a viewer on a 100,000-turn conversation. Here each segment is scanned
once for the byte offset of every complete, non-blank line; the offsets are kept and
extended as the live segment grows (segments are append-only, rotated ones never
change), so a page is one seek and one short read. Numbering follows
``ConversationLog.page``: 1 is the oldest page, ``None`` the newest, negative counts
from the end. A complete line that is not a turn (foreign or damaged) takes its place
in the numbering and is counted as skipped.
"""

from __future__ import annotations

import os
import re
import threading
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidInput, NotFound
from ..log.store import Page
from ..log.turns import decode_turn

__all__ = ["PageIndex"]

_LINE = re.compile(rb"[^\n]*[^ \t\r\n][^\n]*\n")  # a complete line holding something


@dataclass
class _Segment:
    inode: int
    end: int = 0                                     # bytes scanned: the end of the last complete line
    starts: array = field(default_factory=lambda: array("q"))

    def line_end(self, i: int) -> int:
        return self.starts[i + 1] if i + 1 < len(self.starts) else self.end


class PageIndex:
    """Line offsets of every segment of every thread of one ``ConversationLog``."""

    def __init__(self, log) -> None:
        self.log = log
        self._segments: dict[Path, _Segment] = {}
        self._lock = threading.Lock()

    def _scan(self, path: Path) -> _Segment | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        seg = self._segments.get(path)
        if seg is None or seg.inode != st.st_ino or st.st_size < seg.end:
            seg = _Segment(st.st_ino)
            self._segments[path] = seg
        if st.st_size > seg.end:
            try:
                with open(path, "rb") as handle:
                    handle.seek(seg.end)
                    data = handle.read(st.st_size - seg.end)
            except FileNotFoundError:
                return None
            cut = data.rfind(b"\n") + 1  # a torn tail waits until its newline arrives
            base = seg.end
            seg.starts.extend(m.start() + base for m in _LINE.finditer(data, 0, cut))
            seg.end = base + cut
        return seg

    def segments(self, thread: str) -> list[tuple[Path, _Segment]]:
        with self._lock:
            out = []
            for path in self.log.segments(thread):
                seg = self._scan(path)
                if seg is not None:
                    out.append((path, seg))
            return out

    def total(self, thread: str) -> int:
        return sum(len(seg.starts) for _, seg in self.segments(thread))

    def page(self, thread: str, page: int | None = None, size: int = 50) -> Page:
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 10000:
            raise InvalidInput("page size must be between 1 and 10000", field="size")
        segments = self.segments(thread)
        if not segments:
            raise NotFound(f"conversation {thread}", hint="`brain log` lists the conversations")
        total = sum(len(seg.starts) for _, seg in segments)
        pages = max(1, -(-total // size))
        number = pages if page is None else (pages + 1 + page if page < 0 else page)
        if number < 1 or number > pages:
            raise InvalidInput(f"page {page} is out of range 1..{pages}", field="page")
        first, last = (number - 1) * size, min(number * size, total)
        turns, skipped, offset = [], 0, 0
        for path, seg in segments:
            count = len(seg.starts)
            lo, hi = max(first - offset, 0), min(last - offset, count)
            offset += count
            if lo >= hi:
                continue
            start, stop = seg.starts[lo], seg.line_end(hi - 1)
            try:
                with open(path, "rb") as handle:
                    handle.seek(start)
                    data = handle.read(stop - start)
            except FileNotFoundError:  # pruned while we read
                continue
            for line in data.splitlines():
                if not line.strip():
                    continue
                turn = decode_turn(line)
                if turn is None:
                    skipped += 1
                else:
                    turns.append(turn)
        return Page(thread, number, pages, size, total, turns, skipped)

    def forget(self) -> None:
        with self._lock:
            self._segments.clear()
