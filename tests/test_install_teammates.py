"""`brain install` writes nothing machine-specific into the repository; a teammate's clone works after their install.

The absolute command goes to the client's per-user or per-project-local scope (Claude Code's
local scope in `~/.claude.json`, `.claude/settings.local.json` kept out of git, Codex's own
config); install and `brain doctor` read Claude Code's trust and approval state and name the
step that approves what is pending. Each test uses real git repositories, a temporary HOME per
person, and the real `claude` / `codex` CLIs to read what brain wrote (skipped without them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from brain.hooks.claude_scope import claude_state, config_file, local_server, project_key
from brain.hooks.localfile import SharedFile
from conftest import git
from test_client_wiring import BARE_PATH, OFFLINE, _client, bare_env, trust_folder


def person(tmp_path: Path, name: str) -> dict[str, str]:
    """One person's environment: their own HOME, Claude Code and Codex config."""
    home = tmp_path / name / "home"
    home.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home)}
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "VIRTUAL_ENV"):
        env.pop(var, None)
    return env


def brain_as(python: str, repo: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "brain", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120)


def second_venv(where: Path) -> str:
    """A venv at another location (the teammate's), seeing brain and its dependencies: no network needed."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    site = Path(subprocess.run([str(where / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    ours = sysconfig.get_paths()["purelib"]
    (site / "first-venv.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return str(where / "bin" / "python")


def claude_list(claude_bin: str, repo: Path, env: dict) -> str:
    out = subprocess.run([claude_bin, "mcp", "list"], cwd=repo, capture_output=True, text=True, timeout=120,
                         env={**bare_env(env), **OFFLINE, "PATH": f"{Path(claude_bin).parent}:{BARE_PATH}"})
    assert out.returncode == 0, out.stderr
    return out.stdout


def codex_list(codex_bin: str, repo: Path, env: dict) -> dict:
    out = subprocess.run([codex_bin, "mcp", "list", "--json"], cwd=repo, capture_output=True, text=True, timeout=120,
                         env={**env, "PATH": f"{Path(codex_bin).parent}:{BARE_PATH}"})
    assert out.returncode == 0, out.stderr
    return {s["name"]: s for s in json.loads(out.stdout)}


def tracked_mentions(repo: Path, *needles: str) -> list[str]:
    """Tracked files holding any of ``needles`` (`git grep` over what a clone gets)."""
    hits = []
    for needle in needles:
        out = subprocess.run(["git", "grep", "-l", "-F", "-e", needle], cwd=repo, capture_output=True, text=True)
        hits += out.stdout.split()
    return hits


def test_a_teammates_clone_works_after_their_own_install_and_no_tracked_file_names_the_first_machine(brain,
                                                                                                   tmp_path):
    claude_bin, codex_bin = _client("claude"), _client("codex")
    alice = person(tmp_path, "alice")
    first = brain.repo
    for client in ("claude-code", "codex"):
        out = brain_as(sys.executable, first, alice, "install", client)
        assert out.returncode == 0, out.stderr
    assert "brain: " in claude_list(claude_bin, first, alice) and "Connected" in claude_list(claude_bin, first, alice)
    git(first, "add", "-A")  # everything git does not ignore: what the team gets
    git(first, "commit", "-q", "-m", "brain installed")
    venv_one = str(Path(sys.executable).parent.parent)
    assert tracked_mentions(first, venv_one, alice["HOME"], str(first)) == []
    assert ".claude/settings.local.json" not in git(first, "ls-files")

    # Bob clones to another path, with another HOME and another venv
    bob = person(tmp_path, "bob")
    clone = tmp_path / "bob" / "work" / "project"
    subprocess.run(["git", "clone", "-q", str(first), str(clone)], check=True, timeout=120)
    assert "brain:" not in claude_list(claude_bin, clone, bob)  # nothing of Alice's machine came with the clone
    python_two = second_venv(tmp_path / "bob" / "venv")
    for client in ("claude-code", "codex"):
        out = brain_as(python_two, clone, bob, "install", client, "--json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["command"][0] == python_two
    line = next(x for x in claude_list(claude_bin, clone, bob).splitlines() if x.startswith("brain:"))
    assert "Connected" in line and python_two in line, line
    transport = codex_list(codex_bin, clone, bob)["brain"]["transport"]
    assert transport["command"] == python_two
    hooks = (clone / ".claude" / "settings.local.json").read_text()
    assert python_two in hooks and venv_one not in hooks
    doctor = json.loads(brain_as(python_two, clone, bob, "doctor", "--json").stdout)
    checks = {c["check"]: c for c in doctor}
    assert checks["client:claude-code"]["ok"] and checks["client:codex"]["ok"], checks
    assert checks["shared client files"]["ok"]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True,
                          text=True).stdout == ""  # Bob's install changed no shared file: nothing to commit
    assert tracked_mentions(clone, python_two, bob["HOME"], str(clone), venv_one, alice["HOME"]) == []


LEGACY_MCP = {"mcpServers": {"other": {"command": "other-server", "args": []},
                             "brain": {"type": "stdio", "command": "/home/alice/.venv/bin/brain", "args": ["serve"],
                                       "env": {}}}}
LEGACY_HOOK = {"type": "command", "command": "/home/alice/.venv/bin/brain hook claude-code stop", "timeout": 30}


def test_an_earlier_install_in_the_shared_files_moves_to_the_local_scope(brain, tmp_path):
    """What earlier versions committed (Alice's absolute path in .mcp.json and .claude/settings.json) is taken out
    of the shared files by the next install; the user's own entries stay."""
    env = person(tmp_path, "bob")
    repo = brain.repo
    (repo / ".mcp.json").write_text(json.dumps(LEGACY_MCP, indent=2) + "\n")
    (repo / ".claude").mkdir()
    settings = {"model": "opus", "hooks": {"Stop": [{"hooks": [LEGACY_HOOK]},
                                                    {"hooks": [{"type": "command", "command": "say done"}]}]}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    before = {c["check"]: c for c in json.loads(brain_as(sys.executable, repo, env, "doctor", "--json").stdout)}
    shared = before["shared client files"]
    assert not shared["ok"] and "brain install claude-code" in shared["fix"]
    approval = before["claude-code approval"]
    assert not approval["ok"] and "pending" in approval["detail"]  # Claude Code has not approved the shared server

    out = brain_as(sys.executable, repo, env, "install", "claude-code", "--json")
    assert out.returncode == 0, out.stderr
    assert sorted(json.loads(out.stdout)["removed_shared"]) == [".claude/settings.json", ".mcp.json"]
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {"other": LEGACY_MCP["mcpServers"]["other"]}}
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == {
        "model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    assert "/home/alice" not in (repo / ".claude" / "settings.local.json").read_text()
    after = {c["check"]: c for c in json.loads(brain_as(sys.executable, repo, env, "doctor", "--json").stdout)}
    assert after["shared client files"]["ok"]


def test_install_and_doctor_name_what_claude_code_still_has_to_approve(brain, tmp_path):
    env = person(tmp_path, "carol")
    out = brain_as(sys.executable, brain.repo, env, "install", "claude-code", "--json")
    data = json.loads(out.stdout)
    key = project_key(brain.repo)
    assert data["trusted"] is False and len(data["pending"]) == 1
    assert f"run `claude` once in {key}" in data["pending"][0]["step"]
    check = {c["check"]: c for c in json.loads(brain_as(sys.executable, brain.repo, env, "doctor", "--json").stdout)}
    assert check["claude-code approval"]["level"] == "warning"
    assert check["claude-code approval"]["fix"] == data["pending"][0]["step"]

    trust_folder(env, brain.repo)  # what accepting the dialog records
    state = claude_state(brain.repo, env, hooks_installed=True, mcpjson_brain=False)
    assert state["trusted"] and state["pending"] == []
    check = {c["check"]: c for c in json.loads(brain_as(sys.executable, brain.repo, env, "doctor", "--json").stdout)}
    assert check["claude-code approval"]["ok"]


def test_trust_of_a_parent_folder_counts_and_a_rejected_shared_server_is_named(brain, tmp_path):
    env = person(tmp_path, "dan")
    path = config_file(env)
    parent = str(Path(os.path.realpath(brain.repo)).parent)
    path.write_text(json.dumps({"projects": {parent: {"hasTrustDialogAccepted": True},
                                             project_key(brain.repo): {"disabledMcpjsonServers": ["brain"]}}}))
    state = claude_state(brain.repo, env, hooks_installed=True, mcpjson_brain=True)
    assert state["trusted"] and state["mcpjson_approval"] == "rejected" and len(state["pending"]) == 1
    (brain.repo / ".claude").mkdir()
    (brain.repo / ".claude" / "settings.local.json").write_text('{"enableAllProjectMcpServers": true}')
    path.write_text(json.dumps({"projects": {parent: {"hasTrustDialogAccepted": True}}}))
    assert claude_state(brain.repo, env, hooks_installed=True, mcpjson_brain=True)["mcpjson_approval"] == "approved"


def test_the_shared_server_state_brain_reports_is_what_claude_code_shows(brain, tmp_path):
    """Read by experiment with the real CLI: a `.mcp.json` server not approved is "Pending approval", and
    approving it in `.claude/settings.local.json` is what the CLI honours; brain reads the same."""
    claude_bin = _client("claude")
    env = person(tmp_path, "erin")
    (brain.repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"brain": {
        "command": sys.executable, "args": ["-m", "brain", "serve"]}}}))
    line = next(x for x in claude_list(claude_bin, brain.repo, env).splitlines() if x.startswith("brain:"))
    assert "Pending approval" in line
    assert claude_state(brain.repo, env, hooks_installed=False, mcpjson_brain=True)["mcpjson_approval"] == "pending"
    (brain.repo / ".claude").mkdir()
    (brain.repo / ".claude" / "settings.local.json").write_text('{"enabledMcpjsonServers": ["brain"]}\n')
    line = next(x for x in claude_list(claude_bin, brain.repo, env).splitlines() if x.startswith("brain:"))
    assert "Pending approval" not in line
    assert claude_state(brain.repo, env, hooks_installed=False, mcpjson_brain=True)["mcpjson_approval"] == "approved"


