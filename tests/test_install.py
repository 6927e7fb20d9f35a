"""`brain install claude-code|codex` and `brain uninstall`: merge, never clobber, remove exactly what was added."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from brain.errors import IntegrationConflict, InvalidInput
from brain.hooks import claude, codex

ARGV = [sys.executable, "-m", "brain"]

USER_SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm run test:*)"],
        "deny": []
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ]
    },
    "env": {"FOO": "bär"}
}
"""
USER_MCP = '{\n  "mcpServers": {\n    "other": {"command": "other-server", "args": []}\n  }\n}\n'


def local_server(brain):
    from brain.hooks.claude_scope import local_server, project_key

    return local_server(dict(os.environ), project_key(brain.repo))


def test_install_merges_and_uninstall_restores_the_users_files_byte_for_byte(brain):
    settings = brain.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    (brain.repo / ".mcp.json").write_text(USER_MCP, encoding="utf-8")
    result = claude.install(brain, ARGV)
    assert result["files"] == [".claude/settings.local.json"] and not result["removed_shared"]
    data = json.loads(settings.read_text())
    user = json.loads(USER_SETTINGS)
    assert data["permissions"] == user["permissions"] and data["env"] == user["env"]
    assert data["hooks"]["PreToolUse"] == user["hooks"]["PreToolUse"]
    starts = data["hooks"]["SessionStart"]
    assert starts[0] == user["hooks"]["SessionStart"][0] and len(starts) == 2
    assert starts[1]["matcher"] == "startup|resume|clear|compact"
    assert starts[1]["hooks"][0]["command"].endswith("hook claude-code session-start")
    for event in ("PreCompact", "Stop", "SessionEnd"):
        assert data["hooks"][event][0]["hooks"][0]["command"].endswith(claude.HOOK_EVENTS[event][1])
    assert (brain.repo / ".mcp.json").read_text(encoding="utf-8") == USER_MCP  # shared: not touched
    assert local_server(brain)["args"][-1] == "serve"
    claude.install(brain, ARGV)  # idempotent: still one brain group per event
    data = json.loads(settings.read_text())
    assert len(data["hooks"]["SessionStart"]) == 2 and len(data["hooks"]["Stop"]) == 1
    claude.uninstall(brain)
    assert settings.read_text(encoding="utf-8") == USER_SETTINGS
    assert (brain.repo / ".mcp.json").read_text(encoding="utf-8") == USER_MCP
    assert local_server(brain) is None


def test_uninstall_after_the_user_edited_keeps_their_edits_and_removes_only_brains(brain):
    claude.install(brain, ARGV)  # no settings at all before
    settings = brain.repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    data["model"] = "opus"
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say done"}]})
    settings.write_text(json.dumps(data, indent=2) + "\n")
    claude.uninstall(brain)
    left = json.loads(settings.read_text())
    assert left == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}, "model": "opus"}
    assert not (brain.repo / ".mcp.json").exists() and local_server(brain) is None


def test_a_foreign_brain_server_or_a_broken_file_is_refused_and_nothing_is_written(brain):
    from brain.hooks.claude_scope import config_file, project_key

    (brain.repo / ".mcp.json").write_text('{"mcpServers": {"brain": {"command": "someone-elses"}}}')
    with pytest.raises(IntegrationConflict) as info:
        claude.install(brain, ARGV)
    assert info.value.key == "mcpServers.brain"
    assert not (brain.repo / ".claude").exists() and not config_file(dict(os.environ)).exists()
    (brain.repo / ".mcp.json").unlink()
    config = config_file(dict(os.environ))
    config.parent.mkdir(parents=True)
    mine = json.dumps({"projects": {project_key(brain.repo): {"mcpServers": {"brain": {"command": "mine"}}}}})
    config.write_text(mine)
    with pytest.raises(IntegrationConflict):
        claude.install(brain, ARGV)
    assert config.read_text() == mine and not (brain.repo / ".claude").exists()
    config.unlink()
    (brain.repo / ".claude").mkdir()
    (brain.repo / ".claude" / "settings.local.json").write_text("{ not json")
    with pytest.raises(InvalidInput):
        claude.install(brain, ARGV)
    assert not config.exists()
    assert (brain.repo / ".claude" / "settings.local.json").read_text() == "{ not json"


USER_TOML = '''model = "gpt-5-codex"  # my model

[mcp_servers.other]
command = "other"
args = ["--x"]
'''


def test_codex_install_appends_a_block_and_uninstall_restores_exactly(brain, tmp_path):
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(USER_TOML)
    env = {"HOME": str(home)}
    agents_before = (brain.repo / "AGENTS.md").read_text()
    result = codex.install(brain, ["brain"], env)
    assert result["agents_md"] is False  # `brain init` already put the pointer there
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["brain"] == {"command": "brain", "args": ["serve"]}
    assert parsed["mcp_servers"]["other"] == {"command": "other", "args": ["--x"]} and parsed["model"] == "gpt-5-codex"
    assert config.read_text().startswith(USER_TOML)
    codex.install(brain, ["brain"], env)  # idempotent
    assert config.read_text().count("[mcp_servers.brain]") == 1
    codex.uninstall(brain, env)
    assert config.read_text() == USER_TOML
    assert (brain.repo / "AGENTS.md").read_text() == agents_before


