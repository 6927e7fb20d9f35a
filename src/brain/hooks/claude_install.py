"""Installing brain into a Claude Code project (and its CLAUDE.md pointer line), and removing exactly that.

Nothing machine-specific goes into a file the repository shares. The MCP server entry, whose
command is this machine's absolute path, goes to Claude Code's local scope (`~/.claude.json`,
``projects.<key>.mcpServers.brain``, see ``claude_scope``); the hooks go to
`.claude/settings.local.json`, the project's personal settings file, kept out of git (a tracked
one is refused, an unignored one is added to the clone's `info/exclude`). The repository gets
only the CLAUDE.md pointer line, which names no path. brain entries an earlier version put in
the shared `.mcp.json` and `.claude/settings.json` are taken out on install.

Every file of the repository is read and written through ``repofiles`` (never through a link
the repository ships), and everything is validated before the first write. Entries are inserted
as text (``jsonedit``) so the user's bytes stay; what install found is recorded in
`runtime/installs/claude-code.json` so uninstall restores it exactly, or, when the user edited
the file since, cuts only brain's entries out.
"""


from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

from ..errors import IntegrationConflict, InvalidInput
from . import repofiles
from .claude_scope import is_our_server as _is_our_server
from .events import HOOK_EVENTS
from .jsonedit import add_element, add_member, find, read_json_object, remove_element, remove_member, scan
from .jsonfile import dump_json, parse_json_text, sha256_text
from .manifest import manifest_path, read_manifest, write_manifest
from .pointer import add_pointer, remove_pointer

__all__ = ["install", "uninstall", "HOOK_EVENTS", "hook_command", "MARK", "CLIENT", "LOCAL_SETTINGS"]

CLIENT = "claude-code"
MARK = "hook claude-code"


def hook_command(brain_argv: list[str], sub: str) -> str:
    return " ".join(shlex.quote(a) for a in brain_argv) + f" {MARK} {sub}"


def _is_ours(group) -> bool:
    return isinstance(group, dict) and any(isinstance(h, dict) and MARK in str(h.get("command", ""))
                                           for h in group.get("hooks", []) if isinstance(group.get("hooks"), list))


def _strip_hooks(settings: dict) -> dict:
    """``settings`` without brain's hook groups (empty containers brain leaves behind go too)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    new_hooks = {}
    for event, groups in hooks.items():
        if isinstance(groups, list) and any(_is_ours(g) for g in groups):
            kept = [g for g in groups if not _is_ours(g)]
            if kept:
                new_hooks[event] = kept
        else:
            new_hooks[event] = groups
    out = dict(settings)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks if hooks else hooks
    else:
        del out["hooks"]
    return out


def _add_hooks(settings: dict, brain_argv: list[str]) -> dict:
    out = dict(settings)
    if "hooks" in out and not isinstance(out["hooks"], dict):  # checked before dict() reads a list as pairs
        raise InvalidInput("the `hooks` of the Claude Code settings is not an object; nothing was changed", field="hooks")
    hooks = dict(out.get("hooks") or {})
    for event, (matcher, sub, timeout) in HOOK_EVENTS.items():
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": hook_command(brain_argv, sub), "timeout": timeout}]
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise InvalidInput(f"hooks.{event} in the Claude Code settings is not a list; nothing was changed",
                               field="hooks")
        hooks[event] = [*existing, group]
    out["hooks"] = hooks
    return out


LOCAL_SETTINGS = ".claude/settings.local.json"
SHARED_FILES = (".mcp.json", ".claude/settings.json")  # where versions before this one put brain's entries


def _base_text(text: str | None, entry: dict | None, has_ours: bool, strip) -> str | None:
    """The text to add brain's entries to: the user's own file, without any earlier brain entries."""
    if not has_ours:
        return text
    if entry and entry.get("written") == sha256_text(text) and "original" in entry:
        return entry["original"]  # untouched since the last install: start again from the user's bytes
    return dump_json(strip(parse_json_text(text, "")), text)  # edited since: brain's old entries out, normalized


def _with_hooks(text: str | None, brain_argv: list[str]) -> str:
    if text is None or not text.strip():
        return dump_json(_add_hooks({}, brain_argv), text)
    for event, (matcher, sub, timeout) in HOOK_EVENTS.items():
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": hook_command(brain_argv, sub), "timeout": timeout}]
        root = scan(text)
        hooks = find(root, "hooks")
        if hooks is None:
            text = add_member(text, root, "hooks", {event: [group]})
        elif find(hooks, event) is None:
            text = add_member(text, hooks, event, [group])
        else:
            text = add_element(text, find(hooks, event), group)
    return text


def _undo_plan(repo: Path, rel: str, entry: dict | None) -> tuple[str, str | None] | None:
    """How to take brain's entries out of ``rel``: ("restore", original bytes) when the file is as brain left
    it, ("write", text without them) or ("delete", None); None when nothing of brain's is there."""
    text = repofiles.read_text(repo, rel)
    if text is None:
        return None
    entry = entry or {}
    original = entry.get("original") if "original" in entry else text
    if entry.get("written") and sha256_text(text) == entry["written"]:
        return ("delete", None) if original is None else ("restore", original)
    parse_json_text(text, repo / rel)  # a broken file is refused before anything is written
    new = _without_ours(rel, text, original)
    if new is None:
        return None
    return ("delete", None) if not json.loads(new) and original is None else ("write", new)


