"""The conversation log: whole lines, torn/foreign lines skipped and counted, rotation, retention, pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from brain.errors import InvalidInput, NotFound
from brain.log import ConversationLog, Turn, thread_between


def turn(i: int, thread: str = "alice+bob", at: float | None = None) -> Turn:
    return Turn(thread=thread, speaker="alice" if i % 2 else "bob", text=f"turn {i} ünïcode", at=at or time.time() + i)


def test_append_writes_one_whole_line_per_turn(tmp_path):
    log = ConversationLog(tmp_path)
    for i in range(5):
        log.append(turn(i))
    raw = (tmp_path / "alice+bob" / "log.jsonl").read_bytes()
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6
    assert [json.loads(l)["text"] for l in lines[:-1]] == [f"turn {i} ünïcode" for i in range(5)]
    assert [t.text for t in log.iter_turns("alice+bob")] == [f"turn {i} ünïcode" for i in range(5)]
    assert log.parties("alice+bob") == ["alice", "bob"]
    assert log.threads_of("alice") == ["alice+bob"]


def test_torn_and_foreign_lines_are_skipped_and_counted_and_never_swallow_the_next_turn(tmp_path):
    log = ConversationLog(tmp_path)
    log.append(turn(1))
    path = tmp_path / "alice+bob" / "log.jsonl"
    with open(path, "ab") as handle:
        handle.write(b'["a foreign", "line"]\n{"not": "a turn"}\nnot json at all\n{"at": 1, "thread": "alice+bo')  # torn
    log.append(turn(2))  # must start on a fresh line
    from brain.log.store import ReadStats

    stats = ReadStats()
    texts = [t.text for t in log.iter_turns("alice+bob", stats)]
    assert texts == ["turn 1 ünïcode", "turn 2 ünïcode"]
    assert stats.skipped == 4 and stats.turns == 2
    page = log.page("alice+bob")  # pages count lines: the damaged ones keep their place (brain.log.pages)
    assert page.total == 6 and page.skipped == 4 and [t.text for t in page.turns] == texts


def test_a_last_line_without_newline_is_not_read_until_the_next_append_closes_it(tmp_path):
    log = ConversationLog(tmp_path)
    log.append(turn(1))
    with open(tmp_path / "alice+bob" / "log.jsonl", "ab") as handle:
        handle.write(json.dumps(turn(2).to_dict()).encode())  # complete JSON, but no newline: maybe still being written
    page = log.page("alice+bob")
    assert [t.text for t in page.turns] == ["turn 1 ünïcode"] and page.skipped == 0 and page.total == 1
    assert [t.text for t in log.iter_turns("alice+bob")] == ["turn 1 ünïcode"]
    log.append(turn(3))  # starts on a fresh line, which closes the one before
    page = log.page("alice+bob")
    assert [t.text for t in page.turns] == [f"turn {i} ünïcode" for i in (1, 2, 3)] and page.skipped == 0


def test_killed_writers_never_leave_an_unreadable_log(tmp_path):
    """Writers SIGKILLed mid-stream: every line that is there is whole or skipped, never fatal."""
    script = (
        "import sys, time\n"
        "from brain.log import ConversationLog, Turn\n"
        "log = ConversationLog(sys.argv[1])\n"
        "print('ready', flush=True)\n"
        "i = 0\n"
        "while True:\n"
        "    log.append(Turn(thread='t1', speaker='w', text='x' * 5000 + str(i), at=1.0 + i)); i += 1\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE) for _ in range(3)]
    for proc in procs:
        assert proc.stdout.readline().strip() == b"ready"
    log = ConversationLog(tmp_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(1 for _ in log.iter_turns("t1")) < 200:
        pass
    for proc in procs:
        proc.kill()
        proc.wait()
    from brain.log.store import ReadStats

    stats = ReadStats()
    turns = list(log.iter_turns("t1", stats))
    assert len(turns) >= 200
    assert all(t.text.startswith("x" * 5000) for t in turns)
    assert stats.skipped <= 3  # at most one torn line per killed writer


def test_rotation_by_size_and_pages_span_segments(tmp_path):
    log = ConversationLog(tmp_path, rotate_bytes=400, rotate_seconds=0, retention_seconds=0)
    for i in range(30):
        log.append(turn(i))
    segments = log.segments("alice+bob")
    assert len(segments) > 3 and segments[-1].name == "log.jsonl"
    assert all(seg.stat().st_size < 400 + 200 for seg in segments)
    assert [t.text for t in log.iter_turns("alice+bob")] == [f"turn {i} ünïcode" for i in range(30)]
    first = log.page("alice+bob", 1, size=7)
    assert first.pages == 5 and first.total == 30 and [t.text for t in first.turns][0] == "turn 0 ünïcode"
    last = log.page("alice+bob", size=7)
    assert last.page == 5 and [t.text for t in last.turns] == ["turn 28 ünïcode", "turn 29 ünïcode"]
    assert log.page("alice+bob", -2, size=7).page == 4
    with pytest.raises(InvalidInput):
        log.page("alice+bob", 6, size=7)
    with pytest.raises(NotFound):
        log.page("nobody+here")


def test_rotation_by_age_and_retention(tmp_path):
    now = [1_000_000.0]
    log = ConversationLog(tmp_path, rotate_bytes=0, rotate_seconds=3600, retention_seconds=7200, clock=lambda: now[0])
    log.append(turn(1, at=now[0]))
    now[0] += 3700  # the live segment's first turn is now over an hour old
    log.append(turn(2, at=now[0]))
    segments = log.segments("alice+bob")
    assert len(segments) == 2
    old = segments[0]
    os.utime(old, (now[0] - 10000, now[0] - 10000))  # last written long ago
    now[0] += 3700
    log.append(turn(3, at=now[0]))  # rotates again, and prunes what is past retention
    names = [s.name for s in log.segments("alice+bob")]
    assert old.name not in names and len(names) == 2
    assert [t.text for t in log.iter_turns("alice+bob")] == ["turn 2 ünïcode", "turn 3 ünïcode"]


def test_thread_ids_are_checked_and_pairs_are_stable():
    assert thread_between("sess-b@m", "sess-a@m") == thread_between("sess-a@m", "sess-b@m") == "sess-a@m+sess-b@m"
    assert thread_between("Person Name", "claude:abc") == "Person-Name+claude-abc"
    for bad in ("../x", "", "a/b", ".hidden", "x" * 300):
        with pytest.raises(InvalidInput):
            ConversationLog("/tmp").folder(bad)


def test_listing_threads(tmp_path):
    log = ConversationLog(tmp_path)
    log.append(turn(1, thread="a+b"))
    log.append(turn(2, thread="c+d"))
    infos = {i.thread: i for i in log.threads()}
    assert set(infos) == {"a+b", "c+d"}
    assert infos["a+b"].bytes > 0 and infos["a+b"].segments == 1


def test_prune_all_applies_the_retention_to_idle_threads(tmp_path):
    now = [2_000_000.0]
    log = ConversationLog(tmp_path, rotate_bytes=1, rotate_seconds=0, retention_seconds=100, clock=lambda: now[0])
    for i in range(3):
        log.append(turn(i, thread="idle+x", at=now[0]))
    rotated = [s for s in log.segments("idle+x") if s.name != "log.jsonl"]
    assert len(rotated) == 2
    for seg in rotated:
        os.utime(seg, (now[0] - 1000, now[0] - 1000))
    assert sorted(log.prune_all()["idle+x"]) == sorted(s.name for s in rotated)
    assert [s.name for s in log.segments("idle+x")] == ["log.jsonl"]

