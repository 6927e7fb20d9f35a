"""An append that does not complete fails and leaves the file as it was (brain.appendonly).

The file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored as a shell with `ulimit -f` does) stands
in for a full disk: ``write()`` writes a prefix, then fails with EFBIG. Every run is a real
subprocess with that limit; the parent then reads the files back."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import textwrap

TIMEOUT = 120


def limited(limit: int):
    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


def run_limited(cwd, limit: int, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=cwd, input=input, capture_output=True,
                          timeout=TIMEOUT, preexec_fn=limited(limit))


def test_record_turn_past_the_file_size_limit_fails_and_leaves_the_log_as_it_was(brain, repo):
    brain.record_turn("a+b", "a", "the first turn", to="b")
    log = brain.conversations_dir / "a+b" / "log.jsonl"
    before = log.read_bytes()
    proc = run_limited(repo, len(before) + 100, "record-turn", "a+b", "--speaker", "b", "--to", "a", "--json",
                       input=b"x" * 5000)
    assert proc.returncode == 10, proc.stderr[-2000:]
    error = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    assert error["error"] == "incomplete_write" and error["expected"] > error["wrote"] >= 0
    assert error["reason"] == "EFBIG"
    assert b"recorded" not in proc.stdout
    assert log.read_bytes() == before  # no torn line left
    page = brain.conversations.log.page("a+b")
    assert [t.text for t in page.turns] == ["the first turn"] and page.skipped == 0
    again = subprocess.run([sys.executable, "-m", "brain", "record-turn", "a+b", "--speaker", "b", "--text", "ok",
                            "--json"], cwd=repo, capture_output=True, timeout=TIMEOUT)
    assert again.returncode == 0 and json.loads(again.stdout)["turns"] == 2


APPEND = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from brain.appendonly import append_line
    from brain.errors import IncompleteWrite
    try:
        append_line(Path(sys.argv[1]), b"y" * int(sys.argv[2]) + b"\\n")
    except IncompleteWrite as exc:
        print(json.dumps(exc.to_dict()))
        sys.exit(exc.exit_code)
""")


def test_append_line_past_the_limit_cuts_back_and_raises(tmp_path):
    path = tmp_path / "reports.jsonl"
    path.write_bytes(b'{"at": 1}\n')
    proc = subprocess.run([sys.executable, "-c", APPEND, str(path), "4000"], capture_output=True, timeout=TIMEOUT,
                          preexec_fn=limited(1000))
    assert proc.returncode == 10, proc.stderr
    assert json.loads(proc.stdout)["wrote"] == 1000 - 10
    assert path.read_bytes() == b'{"at": 1}\n'


def test_boot_record_past_the_limit_fails_and_leaves_boots_jsonl_as_it_was(brain, repo):
    brain.boot()
    boots = brain.runtime / "boots.jsonl"
    before = boots.read_bytes()
    proc = run_limited(repo, len(before) + 20, "boot", "--json")
    assert proc.returncode == 10, proc.stderr[-2000:]
    assert json.loads(proc.stderr.decode().strip().splitlines()[-1])["error"] == "incomplete_write"
    assert boots.read_bytes() == before


def test_report_done_summary_past_the_limit_fails_and_leaves_reports_as_they_were(brain, repo):
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    brain.map()
    brain.report_done("pkg", summary="first")
    reports = brain.runtime / "reports.jsonl"
    before = reports.read_bytes()
    proc = run_limited(repo, len(before) + 20, "report-done", "--module", "pkg", "--summary", "s" * 500, "--json")
    assert proc.returncode == 10, proc.stderr[-2000:]
    assert json.loads(proc.stderr.decode().strip().splitlines()[-1])["error"] == "incomplete_write"
    assert reports.read_bytes() == before
