"""Client wiring that works from any shell: absolute commands, `brain doctor` probes them, pointer lines.

The install runs as a real `brain` subprocess from this test's venv; what it wrote is then
run the way a client would, from an environment whose PATH does not hold the venv. The
files are also read back by the real Claude Code and Codex CLIs when they are installed
(`npm install -g @anthropic-ai/claude-code @openai/codex`, as .ci/run does).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from brain.hooks import claude, codex
from brain.memory.scaffold import POINTER_MARKER

BARE_PATH = "/usr/bin:/bin"  # a shell without the venv: what a client started from the desktop has
# no network at test time: Claude Code's update check, telemetry and other nonessential traffic off
OFFLINE = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1"}
SID = "0c1d2e3f-2222-4e4e-9a9a-0123456789ab"


def brain_cli(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=env)


def user_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env.pop("CODEX_HOME", None)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def trust_folder(env: dict[str, str], repo: Path) -> None:
    """What accepting Claude Code's trust dialog records: ``hasTrustDialogAccepted`` on the project's entry."""
    from brain.hooks.claude_scope import config_file, project_key

    path = config_file(env)
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("projects", {}).setdefault(project_key(repo), {})["hasTrustDialogAccepted"] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def bare_env(env: dict[str, str]) -> dict[str, str]:
    """The user's environment without the venv on PATH (and without VIRTUAL_ENV)."""
    keep = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return {**keep, "PATH": BARE_PATH}


def test_install_writes_an_absolute_command_and_it_runs_from_a_shell_without_the_venv(brain, tmp_path):
    env = user_env(tmp_path)
    out = brain_cli(brain.repo, "install", "claude-code", "--json", env=env)
    assert out.returncode == 0, out.stderr
    argv = json.loads(out.stdout)["command"]
    assert os.path.isabs(argv[0]) and Path(argv[0]).is_file()
    from brain.hooks.claude_scope import local_server, project_key

    assert not (brain.repo / ".mcp.json").exists()  # nothing of this machine in a shared file
    server = local_server(env, project_key(brain.repo))
    assert server["command"] == argv[0] and server["args"][-1] == "serve"
    assert brain_cli(brain.repo, "install", "codex", env=env).returncode == 0
    table = tomllib.loads((tmp_path / "home" / ".codex" / "config.toml").read_text())["mcp_servers"]["brain"]
    assert os.path.isabs(table["command"]) and table["args"][-1] == "serve"

    # a hook, run by /bin/sh as Claude Code runs it, from a shell that has never seen the venv
    settings = json.loads((brain.repo / ".claude" / "settings.local.json").read_text())
    start = settings["hooks"]["SessionStart"][-1]["hooks"][0]["command"]
    payload = {"session_id": SID, "cwd": str(brain.repo), "hook_event_name": "SessionStart", "source": "startup"}
    hook = subprocess.run(["/bin/sh", "-c", start], input=json.dumps(payload), cwd=brain.repo, capture_output=True,
                          text=True, timeout=120, env={**bare_env(env), "CLAUDE_PROJECT_DIR": str(brain.repo)})
    assert hook.returncode == 0 and "not found" not in hook.stderr, hook.stderr
    assert json.loads(hook.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"

    # the MCP server as the client starts it: the written command and args, the bare PATH
    pytest.importorskip("mcp")
    from mcp.client.stdio import StdioServerParameters
    from test_mcp_helpers import with_client

    params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(brain.repo),
                                   env=bare_env(env))

    async def body(client):
        return {t.name for t in (await client.list_tools()).tools}

    assert "brain_boot" in with_client(params, body)


def test_doctor_probes_every_installed_command_and_names_the_fix(brain, tmp_path):
    env = user_env(tmp_path)
    assert brain_cli(brain.repo, "install", "claude-code", "--command", "brain-nowhere-7731", env=env).returncode == 0
    out = brain_cli(brain.repo, "doctor", "--json", env=env)
    checks = [c for c in json.loads(out.stdout) if c["check"] == "client:claude-code"]
    assert out.returncode == 1 and checks and not checks[0]["ok"] and checks[0]["level"] == "error"
    assert "brain install claude-code" in checks[0]["fix"]

    not_brain = tmp_path / "not-brain"
    not_brain.write_text("#!/bin/sh\necho hello\n")
    not_brain.chmod(0o755)
    assert brain_cli(brain.repo, "install", "codex", "--command", str(not_brain), env=env).returncode == 0
    checks = {c["check"]: c for c in json.loads(brain_cli(brain.repo, "doctor", "--json", env=env).stdout)}
    assert not checks["client:codex"]["ok"]  # it exists and runs, but it is not brain

    assert brain_cli(brain.repo, "install", "claude-code", env=env).returncode == 0  # the default: absolute
    assert brain_cli(brain.repo, "install", "codex", env=env).returncode == 0
    out = brain_cli(brain.repo, "doctor", "--json", env=bare_env(env))
    checks = {c["check"]: c for c in json.loads(out.stdout)}
    assert checks["client:claude-code"]["ok"] and checks["client:codex"]["ok"], out.stdout