def test_a_tracked_local_settings_file_is_refused_and_an_unignored_one_is_kept_out_of_git(brain, tmp_path):
    env = person(tmp_path, "fay")
    repo = brain.repo
    exclude = repo / ".git" / "info" / "exclude"
    exclude_before = exclude.read_bytes() if exclude.exists() else None
    out = brain_as(sys.executable, repo, env, "install", "claude-code", "--json")
    assert json.loads(out.stdout)["excluded"] == "/.claude/settings.local.json"
    assert subprocess.run(["git", "check-ignore", "-q", ".claude/settings.local.json"], cwd=repo).returncode == 0
    exclude.write_bytes(exclude_before or b"")  # someone drops the line: doctor says the file is not ignored
    check = {c["check"]: c for c in json.loads(brain_as(sys.executable, repo, env, "doctor", "--json").stdout)}
    assert not check["shared client files"]["ok"] and check["shared client files"]["level"] == "warning"
    assert brain_as(sys.executable, repo, env, "install", "claude-code").returncode == 0  # puts it back
    assert brain_as(sys.executable, repo, env, "uninstall", "claude-code").returncode == 0
    assert (exclude.read_bytes() if exclude.exists() else None) in (exclude_before, b"")

    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    git(repo, "add", "-f", ".claude/settings.local.json")
    git(repo, "commit", "-q", "-m", "someone committed their local settings")
    out = brain_as(sys.executable, repo, env, "install", "claude-code", "--json")
    assert out.returncode == SharedFile.exit_code and json.loads(out.stderr)["error"] == "shared_file"
    assert (repo / ".claude" / "settings.local.json").read_text() == "{}\n"
    assert not config_file(env).exists()


