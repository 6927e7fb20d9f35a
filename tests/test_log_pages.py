"""Pages of a conversation log (brain.log.pages), checked against a naive full read of the segments.

An entry is a line: damaged lines keep their place and are counted as skipped, the live
segment's unterminated tail waits for its newline, a rotated segment's tail counts. The same
numbering reaches the CLI and the web viewer (both call ConversationLog.page)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.errors import InvalidInput, NotFound
from brain.log import ConversationLog, Turn
from brain.log.pages import PageIndex
from brain.log.store import ReadStats
from brain.log.turns import decode_turn

THREAD = "p+q"


# -- the reference: read every byte, split, slice ----------------------------------------------------------
def naive_entries(paths: list[Path]) -> list[tuple[bytes, bool]]:
    out = []
    for i, path in enumerate(paths):
        lines = path.read_bytes().split(b"\n")
        tail = lines.pop()  # b"" when the segment ends with a newline
        out += [(line, True) for line in lines]
        if tail and not (i == len(paths) - 1 and path.name == "log.jsonl"):
            out.append((tail, False))
    return out


def naive_page(paths: list[Path], page: int | None, size: int) -> tuple[int, int, int, list[Turn], int, list[int]]:
    entries = naive_entries(paths)
    pages = max(1, -(-len(entries) // size))
    number = pages if page is None else (pages + 1 + page if page < 0 else page)
    first = (number - 1) * size
    chosen = entries[first: number * size]
    decoded = [(first + i + 1, decode_turn(raw) if whole else None) for i, (raw, whole) in enumerate(chosen)]
    turns = [t for _, t in decoded if t is not None]
    return number, pages, len(entries), turns, len(chosen) - len(turns), [n for n, t in decoded if t is not None]


def as_tuple(page) -> tuple[int, int, int, list[Turn], int, list[int]]:
    return page.page, page.pages, page.total, page.turns, page.skipped, page.numbers


def turn(i: int, text: str | None = None) -> Turn:
    return Turn(thread=THREAD, speaker="p" if i % 2 else "q", to="q" if i % 2 else "p", at=1.0 + i,
                text=text if text is not None else f"turn {i}")


def new_log(root: Path, rotate_bytes: int = 0) -> ConversationLog:
    """A log that rotates by size only (the turns here are dated 1970: age would rotate every append)."""
    return ConversationLog(root, rotate_bytes=rotate_bytes, rotate_seconds=0, retention_seconds=0)


def rotate(log: ConversationLog, seq: int) -> None:
    """What ConversationLog._maybe_rotate does, on demand."""
    live = log.folder(THREAD) / "log.jsonl"
    os.replace(live, live.with_name(f"log.{seq:08d}.20260101T000000.jsonl"))


# -- numbering ---------------------------------------------------------------------------------------------
def test_damaged_lines_keep_their_place_and_are_counted_on_their_page(tmp_path):
    log = new_log(tmp_path)
    for i in range(3):
        log.append(turn(i))
    live = log.folder(THREAD) / "log.jsonl"
    with open(live, "ab") as handle:
        handle.write(b'["foreign"]\n\n   \n{"not": "a turn"}\n')
    for i in range(3, 6):
        log.append(turn(i))
    # entries: t0 t1 t2 | foreign, blank, spaces | not-a-turn t3 t4 | t5
    pages = [log.page(THREAD, n, 3) for n in (1, 2, 3, 4)]
    assert [[t.text for t in p.turns] for p in pages] == [["turn 0", "turn 1", "turn 2"], [],
                                                          ["turn 3", "turn 4"], ["turn 5"]]
    assert [p.skipped for p in pages] == [0, 3, 1, 0]
    assert [p.numbers for p in pages] == [[1, 2, 3], [], [8, 9], [10]]  # damaged entries do not shift the rest
    assert {(p.total, p.pages) for p in pages} == {(10, 4)}
    stats = ReadStats()
    assert [t.text for t in log.iter_turns(THREAD, stats)] == [f"turn {i}" for i in range(6)]
    assert (stats.turns, stats.skipped) == (6, 4)  # iter_turns reads the same entries


def test_a_torn_live_tail_waits_for_its_newline_and_a_rotated_one_counts(tmp_path):
    log = new_log(tmp_path)
    log.append(turn(0))
    live = log.folder(THREAD) / "log.jsonl"
    with open(live, "ab") as handle:
        handle.write(json.dumps(turn(1).to_dict()).encode()[:30])  # a writer died mid-line
    page = log.page(THREAD)
    assert (page.total, page.skipped, [t.text for t in page.turns]) == (1, 0, ["turn 0"])
    log.append(turn(2))  # closes the fragment: it becomes a damaged entry of its own
    page = log.page(THREAD)
    assert (page.total, page.skipped, [t.text for t in page.turns]) == (3, 1, ["turn 0", "turn 2"])
    with open(live, "ab") as handle:
        handle.write(b'{"thread": "p+q", "spea')
    assert log.page(THREAD).total == 3
    rotate(log, 1)  # the torn tail of a rotated segment can no longer be closed: it counts
    log.append(turn(3))
    page = log.page(THREAD, 1, 10)
    assert (page.total, page.skipped, [t.text for t in page.turns]) == (5, 2, ["turn 0", "turn 2", "turn 3"])
    assert page.turns == naive_page(log.segments(THREAD), 1, 10)[3]


def test_pages_follow_a_growing_live_segment_across_checkpoints(tmp_path):
    log = new_log(tmp_path)
    index = PageIndex(log.segments, stable=log.lock, chunk=50)  # a checkpoint every 50 bytes: every append crosses some
    log.append(turn(0))
    assert index.page(THREAD).total == 1
    for i in range(1, 120):
        log.append(turn(i, "x" * (i % 37) + f" turn {i}"))
        if i % 7 == 0:
            with open(log.folder(THREAD) / "log.jsonl", "ab") as handle:
                handle.write(b"not json\n")
        paths = log.segments(THREAD)
        for page in (None, 1, -2):
            if page == -2 and index.page(THREAD, None, 9).pages < 2:
                continue
            assert as_tuple(index.page(THREAD, page, 9)) == naive_page(paths, page, 9)
            assert as_tuple(log.page(THREAD, page, 9)) == naive_page(paths, page, 9)


def test_pages_span_real_rotations_and_pruning(tmp_path):
    log = new_log(tmp_path, 1500)
    index = PageIndex(log.segments, stable=log.lock, chunk=64)
    for i in range(150):
        log.append(turn(i))
        if i % 40 == 39:  # read between rotations: cached checkpoints meet renamed segments
            assert index.page(THREAD, 1, 30).turns == [turn(j) for j in range(30)]
    paths = log.segments(THREAD)
    assert len(paths) > 5
    for page in range(1, 6):
        assert as_tuple(index.page(THREAD, page, 30)) == naive_page(paths, page, 30)
        assert as_tuple(log.page(THREAD, page, 30)) == naive_page(paths, page, 30)
    paths[0].unlink()  # pruned: the oldest entries are gone, the rest move up
    paths = log.segments(THREAD)
    for page in (1, None):
        assert as_tuple(index.page(THREAD, page, 30)) == naive_page(paths, page, 30)
    assert index.total(THREAD) == len(naive_entries(paths)) == log.entries(THREAD)


def test_a_rewritten_segment_is_counted_again(tmp_path):
    log = new_log(tmp_path)
    index = PageIndex(log.segments, stable=log.lock, chunk=32)
    for i in range(20):
        log.append(turn(i))
    assert index.page(THREAD, 1, 5).total == 20
    live = log.folder(THREAD) / "log.jsonl"
    kept = [line for j, line in enumerate(live.read_bytes().splitlines(keepends=True)) if j != 3]
    with open(live, "r+b") as handle:  # same inode, a middle line removed, then more appended than removed
        handle.truncate(0)
        handle.write(b"".join(kept))
    for i in range(20, 24):
        log.append(turn(i))
    assert as_tuple(index.page(THREAD, 1, 5)) == naive_page([live], 1, 5)
    assert index.page(THREAD, 1, 5).turns[3] == turn(4)
    # same size, newlines moved, first and last bytes unchanged: the new mtime gives it away
    data = bytearray(live.read_bytes())
    cut = data.index(b"\n", 200)
    data[cut] = ord(" ")
    data[cut - 3] = ord("\n")
    stamp = live.stat().st_mtime_ns
    live.write_bytes(bytes(data))
    os.utime(live, ns=(stamp + 10_000_000, stamp + 10_000_000))
    assert as_tuple(index.page(THREAD, 1, 5)) == naive_page([live], 1, 5)


def test_bad_requests_are_refused(tmp_path):
    log = new_log(tmp_path)
    log.append(turn(0))
    with pytest.raises(InvalidInput):
        log.page(THREAD, 2, 50)
    with pytest.raises(InvalidInput):
        log.page(THREAD, 0, 50)
    for size in (0, 10001, True, "5"):
        with pytest.raises(InvalidInput):
            log.page(THREAD, 1, size)
    with pytest.raises(InvalidInput):
        log.page(THREAD, "1", 50)
    with pytest.raises(NotFound):
        log.page("nobody+here", 1, 50)
    with pytest.raises(InvalidInput):
        log.page("../escape", 1, 50)
    assert log.entries("nobody+here") == 0


def test_a_log_rotating_under_every_read_is_read_once_more_under_its_rotation_lock(tmp_path):
    """Optimistic reads give way to one locked read: a page is never refused for a busy writer."""
    import contextlib

    log = new_log(tmp_path)
    for i in range(12):
        log.append(turn(i))
    held, seq, locked_reads = [False], [0], []

    def rotating_segments(thread):  # a writer that rotates between any two listings, unless locked out
        if not held[0]:
            seq[0] += 1
            log.append(turn(100 + seq[0]))
            rotate(log, seq[0])
        return log.segments(thread)

    @contextlib.contextmanager
    def stable(thread):
        held[0] = True
        locked_reads.append(thread)
        try:
            yield
        finally:
            held[0] = False

    page = PageIndex(rotating_segments, stable=stable, chunk=40).page(THREAD, 1, 5)
    assert locked_reads == [THREAD]
    assert [t.text for t in page.turns] == [f"turn {i}" for i in range(5)] and page.numbers == [1, 2, 3, 4, 5]
    assert as_tuple(page) == naive_page(log.segments(THREAD), 1, 5)


def test_pages_stay_whole_while_a_writer_appends_and_rotates(tmp_path):
    """Every page read during appends and rotations holds exactly its turns, in order."""
    writer = new_log(tmp_path, 3000)
    reader = new_log(tmp_path)
    writer.append(turn(0))
    done = threading.Event()

    def write():
        try:
            for i in range(1, 600):
                writer.append(turn(i))
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    checked = 0
    while not done.is_set() or checked < 20:
        page = reader.page(THREAD, None, 25)
        start = (page.page - 1) * 25
        assert page.skipped == 0 and page.turns == [turn(start + j) for j in range(len(page.turns))]
        assert len(page.turns) == page.total - start
        middle = reader.page(THREAD, max(1, page.page // 2), 25)
        assert middle.turns == [turn((middle.page - 1) * 25 + j) for j in range(25)] or middle.page == middle.pages
        checked += 1
    thread.join(timeout=60)
    assert reader.page(THREAD, 1, 1000).turns == [turn(i) for i in range(600)]


# -- property: the index equals a naive full read, whatever the log holds --------------------------------
_raw_line = st.binary(max_size=120).map(lambda b: b.replace(b"\n", b""))
_op = st.one_of(
    st.tuples(st.just("turn"), st.text(max_size=300)),                          # texts may hold newlines (escaped)
    st.tuples(st.just("raw"), _raw_line.map(lambda b: b + b"\n")),              # a foreign or blank line
    st.tuples(st.just("torn"), _raw_line),                                      # a fragment without its newline
    st.tuples(st.just("rotate"), st.none()),
    st.tuples(st.just("read"), st.tuples(st.one_of(st.none(), st.integers(-4, 6)), st.integers(1, 12))),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_op, min_size=1, max_size=40), chunk=st.integers(1, 300))
def test_pages_equal_a_naive_full_read(ops, chunk):
    with tempfile.TemporaryDirectory() as tmp:
        log = new_log(Path(tmp))
        index = PageIndex(log.segments, stable=log.lock, chunk=chunk)
        folder = log.folder(THREAD)
        folder.mkdir(parents=True)
        (folder / "log.jsonl").touch()
        seq = 0
        for n, (kind, arg) in enumerate(ops + [("read", (None, 5))]):
            if kind == "turn":
                log.append(turn(n, arg))
            elif kind in ("raw", "torn"):
                with open(folder / "log.jsonl", "ab") as handle:
                    handle.write(arg)
            elif kind == "rotate":
                if (folder / "log.jsonl").exists():
                    seq += 1
                    rotate(log, seq)
            else:
                page, size = arg
                paths = log.segments(THREAD)
                if not paths:
                    with pytest.raises(NotFound):
                        index.page(THREAD, page, size)
                    continue
                pages = max(1, -(-len(naive_entries(paths)) // size))
                number = pages if page is None else (pages + 1 + page if page < 0 else page)
                if not 1 <= number <= pages:
                    with pytest.raises(InvalidInput):
                        index.page(THREAD, page, size)
                    continue
                expected = naive_page(paths, page, size)
                assert as_tuple(index.page(THREAD, page, size)) == expected
                assert as_tuple(log.page(THREAD, page, size)) == expected
        if log.segments(THREAD):  # reading every page gives what iter_turns reads
            size = 4
            all_pages = [log.page(THREAD, p, size) for p in range(1, log.page(THREAD, None, size).pages + 1)]
            stats = ReadStats()
            assert [t for p in all_pages for t in p.turns] == list(log.iter_turns(THREAD, stats))
            assert sum(p.skipped for p in all_pages) == stats.skipped
            assert all_pages[0].total == stats.turns + stats.skipped


# -- one numbering for every surface ---------------------------------------------------------------------
def _web_page(client, thread: str, page: int) -> tuple[str, list[str]]:
    text = client.get(f"/threads/{thread}?page={page}").text
    shown = re.search(r"page (\d+) of (\d+)", text).group(0)
    return shown, [html.unescape(t) for t in re.findall(r'<div class="text">(.*?)</div>', text, re.S)], \
        [int(n) for n in re.findall(r'<li value="(\d+)" class="turn', text)]


def test_the_cli_and_the_web_number_pages_alike(brain):
    pytest.importorskip("starlette")
    pytest.importorskip("markdown_it")
    from starlette.testclient import TestClient

    from brain.web import create_app
    from brain.web.app import PAGE_SIZE

    for i in range(130):
        brain.record_turn(None, "alice" if i % 2 else "bob", f"turn {i} <b>&</b>", to="bob" if i % 2 else "alice")
        if i in (10, 60, 61):  # damaged lines early on: they shift what follows by one place each
            live = brain.conversations.log.segments(brain.thread_between("alice", "bob"))[-1]
            with open(live, "ab") as handle:
                handle.write(b"{damaged\n")
    thread = brain.thread_between("alice", "bob")
    with TestClient(create_app(brain, warm=False), base_url="http://127.0.0.1:8766") as client:
        for page in (1, 2, 3):
            out = subprocess.run([sys.executable, "-m", "brain", "log", thread, "--page", str(page), "--size",
                                  str(PAGE_SIZE), "--json"], cwd=brain.repo, capture_output=True, text=True,
                                 timeout=60)
            assert out.returncode == 0, out.stderr
            cli = json.loads(out.stdout)
            shown, texts, numbers = _web_page(client, thread, page)
            assert shown == f"page {cli['page']} of {cli['pages']}" == f"page {page} of 3"
            assert texts == [t["text"] for t in cli["turns"]]
            assert numbers == [t["entry"] for t in cli["turns"]]  # the viewer numbers turns as their entries
            expected = naive_page(brain.conversations.log.segments(thread), page, PAGE_SIZE)
            assert (cli["total"], cli["skipped"], len(texts)) == (133, expected[4], len(expected[3]))
    assert texts[-1] == "turn 129 <b>&</b>" and cli["skipped"] == 0