def test_codex_pointer_added_and_removed_and_user_block_refused(brain, tmp_path):
    env = {"HOME": str(tmp_path / "h")}
    (brain.repo / "AGENTS.md").write_text("# Rules\n\nBe nice.\n")
    result = codex.install(brain, ["brain"], env)
    assert result["agents_md"] is True and "brain_boot" in (brain.repo / "AGENTS.md").read_text()
    codex.uninstall(brain, env)
    assert (brain.repo / "AGENTS.md").read_text() == "# Rules\n\nBe nice.\n"
    assert not codex.config_path(env).exists()
    codex.config_path(env).write_text('[mcp_servers.brain]\ncommand = "mine"\n')
    with pytest.raises(IntegrationConflict):
        codex.install(brain, ["brain"], env)
    assert codex.config_path(env).read_text() == '[mcp_servers.brain]\ncommand = "mine"\n'


def test_cli_install_and_uninstall(brain, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path / "h")}
    env.pop("CODEX_HOME", None)
    run = lambda *a: subprocess.run([sys.executable, "-m", "brain", *a], cwd=brain.repo, env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=60)
    out = run("install", "claude-code", "--json", "--command", "brain")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["command"] == ["brain"]
    assert run("install", "codex").returncode == 0
    assert (tmp_path / "h" / ".codex" / "config.toml").exists()
    assert run("uninstall", "claude-code").returncode == 0
    assert run("uninstall", "codex").returncode == 0
    assert not (brain.repo / ".mcp.json").exists() and not (brain.repo / ".claude" / "settings.json").exists()
    assert not (brain.repo / ".claude" / "settings.local.json").exists()
    assert not (tmp_path / "h" / ".codex" / "config.toml").exists()
    assert "claude-code" in run("install", "--help").stdout


# -- text-level JSON edits: the user's bytes stay ----------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from brain.hooks.jsonedit import add_element, add_member, find, scan  # noqa: E402

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=12)
STYLES = st.sampled_from([None, 2, 4, "\t", "compact"])


def styled(value, style) -> str:
    if style == "compact":
        return json.dumps(value, separators=(",", ":"))
    return json.dumps(value, indent=style, ensure_ascii=False) + ("\n" if style else "")


def only_whitespace_changed(before: str, after: str) -> bool:
    """``after`` is ``before`` with one piece inserted (whitespace at the insertion point may change)."""
    i = 0
    while i < min(len(before), len(after)) and before[i] == after[i]:
        i += 1
    j = 0
    while j < min(len(before), len(after)) - i and before[-1 - j] == after[-1 - j]:
        j += 1
    return before[i: len(before) - j].strip() == ""


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), VALUES, max_size=4), STYLES, VALUES,
       st.lists(VALUES, max_size=3), st.sampled_from(["member", "nested", "element"]))
def test_inserting_keeps_every_other_byte(data, style, value, array, where):
    data = {k: v for k, v in data.items() if k not in ("brain", "arr", "obj")}
    data["arr"] = array
    data["obj"] = {"x": 1} if where == "nested" and array else {}
    text = styled(data, style)
    root = scan(text)
    if where == "member":
        out, expected = add_member(text, root, "brain", value), {**data, "brain": value}
    elif where == "nested":
        out, expected = add_member(text, find(root, "obj"), "brain", value), {**data, "obj": {**data["obj"], "brain": value}}
    else:
        out, expected = add_element(text, find(root, "arr"), value), {**data, "arr": [*array, value]}
    assert json.loads(out) == expected
    assert only_whitespace_changed(text, out)


def test_install_keeps_the_users_formatting_byte_for_byte(brain):
    settings = brain.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    (brain.repo / ".mcp.json").write_text(USER_MCP, encoding="utf-8")
    claude.install(brain, ARGV)
    for before in (USER_SETTINGS,):
        after = settings.read_text(encoding="utf-8")
        for line in before.splitlines():
            assert line.rstrip(",") in after  # every line of the user's, as written (a comma may follow now)
    after = settings.read_text(encoding="utf-8")
    assert '{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}' in after
    claude.install(brain, ARGV)  # re-install starts again from the user's bytes
    assert settings.read_text(encoding="utf-8") == after


def test_uninstall_after_a_user_edit_cuts_brains_entries_out_as_text(brain):
    settings = brain.repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    (brain.repo / ".mcp.json").write_text(USER_MCP, encoding="utf-8")
    claude.install(brain, ARGV)
    edit = ('"env": {"FOO": "bär"}', '"env": {"FOO": "bär",   "NEW": "1"}')
    settings.write_text(settings.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    mcp = brain.repo / ".mcp.json"
    mcp.write_text(mcp.read_text().replace('"args": []', '"args": ["--v"]'), encoding="utf-8")
    claude.uninstall(brain)
    assert settings.read_text(encoding="utf-8") == USER_SETTINGS.replace(*edit)
    assert mcp.read_text(encoding="utf-8") == USER_MCP.replace('"args": []', '"args": ["--v"]')