def _apply(repo: Path, rel: str, plan: tuple[str, str | None]) -> None:
    action, text = plan
    if action == "delete":
        repofiles.remove(repo, rel)
    else:
        repofiles.write_text(repo, rel, text)


def install(brain, brain_argv: list[str], env: dict[str, str] | None = None) -> dict:
    """Add the local-scope MCP entry and the local hooks; idempotent; validates everything first and
    refuses (writing nothing) on a link in the repository, a foreign `brain` server or a broken file."""
    from .claude_scope import claude_state, local_server, project_key, write_server
    from .localfile import keep_out_of_git
    from .pointer import check_pointer

    env = dict(os.environ) if env is None else env
    repo = brain.repo
    manifest = read_manifest(brain, CLIENT)
    files = manifest.get("files", {})
    # validate everything first: nothing is written unless every file can be
    for rel in (*SHARED_FILES, LOCAL_SETTINGS):
        repofiles.check(repo, rel)
    check_pointer(repo, CLIENT)
    shared_servers = parse_json_text(repofiles.read_text(repo, ".mcp.json"), repo / ".mcp.json").get("mcpServers")
    if isinstance(shared_servers, dict) and "brain" in shared_servers and not _is_our_server(shared_servers["brain"]):
        raise IntegrationConflict(".mcp.json", "mcpServers.brain")  # the local entry would hide the user's server
    settings_text = repofiles.read_text(repo, LOCAL_SETTINGS)
    settings = parse_json_text(settings_text, repo / LOCAL_SETTINGS)
    _add_hooks(_strip_hooks(settings), brain_argv)  # raises on a `hooks` that is not an object of lists
    keep_out_of_git(repo, LOCAL_SETTINGS, write=False)  # raises SharedFile on a tracked one
    key = project_key(repo)
    config_text, created = _config_plan(env, key, brain_argv, manifest.get("claude_config") or {})
    shared = {rel: _undo_plan(repo, rel, files.get(rel)) for rel in SHARED_FILES}
    base = _base_text(settings_text, files.get(LOCAL_SETTINGS), _strip_hooks(settings) != settings, _strip_hooks)
    settings_new = _with_hooks(base, brain_argv)
    json.loads(settings_new)  # what we write parses

    # write
    repofiles.write_text(repo, LOCAL_SETTINGS, settings_new)
    entry = dict(files.get(LOCAL_SETTINGS) or {})
    if "original" not in entry or entry.get("written") != sha256_text(settings_text):
        entry["original"] = base
    entry["written"] = sha256_text(settings_new)
    exclude = keep_out_of_git(repo, LOCAL_SETTINGS, write=True) or manifest.get("exclude")
    write_server(env, config_text)
    removed = []
    for rel, plan in shared.items():
        if plan is not None:
            _apply(repo, rel, plan)
            removed.append(rel)
    pointer = add_pointer(repo, CLIENT, manifest)  # CLAUDE.md: the file Claude Code reads instructions from
    kept = {rel: e for rel, e in files.items() if rel not in SHARED_FILES and rel != LOCAL_SETTINGS}
    config_record = {"file": str(_config_file(env)), "key": key, "entry": local_server(env, key), **created}
    manifest = {"client": CLIENT, "at": manifest.get("at", time.time()), "command": brain_argv,
                "files": {**kept, LOCAL_SETTINGS: entry}, "claude_config": config_record, "exclude": exclude,
                **pointer}
    write_manifest(brain, CLIENT, manifest)
    state = claude_state(repo, env, hooks_installed=True, mcpjson_brain=False)
    return {"client": CLIENT, "files": [LOCAL_SETTINGS], "config": config_record["file"], "key": key,
            "command": brain_argv, "removed_shared": removed,
            "excluded": exclude["line"] if exclude else None,
            "pointer": pointer["pointer_file"] if pointer["pointer_added"] else None,
            "hooks": {e: hook_command(brain_argv, sub) for e, (_, sub, _) in HOOK_EVENTS.items()},
            "trusted": state["trusted"], "pending": state["pending"]}


