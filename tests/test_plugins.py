"""brain's Claude Code and Codex plugins, as files: one version, the hooks, the launcher, the install check.

- One version number: brain.__version__ is the package's (pyproject reads it), and every copy
  (both plugin manifests, the Claude Code marketplace entry, the launcher's pin, server.json) must
  say the same, so a bump that forgets one fails here.
- The launcher (`plugins/brain/scripts/brain-run`, and the same lines inline in .codex-mcp.json)
  is run by the real /bin/sh with a PATH made for each case: the user's `brain`, never a file the
  project ships, uvx and pipx started from / (they read the folder they start in), a clear error.
- `brain install` says when the plugin already covers a client and writes nothing.
The real clients' round trips are in test_plugins_clients.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from plugin_kit import BARE_PATH, LAUNCHER, PLUGIN, ROOT, launcher_body, load, version

from brain.hooks.events import HOOK_EVENTS

SHARED_FILES = [p for p in [ROOT / ".claude-plugin" / "marketplace.json", ROOT / ".agents" / "plugins" /
                            "marketplace.json", *sorted(PLUGIN.rglob("*"))] if p.is_file()]


def test_one_version_number_for_the_package_both_plugins_and_server_json():
    v = version()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "brain.__version__"}
    claude_market = load(".claude-plugin/marketplace.json")
    copies = {
        "plugins/brain/.claude-plugin/plugin.json": load("plugins/brain/.claude-plugin/plugin.json")["version"],
        "plugins/brain/.codex-plugin/plugin.json": load("plugins/brain/.codex-plugin/plugin.json")["version"],
        ".claude-plugin/marketplace.json plugins[brain]": next(
            p["version"] for p in claude_market["plugins"] if p["name"] == "brain"),
        ".claude-plugin/marketplace.json metadata": claude_market["metadata"]["version"],
        "scripts/brain-run v=": re.search(r"^v=(\S+)$", launcher_body(), re.MULTILINE).group(1),
        "server.json version": load("server.json")["version"],
        "server.json packages[0].version": load("server.json")["packages"][0]["version"],
    }
    assert copies == dict.fromkeys(copies, v), f"brain.__version__ is {v}: update these copies {copies}"


def test_the_codex_server_runs_the_launcher_inline_and_both_manifests_name_the_plugin_brain():
    server = load("plugins/brain/.codex-mcp.json")["mcpServers"]["brain"]
    # Codex expands no plugin-root variable in an MCP command and starts it in the project: the lines are inline
    assert server == {"command": "sh", "args": ["-c", launcher_body(), "brain-run", "serve"]}
    claude = load("plugins/brain/.mcp.json")["mcpServers"]["brain"]
    assert claude == {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/brain-run", "args": ["serve"]}
    codex = load("plugins/brain/.codex-plugin/plugin.json")
    assert codex["name"] == load("plugins/brain/.claude-plugin/plugin.json")["name"] == "brain"
    assert codex["mcpServers"] == "./.codex-mcp.json" and codex["skills"] == "./skills/"
    # its own hooks file: without the field Codex would load hooks/hooks.json, Claude Code's
    assert codex["hooks"] == "./hooks/codex-hooks.json"
    entry = load(".agents/plugins/marketplace.json")["plugins"][0]
    assert entry["name"] == "brain" and entry["source"] == {"source": "local", "path": "./plugins/brain"}
    assert load(".claude-plugin/marketplace.json")["plugins"][0]["source"] == "./plugins/brain"
    assert os.access(LAUNCHER, os.X_OK)


@pytest.mark.parametrize("client, rel, starts, longest_end", [
    ("claude-code", "plugins/brain/hooks/hooks.json", ["startup|resume", "compact"], 60),
    # Codex: its SessionStart sources; it clamps a SessionEnd hook to 3 s (and warns at every start above it)
    ("codex", "plugins/brain/hooks/codex-hooks.json", ["startup|resume|clear"], 3),
])
def test_the_hooks_call_brains_hook_entry_for_each_event_through_the_launcher(client, rel, starts, longest_end):
    hooks = load(rel)["hooks"]
    assert set(hooks) == set(HOOK_EVENTS) == {"SessionStart", "PreCompact", "Stop", "SessionEnd"}
    assert [g.get("matcher") for g in hooks["SessionStart"]] == starts
    for event, groups in hooks.items():
        for group in groups:
            (hook,) = group["hooks"]
            assert hook["type"] == "command"
            # both clients expand ${CLAUDE_PLUGIN_ROOT} in a plugin's hook commands
            assert hook["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/brain-run" hook {client} {event}'
            assert 0 < hook["timeout"] <= (longest_end if event == "SessionEnd" else 30)


def test_the_skills_are_there_and_nothing_shared_names_a_machine_path():
    for name in ("boot", "remember", "checkpoint", "claim"):
        text = (PLUGIN / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
        head = re.match(r"---\nname: (\S+)\ndescription: (.+)\n---\n", text)
        assert head and head.group(1) == name and len(head.group(2)) > 40, name
    machine = re.compile(r"/(?:work|tmp|home|root|Users|opt)/|\.venv|site-packages")
    for path in [*SHARED_FILES, ROOT / "server.json"]:
        assert not machine.search(path.read_text(encoding="utf-8")), path


# -- the launcher, run by the real shell ----------------------------------------------------------------------
def _tool(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def _recorder(folder: Path, name: str, log: Path) -> Path:
    """A stand-in for uvx or pipx that records where it started and what it was asked to run."""
    return _tool(folder, name, f'{{ pwd; for a in "$@"; do printf "%s\\n" "$a"; done; }} > "{log}"\n')


def _run(cwd: Path, path: str, *args: str, env: dict | None = None, inline: bool = False):
    argv = ["/bin/sh", "-c", launcher_body(), "brain-run", *args] if inline else ["/bin/sh", str(LAUNCHER), *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={"HOME": str(cwd), "PATH": path, **(env or {})}, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("inline", [False, True], ids=["script", "inline"])
def test_the_launcher_runs_the_users_brain_and_never_the_projects(tmp_path, inline):
    project = tmp_path / "project"
    project.mkdir()
    user_bin = tmp_path / "user-bin"
    _tool(user_bin, "brain", 'echo "user brain $*"\n')
    out = _run(project, f"{user_bin}:{BARE_PATH}", "serve", inline=inline)
    assert out.returncode == 0 and out.stdout == "user brain serve\n", out.stderr

    # a `brain` the project ships, found through a relative PATH entry, is never run
    ran = tmp_path / "ran"
    _tool(project, "brain", f'touch "{ran}"\n')
    out = _run(project, f".:{BARE_PATH}", "serve", inline=inline)
    assert not ran.exists() and out.returncode == 1
    assert "uv tool install 'agent-brain[mcp]'" in out.stderr and "BRAIN_PLUGIN_COMMAND" in out.stderr
    assert out.stdout == ""  # stdout is the MCP channel: nothing but protocol, even on failure

    out = _run(project, BARE_PATH, "--version", env={"BRAIN_PLUGIN_COMMAND": f"{user_bin}/brain --flag *"},
               inline=inline)
    assert out.stdout == "user brain --flag * --version\n"  # split on spaces, never globbed (brain is in cwd)


@pytest.mark.parametrize("runner", ["uvx", "pipx"])
def test_uvx_and_pipx_start_from_the_root_pinned_to_the_plugins_version(tmp_path, runner):
    project = tmp_path / "project"
    (project / "__pypackages__" / "3.11" / "lib" / "bin").mkdir(parents=True)  # pipx runs this from its cwd
    log = tmp_path / "log"
    tools = tmp_path / "tools"
    _recorder(tools, runner, log)
    out = _run(project, f"{tools}:{BARE_PATH}", "hook", "claude-code", "Stop")
    assert out.returncode == 0, out.stderr
    lines = log.read_text().splitlines()
    v = version()
    if runner == "uvx":  # --no-config: a uv.toml or pyproject.toml of the project never names the index
        expected = ["--no-config", "--quiet", "--from", f"agent-brain[mcp]=={v}", "brain"]
    else:
        expected = ["run", "--quiet", "--spec", f"agent-brain[mcp]=={v}", "brain"]
    assert lines == ["/", *expected, "-C", str(project.resolve()), "hook", "claude-code", "Stop"]

    both = tmp_path / "both"
    _recorder(both, "uvx", tmp_path / "uvx-log")
    _recorder(both, "pipx", tmp_path / "pipx-log")
    assert _run(project, f"{both}:{BARE_PATH}", "serve").returncode == 0
    assert (tmp_path / "uvx-log").exists() and not (tmp_path / "pipx-log").exists()  # uvx first


# -- brain install and the plugin -----------------------------------------------------------------------------
def _fake_claude_plugin(config: Path, *, enabled: bool = True, manifest: bool = True) -> Path:
    """What `claude plugin install brain@brain` leaves in Claude Code's config folder (user scope)."""
    install = config / "plugins" / "cache" / "brain" / "brain" / version()
    (install / ".claude-plugin").mkdir(parents=True)
    if manifest:
        (install / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "brain"}))
    (config / "plugins" / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"brain@brain": [{"scope": "user", "installPath": str(install)}]}}))
    (config / "settings.json").write_text(json.dumps({"enabledPlugins": {"brain@brain": enabled}}))
    return install


