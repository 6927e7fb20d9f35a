"""The plugins installed by the real Claude Code and Codex CLIs, and brain's one-line runs with real uv and pipx.

Everything runs as a new user would, offline: HOME is a temp folder (nothing of this machine's
client config is read or written), the marketplace is a copy of this checkout's plugin files, and
the only `brain` is one built from this source into an environment of its own (plugin_kit), on a
PATH without this checkout's venv. A CLI that is not installed skips its tests with the command that
installs it (`.ci/run` installs both from npm).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugin_kit import BARE_PATH, LineReader, build_wheel, bump, client_env, copy_marketplace, isolated_brain, load, version
from test_client_wiring import _client as _cli  # skips, naming the npm install, when the CLI is missing

# one worker builds the wheel and its environment once (module fixtures) for all these tests: under pytest-xdist
# ("-n auto --dist loadgroup") the group keeps them together instead of building both on every worker
pytestmark = pytest.mark.xdist_group("plugins-clients")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("setuptools", minversion="77")
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def brain_bin(wheel, tmp_path_factory) -> Path:
    return isolated_brain(wheel, tmp_path_factory.mktemp("isolated"))


def _project(tmp_path: Path, brain_bin: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    out = subprocess.run([str(brain_bin / "brain"), "init"], cwd=project, capture_output=True, text=True, timeout=120,
                         env={"PATH": f"{brain_bin}:{BARE_PATH}", "HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr
    return project


def _run(argv: list[str], cwd: Path, env: dict, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_claude_code_validates_installs_and_connects_the_plugin_from_a_shell_without_a_venv(tmp_path, brain_bin):
    claude = _cli("claude")
    market = copy_marketplace(tmp_path / "checkout")
    node_path = f"{Path(claude).parent}:{BARE_PATH}"
    env = client_env(tmp_path / "home", f"{brain_bin}:{node_path}")
    for target in (market, market / "plugins" / "brain"):
        out = _run([claude, "plugin", "validate", "--strict", str(target)], tmp_path, env)
        assert out.returncode == 0, out.stdout + out.stderr
    out = _run([claude, "plugin", "marketplace", "add", str(market)], tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    out = _run([claude, "plugin", "install", "brain@brain"], tmp_path, env)
    assert out.returncode == 0 and "brain@brain" in out.stdout, out.stdout + out.stderr
    listed = _run([claude, "plugin", "list"], tmp_path, env).stdout
    assert "brain@brain" in listed and version() in listed, listed

    project = _project(tmp_path, brain_bin)
    out = _run([claude, "mcp", "list"], project, env)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("plugin:brain:brain:")), "")
    assert "Connected" in line, out.stdout + out.stderr
    # the check can fail: the same plugin from a shell where no brain, uvx or pipx can be found
    out = _run([claude, "mcp", "list"], project, {**env, "PATH": node_path})
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("plugin:brain:brain:")), "")
    assert line and "Connected" not in line, out.stdout

    # a real session: without a login `claude -p` stops before any model call, but the plugin's SessionStart
    # and SessionEnd hooks have run (brain's hook state for that session: booted at startup, then ended)
    out = _run([claude, "-p", "hello", "--output-format", "json"], project, env)
    session = json.loads(out.stdout)["session_id"]
    state = json.loads((project / ".brain" / "runtime" / "hooks" / f"claude-{session}.json").read_text())
    assert state["source"] == "startup" and state["ended"] and state["party"].endswith("-claude-code@testbox")
    assert (project / ".brain" / "runtime" / "boots.jsonl").read_text().strip()

    # a hook as Claude Code runs it: the plugin's command line, by /bin/sh, with the plugin root it sets
    hooks = load("plugins/brain/hooks/hooks.json")["hooks"]
    start = hooks["SessionStart"][0]["hooks"][0]["command"]
    payload = {"session_id": "0c1d2e3f-2222-4e4e-9a9a-0123456789ab", "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    hook = subprocess.run(["/bin/sh", "-c", start], input=json.dumps(payload), cwd=project, capture_output=True,
                          text=True, timeout=120, env={**env, "CLAUDE_PLUGIN_ROOT": str(market / "plugins" / "brain"),
                                                       "CLAUDE_PROJECT_DIR": str(project)})
    assert hook.returncode == 0, hook.stderr
    context = json.loads(hook.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and "brain_boot" in context["additionalContext"]

    # `brain install claude-code` sees the plugin and installs nothing twice
    out = _run([str(brain_bin / "brain"), "install", "claude-code", "--json"], project, env)
    assert out.returncode == 0 and json.loads(out.stdout)["covered_by"] == "brain@brain", out.stdout + out.stderr
    assert not (project / ".claude" / "settings.local.json").exists()

    # a release: the version bumped in the checkout, then the client's update takes it
    bump(market, "99.0.0")
    assert _run([claude, "plugin", "marketplace", "update", "brain"], tmp_path, env).returncode == 0
    out = _run([claude, "plugin", "update", "brain@brain"], tmp_path, env)
    assert out.returncode == 0 and "99.0.0" in _run([claude, "plugin", "list"], tmp_path, env).stdout, out.stdout


class _AppServer:
    """`codex app-server` over stdio (JSON lines): the client protocol Codex's own UIs speak."""

    def __init__(self, codex: str, cwd: Path, env: dict):
        self.proc = subprocess.Popen([codex, "app-server"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines = LineReader(self.proc.stdout)
        self.next_id = 0
        self.seen: list[dict] = []  # messages read while waiting for another one (a notification can come first)

    def send(self, method: str, params: dict | None = None, notify: bool = False) -> int | None:
        message: dict = {"method": method, **({"params": params} if params is not None else {})}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        return message.get("id")

    def until(self, found, bound: float = 120.0) -> dict:
        """The first message ``found`` accepts, among those already read or reading at most ``bound`` seconds."""
        for message in self.seen:
            if found(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + bound
        while (line := self.lines.line(deadline)) is not None:
            if not line.strip():
                continue
            message = json.loads(line)
            if "error" in message and message.get("id") is not None:
                raise AssertionError(message)
            if found(message):
                return message
            self.seen.append(message)
        raise AssertionError(f"no awaited message from codex app-server within {bound:.0f} s")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def _codex_status(codex: str, project: Path, env: dict) -> tuple[dict, dict]:
    """(startup status, MCP server status) of brain in a new thread of ``project``."""
    server = _AppServer(codex, project, env)
    try:
        first = server.send("initialize", {"clientInfo": {"name": "brain-tests", "version": version()}})
        server.until(lambda m: m.get("id") == first)
        server.send("initialized", notify=True)
        ask = server.send("thread/start", {"cwd": str(project), "ephemeral": True})
        thread = server.until(lambda m: m.get("id") == ask)["result"]["thread"]["id"]
        startup = server.until(lambda m: m.get("method") == "mcpServer/startupStatus/updated"
                               and m["params"]["name"] == "brain" and m["params"]["status"] != "starting")
        ask = server.send("mcpServerStatus/list", {"threadId": thread, "detail": "toolsAndAuthOnly"})
        listed = server.until(lambda m: m.get("id") == ask)["result"]["data"]
        return startup["params"], next(s for s in listed if s["name"] == "brain")
    finally:
        server.close()


def _codex_session_start(codex: str, project: Path, env: dict, bound: float = 120.0) -> str:
    """How the plugin's SessionStart hook ended in a `codex exec` session ("completed", "failed", or "none"
    within ``bound`` seconds), read from Codex's own output; the session is then stopped."""
    proc = subprocess.Popen([codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "--ephemeral",
                             "hello"], cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + bound
    lines = LineReader(proc.stdout)
    try:
        while (line := lines.line(deadline)) is not None:
            if line.startswith("hook: SessionStart ") and line.strip() != "hook: SessionStart":
                return line.split("hook: SessionStart ", 1)[1].strip().lower()
        return "none"
    finally:
        proc.kill()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_codex_adds_the_plugin_and_its_server_connects_in_the_project(tmp_path, brain_bin):
    codex = _cli("codex")
    market = copy_marketplace(tmp_path / "checkout")
    node_path = f"{Path(codex).parent}:{BARE_PATH}"
    env = client_env(tmp_path / "home", f"{brain_bin}:{node_path}")
    out = _run([codex, "plugin", "marketplace", "add", str(market)], tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    out = _run([codex, "plugin", "add", "brain@brain", "--json"], tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    listed = json.loads(_run([codex, "plugin", "list", "--json"], tmp_path, env).stdout)
    assert "brain@brain" in json.dumps(listed) and version() in json.dumps(listed), listed

    project = _project(tmp_path, brain_bin)
    startup, status = _codex_status(codex, project, env)
    assert startup["status"] == "ready", startup
    assert status["pluginId"] == "brain@brain" and status["runtimeStatus"] == "connected", status
    assert status["serverInfo"]["title"] == "brain: proj"  # started in the project, which has a brain
    assert "brain_boot" in status["tools"]
    # the check can fail: no brain, uvx or pipx on the PATH
    startup, _ = _codex_status(codex, project, {**env, "PATH": node_path})
    assert startup["status"] == "failed", startup

    # a real session: `codex exec` runs the plugin's SessionStart hook before its first model call (which cannot
    # connect here); hook trust is bypassed for this one run, as a user grants it once in /hooks
    assert _codex_session_start(codex, project, env) == "completed"
    (state_file,) = (project / ".brain" / "runtime" / "hooks").glob("claude-*.json")
    state = json.loads(state_file.read_text())
    assert state["source"] == "startup" and state["party"].endswith("-codex@testbox"), state  # the client's role

    out = _run([str(brain_bin / "brain"), "install", "codex", "--json"], project, env)
    assert out.returncode == 0 and json.loads(out.stdout)["covered_by"] == "brain@brain", out.stdout + out.stderr
    assert "mcp_servers" not in (tmp_path / "home" / ".codex" / "config.toml").read_text()

    # a release: the version bumped in the checkout, then adding the plugin again takes it
    bump(market, "99.0.0")
    assert _run([codex, "plugin", "add", "brain@brain"], tmp_path, env).returncode == 0
    assert "99.0.0" in _run([codex, "plugin", "list"], tmp_path, env).stdout


# -- one-line runs ---------------------------------------------------------------------------------------------
def _runner(name: str) -> str:
    """uv's or pipx's command: on PATH, else next to this Python (the dev extra installs both into the venv)."""
    path = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(path).is_file():
        pytest.skip(f"`{name}` is not installed (pip install -e '.[dev]' brings it)")
    return path


@pytest.mark.slow
def test_uvx_runs_brain_from_the_built_wheel_in_one_line(tmp_path, wheel):
    uvx = _runner("uvx")
    house = tmp_path / "wheelhouse"  # the wheel and its one dependency: uv runs offline
    shutil.copytree(wheel.parent, house)
    out = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-cache-dir", "--no-deps", "-w", str(house),
                "PyYAML>=6"], tmp_path, None, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    env = {**client_env(tmp_path / "home", BARE_PATH), "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
           "UV_TOOL_DIR": str(tmp_path / "uv-tools"), "UV_PYTHON_DOWNLOADS": "never", "UV_OFFLINE": "1"}
    project = tmp_path / "proj"
    project.mkdir()
    base = [uvx, "--no-config", "--no-index", "--find-links", str(house)]
    out = _run([*base, "--from", f"agent-brain=={version()}", "brain", "--version"], project, env)
    assert out.returncode == 0 and out.stdout.strip() == f"brain {version()}", out.stderr[-2000:]
    out = _run([*base, "agent-brain", "init"], project, env)  # the package's own name is a command too
    assert out.returncode == 0 and (project / ".brain" / "now.md").is_file(), out.stderr[-2000:]
    out = _run([*base, "--from", "agent-brain", "brain", "boot", "--json"], project, env)
    assert out.returncode == 0 and json.loads(out.stdout)["tokens"] > 0, out.stderr[-2000:]


@pytest.mark.slow
def test_pipx_runs_brain_from_the_built_wheel_in_one_line(tmp_path, wheel):
    pipx = _runner("pipx")
    env = {**client_env(tmp_path / "home", BARE_PATH), "PIPX_HOME": str(tmp_path / "pipx"),
           "PIPX_BIN_DIR": str(tmp_path / "pipx-bin"), "PIPX_MAN_DIR": str(tmp_path / "pipx-man")}
    project = tmp_path / "proj"
    project.mkdir()
    out = _run([pipx, "run", "--spec", str(wheel), "brain", "--version"], project, env, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == f"brain {version()}", out.stderr[-2000:]
