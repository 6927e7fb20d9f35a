"""Issue 13's loose ends: rm/mv commit like a write, the boot's manifest says why each part is left out,
handoffs committed before the move to `handoffs/local/`, local handoffs pruned without a manual step, and
re-exports followed up the package chain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import brain as brainlib
from conftest import git

pytestmark = pytest.mark.timeout(300)


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def cli_env(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=env)


def committing(b) -> "brainlib.Brain":
    (b.dir / "brain.yml").write_text("version: 1\nsync:\n  commit_on_write: true\n")
    git(b.repo, "add", "-A")
    git(b.repo, "commit", "-q", "-m", "brain with commit_on_write")
    return brainlib.open_brain(b.repo)


def last_commit(repo: Path) -> tuple[str, list[str]]:
    message = git(repo, "log", "-1", "--format=%B")
    files = git(repo, "show", "--name-status", "--format=", "HEAD").splitlines()
    return message, sorted(files)


# -- 1. rm and mv commit like a write ------------------------------------------------------
def test_rm_commits_the_delete_naming_writer_and_reason(brain, repo):
    b = committing(brain)
    b.write("notes/old.md", "# Old\n", role="lead", reason="first")
    head = git(repo, "rev-parse", "HEAD")
    out = cli(repo, "rm", "notes/old.md", "--role", "lead", "--reason", "obsolete since the v2 API")
    assert out.returncode == 0, out.stderr
    assert git(repo, "rev-parse", "HEAD") != head
    message, files = last_commit(repo)
    assert message.startswith("memory: delete .brain/notes/old.md by lead — obsolete since the v2 API")
    assert "Writer: lead" in message and "Reason: obsolete since the v2 API" in message
    assert files == ["D\t.brain/notes/old.md"]
    assert git(repo, "status", "--porcelain", ".brain/notes") == ""


def test_mv_commits_both_paths_in_one_commit(brain, repo):
    b = committing(brain)
    b.write("notes/setup.md", "# Setup\n", role="lead")
    out = cli(repo, "mv", "notes/setup.md", "notes/install.md", "--role", "lead", "--reason", "clearer name")
    assert out.returncode == 0, out.stderr
    message, files = last_commit(repo)
    assert message.startswith("memory: move .brain/notes/setup.md to .brain/notes/install.md by lead — clearer name")
    assert files == ["A\t.brain/notes/install.md", "D\t.brain/notes/setup.md"] or \
        files == ["R100\t.brain/notes/setup.md\t.brain/notes/install.md"]
    assert git(repo, "status", "--porcelain", ".brain/notes") == ""


def test_rm_of_a_file_never_committed_makes_no_commit(brain, repo):
    b = committing(brain)
    (b.dir / "notes").mkdir(exist_ok=True)
    (b.dir / "notes" / "draft.md").write_text("# Draft\n")  # written by hand, never committed
    head = git(repo, "rev-parse", "HEAD")
    b.remove("notes/draft.md", role="lead", reason="not needed")
    assert git(repo, "rev-parse", "HEAD") == head


def test_mcp_delete_and_move_commit_with_the_sessions_role(brain, repo, monkeypatch):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from brain.mcp.server import build_server

    monkeypatch.setenv("BRAIN_ROLE", "docs")  # the role a local MCP connection writes as (as brain_write)
    b = committing(brain)
    b.write("notes/a.md", "# A\n", role="lead")
    b.write("notes/b.md", "# B\n", role="lead")

    async def main():
        with anyio.fail_after(60):
            async with Client(build_server(b, transport="http")) as client:
                moved = await client.call_tool("brain_move", {"path": "notes/a.md", "to": "notes/a2.md",
                                                              "reason": "rename"})
                moved_head = git(repo, "rev-parse", "HEAD").strip()
                gone = await client.call_tool("brain_delete", {"path": "notes/b.md", "reason": "stale"})
                return moved, moved_head, gone

    moved, moved_head, gone = anyio.run(main)
    assert not moved.is_error and not gone.is_error
    move_message = git(repo, "log", "-1", "--format=%s", moved_head)
    assert move_message.strip() == "memory: move .brain/notes/a.md to .brain/notes/a2.md by docs — rename"
    assert git(repo, "log", "-1", "--format=%s").strip() == "memory: delete .brain/notes/b.md by docs — stale"
    assert git(repo, "status", "--porcelain", ".brain/notes") == ""


# -- 2. the manifest says why each part is left out -------------------------------------------
def test_the_manifest_and_json_say_why_each_part_is_left_out(brain):
    agents = brain.dir / "agents"
    (agents / "typo.md").write_text("---\ntier: hottt\n---\nNever seen.\n")
    (agents / "archive.md").write_text("---\ntier: cold\n---\nThe old deploy procedure.\n")
    brain.write("focus.md", "# Focus\n\n" + "Keep the public API stable. " * 400 + "\n")
    result = brain.boot(budget=700, record=False)
    by_source = {o.source: o for o in result.omitted}
    assert by_source["agents/typo.md"].reason == "unparsable" and "hottt" in by_source["agents/typo.md"].detail
    assert by_source["agents/archive.md"].reason == "cold_profile"
    assert by_source["focus.md"].reason == "budget"
    text = result.text
    assert "Left out (budget)" not in text  # the heading no longer says every part is a budget cut
    lines = {line.split(" ")[1]: line for line in text.splitlines() if line.startswith("- ")}
    assert "skipped: does not parse" in lines["agents/typo.md"] and "hottt" in lines["agents/typo.md"]
    assert "cold profile, fetchable" in lines["agents/archive.md"]
    assert "over the budget" in lines["focus.md"]
    out = cli(brain.repo, "boot", "--budget", "700", "--json")
    assert out.returncode == 0, out.stderr
    reasons = {o["source"]: o["reason"] for o in json.loads(out.stdout)["omitted"]}
    assert reasons["agents/typo.md"] == "unparsable" and reasons["agents/archive.md"] == "cold_profile"
    assert reasons["focus.md"] == "budget"


def test_the_rest_of_a_cut_now_md_is_declared_as_cut(brain):
    brain.write("now.md", "# Now\n\n" + "\n".join(f"- step {i}: do the thing" for i in range(400)) + "\n")
    result = brain.boot(budget=500, record=False)
    rest = next(o for o in result.omitted if o.source == "now.md (rest)")
    assert rest.reason == "cut"
    assert any(line.startswith("- now.md (rest)") and "cut to fit the budget" in line
               for line in result.text.splitlines())


# -- 3. handoffs committed in handoffs/ before the move to handoffs/local/ -------------------
def legacy_handoff(b, thread: str) -> str:
    """What the fold wrote before handoffs/local/ existed: `handoffs/<thread>.md`, committed."""
    rec = b.record_turn(thread, "person", f"what about {thread}?", to="sess-x@m")
    text = b.read(rec.handoff).text
    os.remove(b.dir / rec.handoff)  # the old layout had no local copy
    (b.dir / "handoffs" / f"{thread}.md").write_text(text)
    return text


def test_doctor_names_legacy_handoffs_and_migrate_moves_them_out_of_git(brain, repo):
    old = legacy_handoff(brain, "person+sess-20250101-0900-a@m")
    legacy_handoff(brain, "person+sess-20250102-0900-b@m")
    (brain.dir / "handoffs" / "release-plan.md").write_text("# Release plan\n\nWritten by a person.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "old layout")
    promoted = brain.record_turn("person+sess-20250103-0900-c@m", "person", "keep this one", to="sess-y@m")
    assert cli(repo, "handoff", promoted.thread, "--promote").returncode == 0
    out = cli(repo, "doctor", "--json")
    check = {c["check"]: c for c in json.loads(out.stdout)}["handoffs"]
    assert check["level"] == "warning" and not check["ok"]
    assert "person+sess-20250101-0900-a@m.md" in check["detail"]
    assert "person+sess-20250102-0900-b@m.md" in check["detail"]
    assert "release-plan.md" not in check["detail"] and promoted.thread not in check["detail"]
    assert "brain handoff --migrate" in check["fix"]

    out = cli(repo, "handoff", "--migrate", "--json")
    assert out.returncode == 0, out.stderr
    assert sorted(json.loads(out.stdout)["migrated"]) == ["person+sess-20250101-0900-a@m",
                                                          "person+sess-20250102-0900-b@m"]
    assert (brain.dir / "handoffs/local/person+sess-20250101-0900-a@m.md").read_text() == old
    assert not (brain.dir / "handoffs/person+sess-20250101-0900-a@m.md").exists()
    assert (brain.dir / "handoffs/release-plan.md").exists() and (brain.dir / f"handoffs/{promoted.thread}.md").exists()
    status = git(repo, "status", "--porcelain", "--untracked-files=all", ".brain/handoffs")
    assert sorted(status.splitlines()) == [" D .brain/handoffs/person+sess-20250101-0900-a@m.md",
                                           " D .brain/handoffs/person+sess-20250102-0900-b@m.md",
                                           f"?? .brain/handoffs/{promoted.thread}.md"]
    check = {c["check"]: c for c in json.loads(cli(repo, "doctor", "--json").stdout)}["handoffs"]
    assert check["ok"]
    again = cli(repo, "handoff", "--migrate", "--json")
    assert json.loads(again.stdout)["migrated"] == []


def test_migrate_keeps_the_live_local_handoff_and_commits_with_commit_on_write(brain, repo):
    thread = "person+sess-20250101-0900-a@m"
    legacy_handoff(brain, thread)
    b = committing(brain)
    live = b.record_turn(thread, "person", "a newer question", to="sess-x@m")  # the thread went on after the move
    live_text = b.read(live.handoff).text
    out = cli(repo, "handoff", "--migrate", "--json")
    assert out.returncode == 0, out.stderr
    assert (b.dir / live.handoff).read_text() == live_text  # the newer local one is not overwritten
    assert git(repo, "log", "-1", "--format=%s").startswith(f"memory: delete .brain/handoffs/{thread}.md")
    assert git(repo, "status", "--porcelain", "--untracked-files=all", ".brain/handoffs") == ""


# -- 4. local handoffs of gone threads pruned at session start --------------------------------
def age(path: Path, days: float) -> None:
    past = path.stat().st_mtime - days * 86400
    os.utime(path, (past, past))


def test_session_start_prunes_old_local_handoffs_of_gone_threads_at_most_hourly(brain, repo, tmp_path):
    from brain.hooks import claude

    live = brain.coord.start_session("backend")
    old = brain.record_turn(None, "sess-a@m", "an old question", to="sess-b@m")
    old_live = brain.record_turn(None, live.id, "an old but live thread", to="sess-c@m")
    fresh = brain.record_turn(None, "sess-d@m", "a new question", to="sess-e@m")
    for rec in (old, old_live):
        age(brain.dir / rec.handoff, 91)  # log.retention_days is 90
    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    payload = {"session_id": "11111111-0000-4000-8000-000000000001", "cwd": str(repo), "source": "startup"}
    out, code = claude.handle("session-start", payload, env)
    assert code == 0
    assert not (brain.dir / old.handoff).exists()  # gone thread past the retention: pruned, no manual step
    assert (brain.dir / old_live.handoff).exists()  # a live session's thread stays however old
    assert (brain.dir / fresh.handoff).exists()

    later = brain.record_turn(None, "sess-f@m", "another old one", to="sess-g@m")
    age(brain.dir / later.handoff, 91)
    out = cli(repo, "session", "start", "--role", "qa")  # another session start within the hour: no new pass
    assert out.returncode == 0, out.stderr
    assert (brain.dir / later.handoff).exists()
    stamp = brain.runtime / "handoffs-pruned"
    age(stamp, 1 / 12)  # two hours later
    out = cli(repo, "session", "start", "--role", "qa")
    assert out.returncode == 0, out.stderr
    assert not (brain.dir / later.handoff).exists()


def test_an_mcp_session_start_prunes_too(brain, repo):
    pytest.importorskip("mcp")
    from test_sessions_tidy import call_tools

    old = brain.record_turn(None, "sess-a@m", "an old question", to="sess-b@m")
    age(brain.dir / old.handoff, 91)
    (result,) = call_tools(brain, ("brain_boot", {}))
    assert not result.is_error
    assert not (brain.dir / old.handoff).exists()


# -- 5. re-exports followed up the package chain ---------------------------------------------
CHAIN = {  # the shape of packages that keep their implementation two private levels down
    "pkg/__init__.py": '"""The public face."""\nfrom ._impl import Client, HTTPTransport\n\n'
                       '__all__ = ["Client", "HTTPTransport"]\n',
    "pkg/_impl/__init__.py": "from ._client import Client\nfrom ._transports import HTTPTransport, MockTransport\n",
    "pkg/_impl/_client.py": "from ._transports.default import HTTPTransport\n\n\nclass Client:\n"
                            "    def __init__(self) -> None:\n"
                            "        self.transport = HTTPTransport()\n" + "# pad\n" * 60,
    "pkg/_impl/_transports/__init__.py": "from .default import HTTPTransport\nfrom .mock import MockTransport\n\n"
                                         '__all__ = ["HTTPTransport", "MockTransport"]\n',
    "pkg/_impl/_transports/default.py": '__all__ = ["HTTPTransport"]\n\n\nclass HTTPTransport:\n'
                                        "    def send(self, request):\n        return request\n" + "# pad\n" * 60,
    "pkg/_impl/_transports/mock.py": '__all__ = ["MockTransport"]\n\n\nclass MockTransport:\n'
                                     "    def send(self, request):\n        return None\n" + "# pad\n" * 60,
}


def test_reexports_are_followed_up_the_package_chain(repo, brain):
    for rel, text in CHAIN.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (brain.dir / "brain.yml").write_text("version: 1\ncards:\n  split_bytes: 600\n  split_min_bytes: 100\n")
    out = cli(repo, "map")
    assert out.returncode == 0, out.stderr
    card = (brain.dir / "modules" / "pkg" / "_impl" / "_transports.md").read_text()
    via = next(line for line in card.splitlines() if line.startswith("_Private package:"))
    assert "`pkg._impl` re-exports `HTTPTransport`, `MockTransport`" in via
    assert "`pkg` re-exports `HTTPTransport` (through `pkg._impl`)" in via  # Client is not from _transports
    # the card follows a change of the top package's __init__
    (repo / "pkg" / "__init__.py").write_text('from ._impl import *\n')
    assert cli(repo, "map").returncode == 0
    card = (brain.dir / "modules" / "pkg" / "_impl" / "_transports.md").read_text()
    via = next(line for line in card.splitlines() if line.startswith("_Private package:"))
    assert "`pkg` re-exports `HTTPTransport`, `MockTransport` (through `pkg._impl`)" in via


# -- 6. found by the end-to-end check: the README's venv lives inside the repository ---------
def test_doctor_runs_a_git_ignored_venv_inside_the_repository_but_never_a_tracked_one(brain, repo, tmp_path):
    """`python3 -m venv .venv` in the repository (the README's first command) puts brain inside it:
    a git-ignored, untracked console script was made on this machine and runs; the same file tracked
    (it came with the repository) is refused."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PATH": "/usr/bin:/bin"}
    env.pop("CODEX_HOME", None)
    env.pop("VIRTUAL_ENV", None)
    script = repo / ".venv" / "bin" / "brain"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom brain.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    (repo / ".gitignore").write_text(".venv/\n")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"brain": {"command": str(script), "args": ["serve"]}}}))
    out = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=120, env=env)
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert check["ok"], check
    git(repo, "add", "-f", ".venv/bin/brain")  # now the repository carries it: never run
    out = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=120, env=env)
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert not check["ok"] and "not run" in check["detail"]


