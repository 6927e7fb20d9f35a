"""The real Codex and Claude Code CLIs are sessions from their MCP handshake and leave nothing behind.

Skipped when a CLI is not installed (`npm install -g @anthropic-ai/claude-code @openai/codex`). No API
key and no network are needed: `codex exec` starts its MCP servers, then keeps retrying the model
API, so its brain server stays connected until codex is stopped; `claude mcp list` connects, lists
the tools and disconnects (a health check). The audit keeps each session's start and end after the
session itself is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from test_client_wiring import BARE_PATH, OFFLINE, _client, bare_env, brain_cli, user_env
from test_mcp_helpers import wait_for

pytestmark = pytest.mark.timeout(300)

BOUND = 90.0


def started(brain, role: str) -> list[str]:
    return [e.subject for e in brain.coord.history(action="session_start") if e.detail.get("role") == role]


def ended(brain) -> set[str]:
    return {e.subject for e in brain.coord.history(action="session_end")}


def test_codex_is_a_session_while_connected_and_leaves_nothing_after(brain, tmp_path):
    codex_bin = _client("codex")
    env = user_env(tmp_path)
    assert brain_cli(brain.repo, "install", "codex", env=env).returncode == 0
    proc = subprocess.Popen([codex_bin, "exec", "--skip-git-repo-check", "say hi"], cwd=brain.repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**bare_env(env), "PATH": f"{Path(codex_bin).parent}:{BARE_PATH}"},
                            start_new_session=True)
    try:
        [sid] = wait_for(lambda: started(brain, "codex"), BOUND)
        assert "-codex@" in sid  # codex passes the server only its own environment: the machine is the host name
        if proc.poll() is None:  # still connected (retrying the model API): on the board, alive
            live = {s.id: s.liveness for s in brain.coord.sessions()}
            if proc.poll() is None:
                assert live.get(sid) == "alive", live
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=BOUND)
    wait_for(lambda: sid in ended(brain), BOUND)  # codex gone: its server saw the pipe close
    assert brain.coord.sessions(include_gone=True) == []  # it made no tool call: nothing left behind


def test_claude_code_health_checks_are_sessions_while_they_run_and_leave_nothing(brain, tmp_path):
    claude_bin = _client("claude")
    env = user_env(tmp_path)
    assert brain_cli(brain.repo, "install", "claude-code", env=env).returncode == 0
    (brain.repo / ".claude" / "settings.local.json").write_text('{"enabledMcpjsonServers": ["brain"]}\n')
    for run in range(2):
        out = subprocess.run([claude_bin, "mcp", "list"], cwd=brain.repo, capture_output=True, text=True,
                             timeout=120, env={**bare_env(env), **OFFLINE,
                                               "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}"})
        assert out.returncode == 0 and "Connected" in out.stdout, out.stdout + out.stderr
        sessions = started(brain, "claude-code")
        assert len(sessions) == run + 1  # its handshake made it a session (no tool is called)
        assert set(sessions) <= ended(brain)
    assert brain.coord.sessions(include_gone=True) == []
    hooks = brain.runtime / "hooks"
    assert not hooks.exists() or list(hooks.iterdir()) == []
