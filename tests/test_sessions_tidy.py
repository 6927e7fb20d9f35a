"""Sessions that stay tidy: no session from a health check, pruning after the settings' time, the boot's
defaults over MCP, per-session handoffs outside the versioned `handoffs/`, live work first on the web panel.

The simulation at the end opens and closes 200 Claude Code sessions through the real hook handler (with a
transcript each, so every session gets a thread handoff) and 200 health checks through the real MCP server
and the official SDK client, then checks the session list and `.brain/handoffs/` with git.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import anyio
import pytest

from brain.log.samples import Call, Task, claude_lines

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from brain.mcp.server import build_server  # noqa: E402

pytestmark = pytest.mark.timeout(600)


def commit_all(repo) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "brain"],
                   cwd=repo, check=True)


def health_check(brain) -> list[str]:
    """What `claude mcp list` or an Inspector call does: initialize, list the tools, disconnect."""
    async def main():
        with anyio.fail_after(60):
            async with Client(build_server(brain, transport="http")) as client:
                return [t.name for t in (await client.list_tools()).tools]

    return anyio.run(main)


def call_tools(brain, *calls: tuple[str, dict]) -> list:
    async def main():
        with anyio.fail_after(60):
            async with Client(build_server(brain, transport="http")) as client:
                return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def test_a_health_check_leaves_no_session(brain):
    assert "brain_boot" in health_check(brain)
    assert brain.coord.sessions(include_gone=True) == []


def test_brain_boot_without_arguments_boots_the_connections_own_session(brain):
    """After a compaction the agent calls brain_boot with nothing: it must see its own checkpoint."""
    checkpoint, boot = call_tools(brain, ("brain_checkpoint", {"step": "wiring the parser", "note": "next: tests"}),
                                  ("brain_boot", {}))
    assert not checkpoint.is_error and not boot.is_error
    me = checkpoint.structured_content["session"]
    assert "wiring the parser" in boot.structured_content["text"]
    assert any(s["slot"] == "checkpoint" for s in boot.structured_content["sections"]), me


def test_a_session_ids_role_selects_that_roles_profiles(brain):
    brain.write("agents/backend.md", "---\ntier: hot\nroles: [backend]\n---\nBackend rules: migrations first.\n")
    brain.write("agents/qa.md", "---\ntier: hot\nroles: [qa]\n---\nQA rules: flaky tests are bugs.\n")
    text = brain.boot(session="sess-20260101-1200-backend.2@box", record=False).text
    assert "migrations first" in text and "flaky tests" not in text
    text = brain.boot(session="sess-20260101-1200-backend@box", role="qa", record=False).text
    assert "flaky tests" in text and "migrations first" not in text  # --role still wins


@pytest.fixture(params=["sqlite", "postgresql"])
def coord(request, brain, monkeypatch):
    """The brain's coordinator on SQLite, or on PostgreSQL in its own schema."""
    if request.param == "sqlite":
        yield brain.coord
        return
    from brain.backends.testing import isolated_postgres

    import brain as brainlib

    with isolated_postgres(request.getfixturevalue("postgres_url")) as url:
        monkeypatch.setenv("BRAIN_BACKEND", url)
        yield brainlib.open(brain.repo).coord


def test_gone_sessions_are_pruned_after_the_settings_time(coord):
    idle = coord.start_session("probe")
    coord.end_session(idle.id)
    worker = coord.start_session("build")
    coord.checkpoint(worker.id, "half way")
    coord.end_session(worker.id)
    holder = coord.start_session("hold")
    coord.claim(holder.id, "src/x.py", ttl=7 * 86400)
    live = coord.start_session("live")
    now = time.time()
    coord.clock = lambda: now + 2 * 3600  # past coord.prune_idle_seconds (3600), before coord.prune_gone_seconds
    coord.heartbeat(live.id)
    assert coord.prune_sessions() == 1
    left = {s.id for s in coord.sessions(include_gone=True)}
    assert idle.id not in left and {worker.id, holder.id, live.id} <= left
    coord.clock = lambda: now + 8 * 86400
    coord.heartbeat(live.id)
    coord.prune_sessions()
    left = {s.id for s in coord.sessions(include_gone=True)}
    assert left == {holder.id, live.id}  # the holder still holds a claim (until it expires)