def test_uninstall_gives_claude_codes_config_back_byte_for_byte(brain, tmp_path):
    env = person(tmp_path, "gus")
    path = config_file(env)
    original = ('{\n  "numStartups": 3,\n  "projects": {\n    "/elsewhere": {\n      "mcpServers": {}\n    }\n  },\n'
                '  "theme": "dark"\n}\n')
    path.write_text(original)
    assert brain_as(sys.executable, brain.repo, env, "install", "claude-code").returncode == 0
    assert local_server(env, project_key(brain.repo))["args"][-1] == "serve"
    assert json.loads(path.read_text())["theme"] == "dark"
    assert brain_as(sys.executable, brain.repo, env, "install", "claude-code").returncode == 0  # idempotent
    assert brain_as(sys.executable, brain.repo, env, "uninstall", "claude-code").returncode == 0
    assert path.read_text() == original


def test_every_worktree_shares_claude_codes_project_key(brain, tmp_path):
    """Claude Code files a linked worktree's local-scope servers under the main work tree (checked with
    `claude mcp add --scope local` in a worktree): brain computes the same key."""
    worktree = tmp_path / "wt"
    git(brain.repo, "worktree", "add", "-q", str(worktree))
    assert project_key(worktree) == project_key(brain.repo) == os.path.realpath(brain.repo)
    assert project_key(brain.repo / ".brain") == os.path.realpath(brain.repo)  # a subfolder: the work tree


def test_worktrees_share_the_local_scope_and_the_exclude_line_until_the_last_uninstall(brain, tmp_path):
    """Claude Code's local scope and the clone's `info/exclude` serve every worktree: uninstalling in one
    worktree leaves them while another still has brain's hooks; the last uninstall removes both."""
    env = person(tmp_path, "hal")
    worktree = tmp_path / "wt"
    git(brain.repo, "add", "-A")
    git(brain.repo, "commit", "-q", "-m", "brain")
    git(brain.repo, "worktree", "add", "-q", str(worktree))
    exclude = Path(git(brain.repo, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude").strip())
    before = exclude.read_text() if exclude.exists() else None
    for where in (brain.repo, worktree):
        assert brain_as(sys.executable, where, env, "install", "claude-code").returncode == 0
    key = project_key(brain.repo)
    out = brain_as(sys.executable, brain.repo, env, "uninstall", "claude-code", "--json")
    assert out.returncode == 0
    assert local_server(env, key) is not None  # the worktree's sessions still start brain
    assert subprocess.run(["git", "check-ignore", "-q", ".claude/settings.local.json"], cwd=worktree).returncode == 0
    assert json.loads(out.stdout)["kept_for"] == [str(worktree)]
    if _client_or_none("claude"):
        line = next(x for x in claude_list(_client("claude"), worktree, env).splitlines() if x.startswith("brain:"))
        assert "Connected" in line
    assert brain_as(sys.executable, worktree, env, "uninstall", "claude-code").returncode == 0
    assert local_server(env, key) is None
    assert (exclude.read_text() if exclude.exists() else None) == before


def _client_or_none(name: str) -> str | None:
    import shutil

    return shutil.which(name)