def _config_plan(env: dict[str, str], key: str, brain_argv: list[str], recorded: dict) -> tuple[str, dict]:
    """Claude Code's config with brain's local-scope server (validated, not written), and what the first
    install found missing (the project's entry, the file): uninstall removes only what install created."""
    from .claude_scope import plan_server

    created = {k: recorded.get(k) for k in ("created_project", "created_file")}
    if created["created_project"] is None:
        projects = read_json_object(_config_file(env)).get("projects")
        created = {"created_project": not (isinstance(projects, dict) and key in projects),
                   "created_file": not _config_file(env).exists()}
    return plan_server(env, key, brain_argv, recorded), created


def _config_file(env: dict[str, str]) -> Path:
    from .claude_scope import config_file

    return config_file(env)


def uninstall(brain, env: dict[str, str] | None = None) -> dict:
    """Remove exactly what install added: original bytes back when a file is as brain left it, brain's entries
    cut out of one edited since; the local-scope server, the `info/exclude` line and the pointer line."""
    from .claude_scope import remove_server
    from .localfile import exclude_record, other_worktrees_using, undo_exclude
    from .pointer import check_pointer

    env = dict(os.environ) if env is None else env
    repo = brain.repo
    manifest = read_manifest(brain, CLIENT)
    files = manifest.get("files") or {rel: {} for rel in (*SHARED_FILES, LOCAL_SETTINGS)}
    for rel in files:  # validate everything first: a link anywhere and nothing is changed
        repofiles.check(repo, rel)
    check_pointer(repo, CLIENT)
    plans = {rel: _undo_plan(repo, rel, entry) for rel, entry in files.items()
             if rel in (*SHARED_FILES, LOCAL_SETTINGS)}
    changed = []
    for rel, plan in plans.items():
        if plan is not None:
            _apply(repo, rel, plan)
            changed.append(rel)
    recorded = manifest.get("claude_config") or {}
    # the local scope (keyed by the main work tree) serves every worktree: it stays while another uses brain
    shared_by = other_worktrees_using(repo, LOCAL_SETTINGS, MARK)
    removed_server = bool(recorded) and not shared_by and remove_server(
        {**env, **({"CLAUDE_CONFIG_DIR": str(Path(recorded["file"]).parent)} if recorded.get("file") else {})},
        recorded.get("key", ""), recorded)
    undo_exclude(manifest.get("exclude") or exclude_record(repo, LOCAL_SETTINGS), repo, LOCAL_SETTINGS, MARK)
    removed_pointer = remove_pointer(repo, manifest)
    manifest_path(brain, CLIENT).unlink(missing_ok=True)
    return {"client": CLIENT, "files": sorted(changed), "config": recorded.get("file") if removed_server else None,
            "kept_for": shared_by, "pointer": manifest.get("pointer_file") if removed_pointer else None}


def _without_ours(rel: str, text: str, original: str | None) -> str | None:
    """``text`` with brain's entries cut out as text (the user's edits and layout stay); None if none."""
    if not text.strip():
        return None
    if rel == ".mcp.json":
        servers = find(scan(text), "mcpServers")
        node = find(servers, "brain") if servers is not None else None
        if node is None or not _is_our_server(json.loads(text[node.start:node.end])):
            return None
        text = remove_member(text, servers, "brain")
        had_servers = bool(original and '"mcpServers"' in original)
        if not json.loads(text).get("mcpServers") and not had_servers:
            text = remove_member(text, scan(text), "mcpServers")
        return text
    changed = False
    while True:
        root = scan(text)
        hooks = find(root, "hooks")
        if hooks is None or hooks.kind != "object":
            break
        hit = next(((event, arr, i) for event, _, arr in hooks.members if arr.kind == "array"
                    for i, item in enumerate(arr.items) if _is_ours(json.loads(text[item.start:item.end]))), None)
        if hit is None:
            break
        event, arr, index = hit
        text = remove_element(text, arr, index)
        changed = True
        root = scan(text)
        hooks = find(root, "hooks")
        if not find(hooks, event).items:  # brain's group was the event's only one
            text = remove_member(text, hooks, event)
            root = scan(text)
            if not find(root, "hooks").members and not (original and '"hooks"' in original):
                text = remove_member(text, root, "hooks")
    return text if changed else None