def test_a_claude_mcp_list_health_check_leaves_nothing_behind(brain, repo, tmp_path):
    """Found by the 200-session run: `claude mcp list` fires the SessionEnd hook of a session that never
    started, and each one left a hook state file in runtime/hooks/."""
    from test_client_wiring import BARE_PATH, OFFLINE, _client, bare_env, trust_folder, user_env

    claude_bin = _client("claude")
    env = user_env(tmp_path)
    assert cli_env(repo, env, "install", "claude-code").returncode == 0
    trust_folder(env, repo)  # the user accepted Claude Code's trust dialog: the hooks run
    for _ in range(2):
        out = subprocess.run([claude_bin, "mcp", "list"], cwd=repo, capture_output=True, text=True, timeout=120,
                             env={**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}"})
        assert out.returncode == 0 and "Connected" in out.stdout, out.stdout + out.stderr
    hooks = brain.runtime / "hooks"
    assert not hooks.exists() or list(hooks.iterdir()) == []
    assert brain.coord.sessions(include_gone=True) == []


def test_session_end_of_a_session_that_never_started_writes_nothing(brain, repo):
    from brain.hooks import claude

    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    payload = {"session_id": "22222222-0000-4000-8000-000000000002", "cwd": str(repo), "reason": "other",
               "transcript_path": str(repo / "no-such-transcript.jsonl")}
    assert claude.handle("session-end", payload, env) == ("", 0)
    hooks = brain.runtime / "hooks"
    assert not hooks.exists() or list(hooks.iterdir()) == []


def test_old_hook_states_of_ended_sessions_are_pruned_with_the_handoffs(brain, repo):
    from brain.hooks import claude

    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    old = {"session_id": "33333333-0000-4000-8000-000000000003", "cwd": str(repo)}
    claude.handle("session-start", {**old, "source": "startup"}, env)
    claude.handle("session-end", {**old, "reason": "exit"}, env)
    (state,) = list((brain.runtime / "hooks").iterdir())
    age(state, 91)
    (brain.runtime / "handoffs-pruned").unlink()
    new = {"session_id": "44444444-0000-4000-8000-000000000004", "cwd": str(repo)}
    claude.handle("session-start", {**new, "source": "startup"}, env)
    assert not state.exists()
    assert len(list((brain.runtime / "hooks").iterdir())) == 1  # the live one stays
