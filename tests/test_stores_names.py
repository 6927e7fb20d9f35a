"""Names that become files, folders or ids never hold a secret; the debug log redacts (issue 20)."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys

import pytest

from brain.errors import InvalidInput

GITHUB = "ghp_" + "a1B2" * 9
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def cli(repo, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=60, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


@pytest.mark.parametrize("args, field", [
    (("session", "start", "--role", GITHUB), "role"),
    (("workstate", "--set", GITHUB, "--intent", "x"), "key"),
    (("record-turn", "--speaker", GITHUB, "--to", "bob", "--text", "x"), "speaker"),
    (("record-turn", "--speaker", "me", "--to", AWS, "--text", "x"), "to"),
    (("record-turn", "--speaker", "me", "--to", "bob", "--ref", GITHUB, "--text", "x"), "ref"),
    (("token", "create", GITHUB), "name"),
    (("token", "create", "bob", "--machine", AWS), "machine"),
    (("token", "create", "bob", "--session-prefix", f"sess-{GITHUB}"), "session_prefix"),
    (("mv", "notes/a.md", f"notes/x-{GITHUB}.md"), "path"),
])
def test_a_name_holding_a_secret_is_refused_and_nothing_is_written(brain, repo, args, field):
    brain.write("notes/a.md", "a")
    before = {p.relative_to(brain.dir).as_posix() for p in brain.dir.rglob("*")}
    result = cli(repo, *args, "--json")
    assert result.returncode == InvalidInput.exit_code, result.stderr
    error = json.loads(result.stdout or result.stderr)
    assert error["error"] == "invalid_input" and error["field"] == field
    assert GITHUB not in result.stdout + result.stderr and AWS not in result.stdout + result.stderr
    after = {p.relative_to(brain.dir).as_posix() for p in brain.dir.rglob("*")}
    assert not any(GITHUB in p or AWS in p for p in after)
    for path in brain.runtime.rglob("*"):
        if path.is_file():
            assert GITHUB.encode() not in path.read_bytes() and AWS.encode() not in path.read_bytes()
    assert "notes/a.md" in after and not (after - before - {p for p in after if p.startswith("runtime/")})


def test_report_done_summary_is_redacted_in_reports_jsonl_and_in_the_result(brain, repo):
    (repo / "pkg").mkdir()
    (repo / "pkg/__init__.py").write_text("def f():\n    return 1\n")
    brain.map()
    summary = f"used {GITHUB}, {AWS} and password=\"correct-horse-battery\""
    result = cli(repo, "report-done", "--module", "pkg", "--summary", summary, "--json")
    assert result.returncode == 0, result.stderr
    echoed = json.loads(result.stdout)["summary"]
    stored = json.loads((brain.runtime / "reports.jsonl").read_text().splitlines()[-1])["summary"]
    for text in (echoed, stored):
        assert GITHUB not in text and AWS not in text and "correct-horse-battery" not in text
        assert text.count("[REDACTED:") == 3


def test_the_debug_log_file_is_redacted_and_private(tmp_path):
    from brain.logs import configure_logging

    target = tmp_path / "brain.log"
    root = logging.getLogger("brain")
    saved = root.handlers[:], root.level, root.propagate
    old = os.umask(0o022)
    try:
        configure_logging(env={"BRAIN_LOG": f"debug:{target}"})
        root.info("401 %s %s: %s", "POST", f"/mcp?access_token={GITHUB}", "no token")
        try:
            raise ValueError(f"key {AWS}")
        except ValueError:
            root.exception("failed")
        for handler in root.handlers:
            handler.flush()
    finally:
        os.umask(old)
        for handler in root.handlers:
            handler.close()
        root.handlers[:], root.level, root.propagate = saved
    text = target.read_text()
    assert "401 POST" in text and "ValueError" in text
    assert GITHUB not in text and AWS not in text
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_file_already_named_with_a_secret_can_still_be_moved_away_or_removed(brain, repo):
    bad = brain.dir / "notes" / f"x-{GITHUB}.md"
    bad.write_text("made by hand\n")
    assert cli(repo, "mv", f"notes/x-{GITHUB}.md", "notes/renamed.md").returncode == 0
    assert (brain.dir / "notes/renamed.md").read_text() == "made by hand\n" and not bad.exists()
    bad.write_text("again\n")
    assert cli(repo, "rm", f"notes/x-{GITHUB}.md").returncode == 0 and not bad.exists()


def test_a_claude_hook_with_key_shaped_ids_and_paths_keeps_no_secret_and_imports_once(brain, repo, tmp_path):
    from brain.log.samples import Call, Task, claude_lines

    folder = tmp_path / f"proj-{GITHUB}"
    folder.mkdir()
    transcript = folder / "s.jsonl"
    transcript.write_text("\n".join(claude_lines("s", str(repo), 1.7e9, [Task("hello", [Call(1000, "hi")])])) + "\n")
    payload = json.dumps({"session_id": AWS, "transcript_path": str(transcript), "cwd": str(repo)})
    for _ in range(2):  # the second Stop finds its offset again, though the stored path is redacted
        assert cli(repo, "hook", "claude-code", "stop", stdin=payload).returncode == 0
    names = [p.name for p in brain.runtime.rglob("*")]
    assert not any(GITHUB in n or AWS in n for n in names), names
    for path in brain.runtime.rglob("*"):
        if path.is_file():
            assert GITHUB.encode() not in path.read_bytes() and AWS.encode() not in path.read_bytes(), path
    threads = [p for p in brain.conversations_dir.iterdir() if p.is_dir()]
    assert [brain.conversations.state(t.name).turns for t in threads] == [2]
