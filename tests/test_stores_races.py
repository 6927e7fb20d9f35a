"""Counters and ids that concurrent writers could collide on (issue 20, variants of the decision race):
twelve real processes released together on a pipe barrier (tests/together.py) for each."""

from __future__ import annotations

import json
import os

import pytest

from together import run_together

WRITERS = 12


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_env(request):
    if request.param == "sqlite":
        yield {}
        return
    from brain.backends.testing import isolated_postgres

    with isolated_postgres(request.getfixturevalue("postgres_url")) as isolated:
        yield {"BRAIN_BACKEND": isolated}


def _ok(results):
    assert [r.returncode for r in results] == [0] * len(results), [r.stderr for r in results if r.returncode]
    return [json.loads(r.stdout) for r in results]


def test_twelve_sessions_of_one_role_started_in_one_minute_get_twelve_ids(brain, repo, backend_env):
    out = _ok(run_together([["-m", "brain", "session", "start", "--role", "build", "--json"]] * WRITERS, cwd=repo,
                           env=backend_env))
    ids = [o["session"] for o in out]
    assert len(set(ids)) == WRITERS  # `build`, `build.2` ... `build.12`: no two share an id


def test_twelve_turns_recorded_at_once_in_one_thread_are_all_logged_and_folded(brain, repo):
    _ok(run_together([["-m", "brain", "record-turn", "--speaker", "me", "--to", "bob", "--text", f"turn {n}",
                       "--json"] for n in range(WRITERS)], cwd=repo))
    thread = brain.thread_between("me", "bob")
    turns = [json.loads(line) for line in (brain.conversations_dir / thread / "log.jsonl").read_text()
             .splitlines()]
    assert sorted(t["text"] for t in turns) == sorted(f"turn {n}" for n in range(WRITERS))
    assert brain.conversations.state(thread).turns == WRITERS


def test_one_transcript_imported_by_twelve_processes_at_once_is_imported_once(brain, repo, tmp_path):
    from brain.log.samples import Call, Task, claude_lines

    tasks = [Task(f"prompt {n}", [Call(1000, f"answer {n}")]) for n in range(3)]
    transcript = tmp_path / "cl-9.jsonl"
    transcript.write_text("\n".join(claude_lines("cl-9", str(repo), 1.7e9, tasks)) + "\n")
    out = _ok(run_together([["-m", "brain", "import-turns", str(transcript), "--person", "me", "--json"]] * WRITERS,
                           cwd=repo))
    thread = out[0]["thread"]
    assert sum(o["turns"] for o in out) == 6  # three prompts and three answers, once
    lines = [line for segment in brain.conversations.log.segments(thread) for line in segment.read_text().splitlines()]
    assert len(lines) == 6 and brain.conversations.state(thread).turns == 6


def test_twelve_tokens_created_at_once_are_all_kept(brain, repo):
    _ok(run_together([["-m", "brain", "token", "create", f"agent{n}", "--json"] for n in range(WRITERS)], cwd=repo))
    assert {r.name for r in brain.tokens.list()} == {f"agent{n}" for n in range(WRITERS)}
    assert os.stat(brain.runtime / "tokens.json").st_mode & 0o777 == 0o600


def test_hooks_of_one_claude_session_fired_at_once_import_its_transcript_once(brain, repo, tmp_path):
    from brain.log.samples import Call, Task, claude_lines

    tasks = [Task(f"prompt {n}", [Call(1000, f"answer {n}")]) for n in range(3)]
    transcript = tmp_path / "cl-7.jsonl"
    transcript.write_text("\n".join(claude_lines("cl-7", str(repo), 1.7e9, tasks)) + "\n")
    payload = json.dumps({"session_id": "cl-7", "transcript_path": str(transcript), "cwd": str(repo)})
    stdin = tmp_path / "hook.json"
    stdin.write_text(payload)
    script = ("import sys, subprocess; sys.exit(subprocess.run([sys.executable, '-m', 'brain', 'hook', 'claude-code', "
              f"'stop'], stdin=open({str(stdin)!r})).returncode)")
    results = run_together([["-c", script]] * WRITERS, cwd=repo)
    assert [r.returncode for r in results] == [0] * WRITERS, [r.stderr for r in results]
    threads = [p.name for p in brain.conversations_dir.iterdir() if p.is_dir()]
    assert len(threads) == 1
    assert brain.conversations.state(threads[0]).turns == 6


def test_twelve_create_only_writes_of_one_note_let_exactly_one_win(brain, repo, tmp_path):
    from brain.errors import Conflict

    for n in range(WRITERS):
        (tmp_path / f"text{n}").write_text(f"writer {n}\n")
    results = run_together([["-m", "brain", "write", "note", "claimed", "--expect", "", "-f", str(tmp_path / f"text{n}"),
                             "--json"] for n in range(WRITERS)], cwd=repo)
    codes = [r.returncode for r in results]
    assert sorted(codes) == [0] + [Conflict.exit_code] * (WRITERS - 1), [r.stderr for r in results]
    assert (brain.dir / "notes/claimed.md").read_text() == f"writer {codes.index(0)}\n"


def test_twelve_decisions_in_a_folder_outside_brain_get_twelve_numbers(brain, repo):
    (brain.dir / "brain.yml").write_text("version: 1\ndecisions:\n  dir: docs/adr\n")
    out = _ok(run_together([["-m", "brain", "decision", "new", f"Choice {n}", "--json"] for n in range(WRITERS)],
                           cwd=repo))
    assert sorted(o["number"] for o in out) == list(range(1, WRITERS + 1))
    assert len(list((repo / "docs/adr").glob("*.md"))) == WRITERS