def test_prune_settings_are_read_and_zero_turns_a_rule_off(brain):
    # 0 lifts a limit: the machine's own file may choose it, the versioned brain.yml may not (settings ceilings)
    (brain.dir / "brain.local.yml").write_text("coord:\n  prune_idle_seconds: 0\n  prune_gone_seconds: 0\n")
    import brain as brainlib

    b = brainlib.open(brain.repo)
    s = b.coord.start_session("probe")
    b.coord.end_session(s.id)
    now = time.time()
    b.coord.clock = lambda: now + 365 * 86400
    assert b.coord.prune_sessions() == 0
    out = subprocess.run([sys.executable, "-m", "brain", "session", "prune", "--json"], cwd=brain.repo, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout) == {"pruned": 0}


def test_thread_handoffs_stay_out_of_git_until_promoted(brain, repo):
    commit_all(repo)
    rec = brain.record_turn(None, "sess-a@m", "is the API frozen?", to="sess-b@m", kind="ask")
    assert rec.handoff.startswith("handoffs/local/")
    assert "API frozen" in brain.read(rec.handoff).text  # agents can read it
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", ".brain/handoffs"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    out = subprocess.run([sys.executable, "-m", "brain", "handoff", rec.thread, "--promote", "--json"], cwd=repo,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["path"] == f"handoffs/{rec.thread}.md"
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", ".brain/handoffs"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert status.strip() == f"?? .brain/handoffs/{rec.thread}.md"
    listing = json.loads(subprocess.run([sys.executable, "-m", "brain", "handoff", "--json"], cwd=repo, capture_output=True,
                                        text=True, timeout=60).stdout)
    assert listing == {"handoffs": [rec.thread], "promoted": [rec.thread]}


def test_the_web_panel_lists_live_work_first(brain):
    from brain.web.views import work_state

    coord = brain.coord
    idle = coord.start_session("idle")
    busy = coord.start_session("busy")
    coord.claim(busy.id, "src/a.py")
    ended = coord.start_session("done")
    coord.claim(ended.id, "src/b.py")
    coord.end_session(ended.id)
    order = [row["id"] for row in work_state(brain)["sessions"]]
    assert order == [busy.id, idle.id, ended.id]


def test_a_week_of_client_sessions_and_health_checks_leaves_things_tidy(brain, repo, tmp_path):
    """200 Claude Code sessions through the hook handler, 200 health checks through the MCP server."""
    from brain.hooks import claude

    commit_all(repo)
    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    start = time.time() - 7 * 86400
    for i in range(200):
        sid = f"00000000-0000-4000-8000-{i:012d}"
        transcript = tmp_path / f"{sid}.jsonl"
        task = Task(f"fix bug {i}", [Call(1000, text=f"Next: check case {i}.", edits=("src/app.py",))])
        transcript.write_text("\n".join(claude_lines(sid, str(repo), start + i * 3000, [task])) + "\n")
        base = {"session_id": sid, "cwd": str(repo), "transcript_path": str(transcript)}
        out, code = claude.handle("session-start", {**base, "source": "startup"}, env)
        assert code == 0 and json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert claude.handle("stop", {**base, "stop_hook_active": True}, env)[1] == 0
        assert claude.handle("session-end", {**base, "reason": "exit"}, env)[1] == 0
        assert "brain_boot" in health_check(brain)
    coord = brain.coord
    sessions = coord.sessions(include_gone=True)
    assert coord.sessions() == []  # nothing live is left
    assert len(sessions) == 200  # one per client session; the health checks made none
    now = time.time()
    coord.clock = lambda: now + 3601  # past coord.prune_idle_seconds: the list empties
    coord.prune_sessions()
    assert coord.sessions(include_gone=True) == []
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", ".brain/handoffs"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""  # 200 thread handoffs, none of them in the versioned handoffs/
    assert len(brain.conversations.handoff_names()["local"]) == 200


def test_local_handoffs_past_the_log_retention_are_pruned(brain, repo):
    import os

    old = brain.record_turn(None, "sess-a@m", "an old question", to="sess-b@m")
    new = brain.record_turn(None, "sess-c@m", "a new question", to="sess-d@m")
    brain.write(f"handoffs/{old.thread}.md", brain.read(old.handoff).text)  # promoted: team memory, stays
    past = os.stat(brain.dir / old.handoff).st_mtime - 91 * 86400  # log.retention_days is 90
    os.utime(brain.dir / old.handoff, (past, past))
    out = subprocess.run([sys.executable, "-m", "brain", "log", "--prune", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["handoffs"] == [old.thread]
    assert not (brain.dir / old.handoff).exists() and (brain.dir / new.handoff).exists()
    assert (brain.dir / f"handoffs/{old.thread}.md").exists()