def _install(repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", "install", *args, "--json"], cwd=repo, capture_output=True,
                          text=True, timeout=120, env=env)


def test_brain_install_says_when_the_claude_code_plugin_covers_the_project(brain, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    path = _fake_claude_plugin(tmp_path / "claude")
    out = _install(brain.repo, env, "claude-code")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data == {"client": "claude-code", "installed": False, "covered_by": "brain@brain",
                    "where": str(tmp_path / "claude" / "settings.json"), "plugin_path": str(path)}
    assert not (brain.repo / ".claude").exists() and not (tmp_path / "claude" / ".claude.json").exists()
    text = subprocess.run([sys.executable, "-m", "brain", "install", "claude-code"], cwd=brain.repo,
                          capture_output=True, text=True, timeout=120, env=env).stdout
    assert "brain@brain" in text and "nothing installed" in text and "--force" in text

    doctor = subprocess.run([sys.executable, "-m", "brain", "doctor", "--json"], cwd=brain.repo, capture_output=True,
                            text=True, timeout=120, env=env)
    hooks = {c["check"]: c for c in json.loads(doctor.stdout)}["client hooks"]
    assert hooks["ok"] and "claude-code plugin brain@brain" in hooks["detail"], hooks  # doctor names the plugin

    forced = json.loads(_install(brain.repo, env, "claude-code", "--force").stdout)
    assert forced["installed"] is True and (brain.repo / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize("case", ["disabled", "not brain's", "project scope"])
def test_the_plugin_is_detected_only_when_enabled_and_really_brains(brain, tmp_path, case):
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    _fake_claude_plugin(tmp_path / "claude", enabled=case != "disabled", manifest=case != "not brain's")
    if case == "project scope":  # `claude plugin install --scope project`: the shared settings enable it
        (tmp_path / "claude" / "settings.json").unlink()
        (brain.repo / ".claude").mkdir()
        (brain.repo / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"brain@brain": True}}))
    data = json.loads(_install(brain.repo, env, "claude-code").stdout)
    assert data["installed"] is (case != "project scope"), data
    if case == "project scope":
        assert data["where"] == ".claude/settings.json"


