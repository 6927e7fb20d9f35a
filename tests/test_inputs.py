"""Huge inputs are refused while they are read, in bounded memory (brain.inputs).

Every CLI run here is a real ``brain`` subprocess under an address-space cap
(RLIMIT_AS): reading a 3 GB sparse file, /dev/zero, an endless standard input or a FIFO
whole would die with MemoryError (or run forever); bounded reading refuses with the typed
too_large error (exit code 2) and writes nothing."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

MEMORY_CAP = 512 << 20  # far above what brain needs, far below the inputs below
HUGE = 3 * (1 << 30)  # a whole input (refused unread)
LONG_LINE = 640 << 20  # one line in a file that is read through (about a second to read)
TIMEOUT = 120


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(cwd: Path, *args: str, stdin=None, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, stdin=stdin, input=input,
                          capture_output=True, timeout=TIMEOUT, preexec_fn=_capped)


def error_of(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stderr.decode().strip().splitlines()[-1])


def sparse(path: Path, size: int = HUGE, head: bytes = b"", tail: bytes = b"") -> Path:
    """A file of ``size`` bytes that takes no disk: ``head``, zeros, then ``tail``."""
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)
        if tail:
            handle.seek(size)
            handle.write(tail)
    return path


# -- the helper --------------------------------------------------------------------------------------------------------
def test_read_bounded_stops_at_limit_plus_one(tmp_path):
    from brain.errors import InputTooLarge, InvalidInput
    from brain.inputs import read_bounded

    with open("/dev/zero", "rb") as zero:
        with pytest.raises(InputTooLarge) as caught:
            read_bounded(zero, 1000, "text")
        assert zero.tell() <= 1001  # byte limit + 1 was the last one read
    assert caught.value.limit == 1000 and caught.value.size is None and caught.value.kind == "too_large"
    assert isinstance(caught.value, InvalidInput) and caught.value.exit_code == 2
    path = tmp_path / "exact"
    path.write_bytes(b"x" * 1000)
    with open(path, "rb") as handle:
        assert read_bounded(handle, 1000, "text") == b"x" * 1000


def test_bounded_lines_drops_an_overlong_line_without_holding_it(tmp_path):
    from brain.inputs import bounded_lines

    path = tmp_path / "lines"
    path.write_bytes(b"a\n" + b"b" * 5000 + b"\nc\n" + b"d" * 5000)
    with open(path, "rb") as handle:
        got = list(bounded_lines(handle, 100))
    assert got == [(b"a\n", 2, True), (None, 5001, True), (b"c\n", 2, True), (None, 5000, False)]


# -- brain write / record-turn / decision / boot -----------------------------------------------------------------------
def test_write_from_dev_zero_is_refused_in_bounded_memory(brain, repo):
    proc = run_capped(repo, "write", "note", "x", "--file", "/dev/zero", "--json")
    assert proc.returncode == 2, proc.stderr[-2000:]
    error = error_of(proc)
    assert error["error"] == "too_large" and error["limit"] == 262144 and error["setting"] == "limits.write_bytes"
    assert not (brain.dir / "notes" / "x.md").exists()


def test_write_from_a_sparse_3gb_file_is_refused_by_its_size(brain, repo, tmp_path):
    big = sparse(tmp_path / "big.md", head=b"# big\n")
    proc = run_capped(repo, "write", "note", "x", "--file", str(big), "--json")
    assert proc.returncode == 2, proc.stderr[-2000:]
    error = error_of(proc)
    assert error["error"] == "too_large" and error["size"] == HUGE
    assert not (brain.dir / "notes" / "x.md").exists()


def test_write_from_endless_standard_input_is_refused(brain, repo):
    with open("/dev/zero", "rb") as zero:
        proc = run_capped(repo, "write", "now", "--json", stdin=zero)
    assert proc.returncode == 2, proc.stderr[-2000:]
    error = error_of(proc)
    assert error["error"] == "too_large" and error["setting"] == "limits.now_bytes"


def test_write_from_a_fifo_fed_by_a_writer_thread_is_refused(brain, repo, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sent = {"bytes": 0, "error": None}

    def feed():
        try:
            with open(fifo, "wb") as handle:
                for _ in range(4096):  # 256 MB if nobody stopped reading
                    handle.write(b"y" * 65536)
                    sent["bytes"] += 65536
        except BrokenPipeError as exc:  # the reader stopped past the limit and closed its end
            sent["error"] = exc

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    proc = run_capped(repo, "write", "note", "piped", "--file", str(fifo), "--json")
    writer.join(timeout=TIMEOUT)
    assert not writer.is_alive()
    assert proc.returncode == 2 and error_of(proc)["error"] == "too_large"
    assert isinstance(sent["error"], BrokenPipeError) and sent["bytes"] < 64 * 1024 * 1024
    assert not (brain.dir / "notes" / "piped.md").exists()


def test_record_turn_from_dev_zero_is_refused_and_logs_nothing(brain, repo):
    proc = run_capped(repo, "record-turn", "a+b", "--speaker", "a", "-f", "/dev/zero", "--json")
    assert proc.returncode == 2, proc.stderr[-2000:]
    error = error_of(proc)
    assert error["error"] == "too_large" and error["setting"] is None
    assert not (brain.conversations_dir / "a+b" / "log.jsonl").exists()


@pytest.mark.parametrize("args", [["decision", "new", "Big", "--file", "/dev/zero"],
                                  ["boot", "--task-file", "/dev/zero"]])
def test_other_file_inputs_are_bounded(brain, repo, args):
    proc = run_capped(repo, *args, "--json")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert error_of(proc)["error"] == "too_large"


def test_hook_with_endless_standard_input_answers_and_exits_zero(brain, repo):
    with open("/dev/zero", "rb") as zero:
        proc = run_capped(repo, "hook", "claude-code", "stop", stdin=zero)
    assert proc.returncode == 0 and b"InputTooLarge" in proc.stderr  # a hook never breaks the client's session


# -- transcripts and logs with a planted huge line ---------------------------------------------------------------------
CLAUDE_LINE = (json.dumps({"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z",
                           "message": {"role": "user", "content": "first prompt"}}) + "\n").encode()
CLAUDE_LAST = (json.dumps({"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T00:01:00Z",
                           "message": {"role": "user", "content": "last prompt"}}) + "\n").encode()


def test_import_turns_skips_a_huge_line_in_bounded_memory(brain, repo, tmp_path):
    transcript = sparse(tmp_path / "s1.jsonl", LONG_LINE, head=CLAUDE_LINE, tail=b"\n" + CLAUDE_LAST)
    proc = run_capped(repo, "import-turns", str(transcript), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["turns"] == 2 and result["skipped"] >= 1


def test_stats_skips_a_huge_line_in_bounded_memory(repo, tmp_path):
    transcript = sparse(tmp_path / "s1.jsonl", LONG_LINE, head=CLAUDE_LINE, tail=b"\n" + CLAUDE_LAST)
    proc = run_capped(repo, "stats", str(transcript), "--no-discover", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_brain_log_skips_a_planted_huge_line(brain, repo):
    brain.record_turn("a+b", "a", "before", to="b")
    log = brain.conversations_dir / "a+b" / "log.jsonl"
    size = log.stat().st_size
    line = log.read_bytes()
    sparse(log, size + LONG_LINE, head=line, tail=b"\n" + line.replace(b"before", b"after"))
    proc = run_capped(repo, "log", "a+b", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = json.loads(proc.stdout)
    assert [t["text"] for t in page["turns"]] == ["before", "after"] and page["skipped"] == 1
    turns = [t.text for t in brain.conversations.log.iter_turns("a+b")]
    assert turns == ["before", "after"]


# -- variants: files a clone ships, request bodies --------------------------------------------------------------------
def test_map_hashes_a_huge_source_file_without_holding_it(brain, repo):
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("def small():\n    return 1\n")
    sparse(repo / "pkg" / "huge.py", LONG_LINE, head=b"def huge():\n    return 2\n")
    proc = run_capped(repo, "map", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    card = (brain.dir / "modules" / "pkg.md").read_text()
    assert "huge.py" in card and "too large" in card and "small" in card


def test_a_huge_memory_file_is_refused_by_its_size_and_skipped_by_the_index(brain, repo):
    sparse(brain.dir / "notes" / "huge.md", LONG_LINE, head=b"# Huge\n\nzeros follow\n")
    brain.write("notes/small.md", "# Small\n\nfindable words\n")
    read = run_capped(repo, "read", "notes/huge.md", "--json")
    assert read.returncode == 2, read.stderr[-2000:]
    error = error_of(read)
    assert error["error"] == "too_large" and error["size"] == LONG_LINE
    index = run_capped(repo, "index", "--json")
    assert index.returncode == 0, index.stderr[-2000:]
    found = run_capped(repo, "search", "findable", "--json")
    assert found.returncode == 0 and b"notes/small.md" in found.stdout


def test_the_web_ui_refuses_a_huge_form_body_before_reading_it(brain):
    from starlette.testclient import TestClient

    from brain.team.middleware import web_middleware
    from brain.web import create_app

    app = create_app(brain, middleware=web_middleware(brain), warm=False)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        client.get("/signals")
        response = client.post("/signals", content=b"body=" + b"x" * (5 << 20),
                               headers={"content-type": "application/x-www-form-urlencoded"})
        assert response.status_code == 413

        def chunks():  # no Content-Length: counted while it streams
            for _ in range(80):
                yield b"x" * 65536

        streamed = client.post("/signals", content=chunks(), headers={"content-type": "application/x-www-form-urlencoded"})
        assert streamed.status_code == 413
