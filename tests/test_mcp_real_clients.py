"""The real Claude Code and Codex CLIs connect to `brain serve` and list what it serves.

Skipped when a CLI is not installed (`npm install -g @anthropic-ai/claude-code @openai/codex`). No model API is
reached: Claude Code gets a made-up API key and a base URL on a closed loopback port, Codex has no network; each
starts its MCP servers first. The server's own debug log (`BRAIN_LOG=debug:FILE`) records each request's method,
so the test sees what the client asked: Claude Code lists tools, prompts (its `/mcp__brain__…` commands) and
resources at start; Codex lists tools (it reads resources only when its model asks).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from test_client_wiring import BARE_PATH, OFFLINE, _client, bare_env, brain_cli, user_env
from test_mcp_helpers import wait_for

pytestmark = pytest.mark.timeout(300)

BOUND = 90.0


def requests_seen(log: Path, client: str) -> list[str]:
    """The methods the server logged, once the client named ``client`` said hello (empty before)."""
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    if not any(f"client_name='{client}" in line for line in lines):
        return []
    return [line.split(" request ", 1)[1].split(" ", 1)[0] for line in lines if " brain.mcp DEBUG request " in line]


def closed_port() -> int:
    with socket.socket() as sock:  # bound then closed: nothing listens there during the test
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=BOUND)


def test_claude_code_connects_and_lists_the_tools_prompts_and_resources(brain, tmp_path):
    claude_bin = _client("claude")
    env = user_env(tmp_path)
    log = tmp_path / "server.log"
    assert brain_cli(brain.repo, "install", "claude-code", env=env).returncode == 0
    (brain.repo / ".claude" / "settings.local.json").write_text('{"enabledMcpjsonServers": ["brain"]}\n')
    listed = subprocess.run([claude_bin, "mcp", "list"], cwd=brain.repo, capture_output=True, text=True, timeout=120,
                            env={**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}"})
    assert listed.returncode == 0 and "Connected" in listed.stdout, listed.stdout + listed.stderr
    proc = subprocess.Popen([claude_bin, "-p", "hi", "--output-format", "stream-json", "--verbose", "--max-turns", "1"],
                            cwd=brain.repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}",
                                 "BRAIN_LOG": f"debug:{log}", "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
                                 "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}"})
    try:
        seen = wait_for(lambda: (lambda m: m if {"prompts/list", "resources/list"} <= set(m) else None)(
            requests_seen(log, "claude-code")), BOUND)
    finally:
        stop(proc)
    assert seen[0] == "initialize" and "tools/list" in seen


def test_codex_connects_and_lists_the_tools(brain, tmp_path):
    codex_bin = _client("codex")
    env = user_env(tmp_path)
    log = tmp_path / "server.log"
    assert brain_cli(brain.repo, "install", "codex", env=env).returncode == 0
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    # codex passes its servers only the environment their entry names: give this one a log file
    text = config.read_text()
    assert 'args = ["serve"]' in text, text
    config.write_text(text.replace('args = ["serve"]', f'args = ["serve"]\nenv = {{ BRAIN_LOG = "debug:{log}", '
                                                        f'BRAIN_HOME = "{os.environ["BRAIN_HOME"]}" }}', 1))
    proc = subprocess.Popen([codex_bin, "exec", "--skip-git-repo-check", "say hi"], cwd=brain.repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**bare_env(env), "PATH": f"{Path(codex_bin).parent}:{BARE_PATH}"},
                            start_new_session=True)
    try:
        seen = wait_for(lambda: (lambda m: m if "tools/list" in m else None)(requests_seen(log, "codex")), BOUND)
    finally:
        stop(proc)
    assert seen[0] == "initialize"