def test_brain_install_says_when_the_codex_plugin_covers_it(brain, tmp_path):
    codex_home = tmp_path / "codex"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CODEX_HOME": str(codex_home)}
    cache = codex_home / "plugins" / "cache" / "brain" / "brain" / version() / ".codex-plugin"
    cache.mkdir(parents=True)
    (cache / "plugin.json").write_text(json.dumps({"name": "brain"}))
    (codex_home / "config.toml").write_text('[plugins."brain@brain"]\nenabled = true\n')
    data = json.loads(_install(brain.repo, env, "codex").stdout)
    assert data["installed"] is False and data["covered_by"] == "brain@brain"
    assert "mcp_servers" not in (codex_home / "config.toml").read_text()
    (codex_home / "config.toml").write_text('[plugins."brain@brain"]\nenabled = false\n')
    data = json.loads(_install(brain.repo, env, "codex").stdout)
    assert data["installed"] is True and "[mcp_servers.brain]" in (codex_home / "config.toml").read_text()


# -- `brain hook codex`: the Codex plugin's hooks ------------------------------------------------------------
def _hook(repo: Path, client: str, event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", "hook", client, event], input=json.dumps(payload),
                          cwd=repo, capture_output=True, text=True, timeout=120)


def test_codex_hooks_boot_a_codex_session_and_read_codex_transcripts(brain, tmp_path):
    from brain.log.samples import Call, Task, codex_lines

    sid = "01a23729-963a-7690-862b-3ecacbba5293"
    start = _hook(brain.repo, "codex", "SessionStart", {"session_id": sid, "cwd": str(brain.repo),
                                                        "hook_event_name": "SessionStart", "source": "startup"})
    assert start.returncode == 0 and start.stderr == "", start.stderr
    assert json.loads(start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"  # Codex's strict shape
    state = json.loads((brain.runtime / "hooks" / f"claude-{sid}.json").read_text())
    assert state["party"].endswith("-codex@testbox")  # the client's role, as its MCP server's handshake gives

    tasks = [Task("Add a --verbose flag to cli.py.", [Call(1000, "Done: --verbose is wired.", edits=("cli.py",))])]
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text("\n".join(codex_lines(sid, str(brain.repo), 1.7e9, tasks)) + "\n")
    stop = _hook(brain.repo, "codex", "Stop", {"session_id": sid, "cwd": str(brain.repo), "hook_event_name": "Stop",
                                               "transcript_path": str(rollout), "stop_hook_active": False})
    assert stop.returncode == 0, stop.stderr
    assert json.loads(stop.stdout)["decision"] == "block"  # files edited, now.md not: asked once to update it
    state = json.loads((brain.runtime / "hooks" / f"claude-{sid}.json").read_text())
    assert state["edited"] == ["cli.py"] and state["offset"] == rollout.stat().st_size