def test_doctor_warns_on_a_bare_command_that_only_this_path_resolves(brain, tmp_path):
    env = user_env(tmp_path)
    bindir = Path(sys.executable).parent
    assert (bindir / "brain").is_file()
    assert brain_cli(brain.repo, "install", "claude-code", "--command", "brain", env=env).returncode == 0
    out = brain_cli(brain.repo, "doctor", "--json", env={**env, "PATH": f"{bindir}:{BARE_PATH}"})
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert check["level"] == "warning" and check["fix"]
    assert out.returncode == 0  # a warning fails nothing (`--strict` gives it its own code)
    advised = re.search(r"`brain ([^`]+)`", check["fix"]).group(1).split()  # the fix, run as doctor words it
    assert brain_cli(brain.repo, *advised, env={**env, "PATH": f"{bindir}:{BARE_PATH}"}).returncode == 0
    out = brain_cli(brain.repo, "doctor", "--json", env={**env, "PATH": f"{bindir}:{BARE_PATH}"})
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert check["ok"] and check["level"] == "ok", check


def test_each_client_gets_the_pointer_line_in_the_file_it_reads_and_uninstall_removes_it(brain, tmp_path):
    env = {"HOME": str(tmp_path / "h")}
    claude_md = brain.repo / "CLAUDE.md"
    claude_md.write_text("# House rules\n\nRun the tests.\n")
    result = claude.install(brain, ["/opt/brain/bin/brain"])
    assert result["pointer"] == "CLAUDE.md"
    assert claude_md.read_text().count(POINTER_MARKER) == 1
    claude.install(brain, ["/opt/brain/bin/brain"])  # still one line
    assert claude_md.read_text().count(POINTER_MARKER) == 1
    assert claude.uninstall(brain)["pointer"] == "CLAUDE.md"
    assert claude_md.read_text() == "# House rules\n\nRun the tests.\n"

    claude_md.unlink()
    claude.install(brain, ["/opt/brain/bin/brain"])
    assert POINTER_MARKER in claude_md.read_text()
    claude.uninstall(brain)
    assert not claude_md.exists()  # created by install, untouched since: gone

    (brain.repo / "AGENTS.md").write_text("# Rules\n")
    assert codex.install(brain, ["/opt/brain/bin/brain"], env)["agents_md"] is True
    assert not claude_md.exists()  # codex does not read CLAUDE.md
    with open(brain.repo / "AGENTS.md", "a") as f:
        f.write("More rules.\n")  # edited since: only the marked line goes
    codex.uninstall(brain, env)
    assert (brain.repo / "AGENTS.md").read_text() == "# Rules\n\nMore rules.\n"  # the user's text stays


def test_an_older_codex_manifest_still_uninstalls_its_pointer(brain, tmp_path):
    env = {"HOME": str(tmp_path / "h")}
    (brain.repo / "AGENTS.md").write_text("# Rules\n")
    codex.install(brain, ["/opt/brain/bin/brain"], env)
    manifest_path = brain.runtime / "installs" / "codex.json"
    manifest = json.loads(manifest_path.read_text())
    legacy = {k: v for k, v in manifest.items() if not k.startswith("pointer_")}
    legacy.update(agents_added=True, agents_original=manifest["pointer_original"],
                  agents_written=manifest["pointer_written"])
    manifest_path.write_text(json.dumps(legacy))
    assert codex.uninstall(brain, env)["agents_md"] is True
    assert (brain.repo / "AGENTS.md").read_text() == "# Rules\n"


# -- the real clients' own parsers ------------------------------------------------------------------------------
def _client(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"the `{name}` CLI is not installed (npm install -g @anthropic-ai/claude-code @openai/codex, "
                    "as .ci/run does)")
    return path


