"""Every store redacts on its write path (issue 20), checked as a property over the registry of stores.

A known secret (a GitHub token, an AWS key, a password) goes through every public write path --
the CLI (real subprocesses), the library and the MCP server (the SDK client against `brain serve`)
-- then every file under `.brain/` and `$BRAIN_HOME` (contents and names) and every database row is
scanned for it. Every file under `runtime/` must belong to a store of ``brain.security.stores``, and
every store must be written by this test, so a new store cannot skip redaction unnoticed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.security.stores import STORES, store_of

BOUND = 60
GITHUB = "ghp_" + "a1B2" * 9
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
PASSWORD = "correct-horse-battery"
SECRETS = (GITHUB, AWS, PASSWORD)
PAYLOAD = f"deploy with {GITHUB} and {AWS} and password=\"{PASSWORD}\" done"


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_env(request):
    if request.param == "sqlite":
        yield {}
        return
    from brain.backends.testing import isolated_postgres

    url = request.getfixturevalue("postgres_url")
    with isolated_postgres(url) as isolated:
        yield {"BRAIN_BACKEND": isolated}


def run(repo: Path, *args: str, env: dict, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                            timeout=BOUND, env={**os.environ, **env}, input=stdin,
                            stdin=None if stdin is not None else subprocess.DEVNULL)
    if ok:
        assert result.returncode == 0, (args, result.stderr)
    return result


def _session(repo, role, env) -> str:
    return json.loads(run(repo, "session", "start", "--role", role, "--json", env=env).stdout)["session"]


def write_through_the_cli(brain, repo: Path, env: dict, tmp_path: Path) -> None:
    """Every CLI write path, each given the secret."""
    (repo / "pkg").mkdir()
    (repo / "pkg/__init__.py").write_text("def pay(amount):\n    return amount\n")
    run(repo, "write", "note", "deploy", env=env, stdin=PAYLOAD)
    run(repo, "write", "note", "mine", "--layer", "personal", env=env, stdin=PAYLOAD)
    build, review = _session(repo, "build", env), _session(repo, "review", env)
    run(repo, "claim", "--session", build, f"notes/{GITHUB} {AWS}.md", env=env)
    run(repo, "signal", "--session", build, "--kind", AWS, review, PAYLOAD, env=env)
    run(repo, "checkpoint", "--session", build, "--step", PAYLOAD, "--note", PAYLOAD, env=env)
    run(repo, "workstate", "--set", build, "--intent", PAYLOAD, "--progress", PAYLOAD, "--delegation", PAYLOAD,
        env=env)
    run(repo, "release", "--session", build, "--item", f"notes/{GITHUB} {AWS}.md", env=env)
    run(repo, "record-turn", "--speaker", "me", "--to", build, "--text", PAYLOAD, env=env)
    run(repo, "boot", "--task", PAYLOAD, "--module", GITHUB, "--session", build, env=env)
    run(repo, "map", env=env)
    run(repo, "report-done", "--module", "pkg", "--summary", PAYLOAD, env=env)
    body = tmp_path / "body.md"
    body.write_text(PAYLOAD + "\n")
    run(repo, "decision", "new", f"Rotate {GITHUB}", "--module", AWS, "-f", str(body), env=env)
    run(repo, "token", "create", "alice", env=env)
    run(repo, "index", env=env)
    from brain.log.samples import Call, Task, claude_lines

    transcript = tmp_path / "cl-1.jsonl"
    transcript.write_text("\n".join(claude_lines("cl-1", str(repo), 1.7e9, [Task(PAYLOAD, [Call(1000, PAYLOAD)])])) + "\n")
    run(repo, "import-turns", str(transcript), "--person", "me", env=env)
    run(repo, "install", "claude-code", env=env)
    hook = {"session_id": "abc", "source": PAYLOAD, "transcript_path": str(transcript), "cwd": str(repo)}
    run(repo, "hook", "claude-code", "session-start", env=env, stdin=json.dumps(hook))
    run(repo, "hook", "claude-code", "stop", env=env, stdin=json.dumps(hook))
    run(repo, "session", "end", build, env=env)
    run(repo, "doctor", env=env, ok=False)  # warnings are fine; its probe must leave nothing


def write_through_the_library(brain) -> None:
    sid = brain.coord.start_session("lib").id
    other = brain.coord.start_session("lib2").id
    ticket = brain.coord.arm(sid, other, PAYLOAD).ticket  # an ask (question) and its reply (answer), not waited on
    brain.coord.reply(other, ticket, PAYLOAD)
    brain.coord.signal(sid, sid, PAYLOAD, kind="note")
    brain.livestate.set(sid, intent=PAYLOAD)
    brain.record_turn(None, "me", PAYLOAD, to=sid)
    brain.write("notes/lib.md", PAYLOAD)
    brain.edit("notes/lib.md", "append", value=PAYLOAD)
    brain.remember(f"lunch key {AWS} password={PASSWORD}")  # no note is about lunch: the inbox
    brain.record_use("read", ["notes/lib.md"])
    brain.report_done("pkg", summary=PAYLOAD)


MCP_TOOLS = ("brain_write", "brain_report_done", "brain_claim", "brain_checkpoint", "brain_boot", "brain_signal")


def write_through_mcp(repo: Path, env: dict) -> list:
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, with_client

    async def body(client):
        results = [await client.call_tool("brain_write", {"path": "notes/mcp.md", "text": PAYLOAD}),
                   await client.call_tool("brain_report_done", {"module": "pkg", "summary": PAYLOAD}),
                   await client.call_tool("brain_claim", {"item": f"notes/{GITHUB} x.md"}),
                   await client.call_tool("brain_checkpoint", {"step": PAYLOAD, "note": PAYLOAD}),
                   await client.call_tool("brain_boot", {"task": PAYLOAD, "module": GITHUB}),
                   await client.call_tool("brain_signal", {"target": f"{repo.name}@testbox", "text": PAYLOAD,
                                                           "kind": AWS})]
        return results

    return with_client(stdio_params(repo, **env), body)


def _files(root: Path):
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            yield Path(folder) / name


def _rows(brain, env) -> list[str]:
    """Every row of every table of the coordination store, as text."""
    if env.get("BRAIN_BACKEND"):
        import psycopg

        from brain.backends.postgres import PostgresBackend  # noqa: F401 - the URL carries the schema

        out = []
        with psycopg.connect(env["BRAIN_BACKEND"]) as conn:
            tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                                 "WHERE table_schema = current_schema()")]
            for table in tables:
                out += [f"{table}: {row!r}" for row in conn.execute(f'SELECT * FROM "{table}"')]
        return out
    import sqlite3

    db = sqlite3.connect(brain.store_dir / "brain.db")  # one store per repository, in its git dir
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [f"{t}: {row!r}" for t in tables for row in db.execute(f'SELECT * FROM "{t}"')]
    finally:
        db.close()


def test_a_secret_sent_through_every_write_path_reaches_no_store(brain, repo, brain_home, backend_env, tmp_path):
    write_through_the_cli(brain, repo, backend_env, tmp_path)
    import brain as brainlib

    lib = brainlib.open(repo, env={**os.environ, **backend_env})
    write_through_the_library(lib)
    for tool, result in zip(MCP_TOOLS, write_through_mcp(repo, backend_env)):
        assert not result.is_error, (tool, result)
        echoed = json.dumps(result.structured_content or {}) + str(result.content)
        assert not any(s in echoed for s in SECRETS), (tool, echoed[:2000])

    leaks, unknown, present = [], [], set()
    # the coordination store of the repository (shared by its worktrees) lives in the git dir: scanned as runtime/
    for root_name, root in (("brain", brain.dir), ("home", brain_home), ("store", brain.store_dir)):
        for path in _files(root):
            rel = path.relative_to(root).as_posix()
            if root_name == "store":
                rel = f"runtime/{rel}"
            if any(s in rel for s in SECRETS):
                leaks.append(f"name: {path}")
            if path.is_file() and not path.is_symlink() and any(s.encode() in path.read_bytes() for s in SECRETS):
                leaks.append(f"content: {path}")
            if not path.is_file():
                continue
            inside = ("runtime", rel.removeprefix("runtime/")) if rel.startswith("runtime/") else (root_name, rel)
            store = store_of(*inside)
            if store is None:
                unknown.append(rel)
            else:
                present.add(store.name)
    all_rows = _rows(brain, backend_env)
    if backend_env and all_rows:
        present.add("coordination")  # PostgreSQL: the store is the schema's rows, not a file
    rows = [row for row in all_rows if any(s in row for s in SECRETS)]
    assert not leaks and not rows, (leaks, rows[:5])
    assert not unknown, f"files in runtime/ that no store of brain.security.stores registers: {unknown}"
    assert present == {s.name for s in STORES}  # each store was really written, and scanned
    assert (brain.dir / "notes/deploy.md").read_text().count("[REDACTED:") == 3  # the secret was sent, and taken out