def test_codex_reads_the_written_config(brain, tmp_path):
    codex_bin = _client("codex")
    env = user_env(tmp_path)
    (tmp_path / "home" / ".codex").mkdir()
    (tmp_path / "home" / ".codex" / "config.toml").write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n')
    assert brain_cli(brain.repo, "install", "codex", env=env).returncode == 0
    out = subprocess.run([codex_bin, "mcp", "list", "--json"], cwd=brain.repo, capture_output=True, text=True,
                         timeout=120, env={**env, "PATH": f"{Path(codex_bin).parent}:{BARE_PATH}"})
    assert out.returncode == 0, out.stderr
    servers = {s["name"]: s for s in json.loads(out.stdout)}
    assert set(servers) == {"brain", "other"}
    transport = servers["brain"]["transport"]
    assert transport["type"] == "stdio" and os.path.isabs(transport["command"]) and transport["args"] == ["serve"]


def test_claude_code_connects_to_the_installed_server_from_a_bare_shell(brain, tmp_path):
    claude_bin = _client("claude")
    env = user_env(tmp_path)
    assert brain_cli(brain.repo, "install", "claude-code", env=env).returncode == 0
    # a local-scope server needs no approval: no `enabledMcpjsonServers`, no trust dialog for `claude mcp list`
    out = subprocess.run([claude_bin, "mcp", "list"], cwd=brain.repo, capture_output=True, text=True, timeout=120,
                         env={**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}"})
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("brain:"))
    assert "Connected" in line, out.stdout


def test_doctor_never_runs_a_command_that_the_repository_chose(brain, tmp_path):
    """.mcp.json comes with the repository: doctor must not run what it names unless it is brain."""
    env = user_env(tmp_path)
    marker = tmp_path / "ran"
    evil = brain.repo / "tools" / "brain"
    evil.parent.mkdir()
    evil.write_text(f"#!/bin/sh\n# brain.cli\ntouch {marker}\necho brain 9\n")
    evil.chmod(0o755)
    (brain.repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"brain": {"command": str(evil),
                                                                              "args": ["serve"]}}}))
    (brain.repo / "brain").mkdir()  # a `brain` package of the repository, for `python -m brain` run from here
    (brain.repo / "brain" / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    out = brain_cli(brain.repo, "doctor", "--json", env=env)
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert not check["ok"] and "not run" in check["detail"]
    assert not marker.exists()
    # a Python interpreter with -m brain is brain; run from a neutral folder, the repository's brain/ is not used
    (brain.repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"brain": {
        "command": sys.executable, "args": ["-m", "brain", "serve"]}}}))
    out = brain_cli(brain.repo, "doctor", "--json", env=env)
    check = {c["check"]: c for c in json.loads(out.stdout)}["client:claude-code"]
    assert check["ok"], check
    assert not marker.exists()


def _claude_doctor(claude_bin: str, repo: Path, env: dict[str, str], bound: float = 90.0) -> str:
    """The text `claude doctor` shows (it needs a terminal: run on a pty, read until it offers to close)."""
    import pty
    import re
    import select
    import signal
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: Claude Code's doctor in the project
        os.chdir(repo)
        os.execve(claude_bin, [claude_bin, "doctor"], env)
    raw = b""
    deadline = time.monotonic() + bound
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
            if not ready:
                break
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            raw += chunk
            flat = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\s", b"", raw)
            if b"Entertoclose" in flat:
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\s", "", raw.decode("utf-8", "replace"))


def test_claude_code_validates_the_written_settings(brain, tmp_path):
    """`claude doctor` reports settings that fail its schema ("Invalid settings"): the installed ones pass."""
    claude_bin = _client("claude")
    env = user_env(tmp_path)
    assert brain_cli(brain.repo, "install", "claude-code", env=env).returncode == 0
    client_env = {**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}", "TERM": "xterm",
                  "COLUMNS": "200"}
    text = _claude_doctor(claude_bin, brain.repo, client_env)
    assert "Entertoclose" in text, text[-2000:]
    assert "Invalidsettings" not in text, text
    # the check can fail: a hook of the wrong type is reported
    settings = brain.repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    data["hooks"]["SessionStart"][-1]["hooks"][0]["type"] = "bogus"
    settings.write_text(json.dumps(data))
    assert "Invalidsettings" in _claude_doctor(claude_bin, brain.repo, client_env)
