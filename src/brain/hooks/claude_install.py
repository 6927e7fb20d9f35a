"""Installing brain into a Claude Code project (and its CLAUDE.md pointer line), and removing exactly that.

`.mcp.json` gets ``mcpServers.brain`` (`brain serve`); `.claude/settings.json` (or
settings.local.json) gets one hook group per event running `brain hook claude-code EVENT`.
Entries are inserted as text (``jsonedit``) so the user's bytes stay; what install found is
recorded in `runtime/installs/claude-code.json` so uninstall restores it exactly, or, when
the user edited the file since, cuts only brain's entries out.
"""


from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

from ..errors import IntegrationConflict, InvalidInput
from ..memory.files import atomic_write_bytes
from .jsonedit import add_element, add_member, find, read_json_object, remove_element, remove_member, scan
from .jsonfile import dump_json, read_json_file, sha256_text
from .pointer import add_pointer, remove_pointer

__all__ = ["install", "uninstall", "HOOK_EVENTS", "hook_command", "MARK", "CLIENT"]

CLIENT = "claude-code"
MARK = "hook claude-code"
HOOK_EVENTS = {  # event -> (matcher or None, subcommand, timeout seconds)
    "SessionStart": ("startup|resume|clear|compact", "session-start", 30),
    "PreCompact": ("manual|auto", "pre-compact", 30),
    "Stop": (None, "stop", 30),
    "SessionEnd": (None, "session-end", 60),
}
EVENT_OF = {sub: event for event, (_, sub, _) in HOOK_EVENTS.items()}


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
    hooks = dict(out.get("hooks") or {})
    if "hooks" in out and not isinstance(out["hooks"], dict):
        raise InvalidInput("the `hooks` of the Claude Code settings is not an object; nothing was changed", field="hooks")
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


def _server_entry(brain_argv: list[str]) -> dict:
    return {"type": "stdio", "command": brain_argv[0], "args": [*brain_argv[1:], "serve"], "env": {}}


def _is_our_server(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("args"), list) and entry["args"][-1:] == ["serve"] and (
        "brain" in str(entry.get("command", "")) or "brain" in entry["args"])


def _manifest_path(brain) -> Path:
    return brain.runtime / "installs" / f"{CLIENT}.json"


def _base_text(rel: str, text: str | None, data: dict, entry: dict | None, has_ours: bool, strip) -> str | None:
    """The text to add brain's entries to: the user's own file, without any earlier brain entries."""
    if not has_ours:
        return text
    if entry and entry.get("written") == sha256_text(text) and "original" in entry:
        return entry["original"]  # untouched since the last install: start again from the user's bytes
    return dump_json(strip(data), text)  # edited since: brain's old entries out, formatting normalized


def _with_server(text: str | None, entry: dict) -> str:
    if text is None or not text.strip():
        return dump_json({"mcpServers": {"brain": entry}}, text)
    root = scan(text)
    servers = find(root, "mcpServers")
    if servers is None:
        return add_member(text, root, "mcpServers", {"brain": entry})
    return add_member(text, servers, "brain", entry)


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


def install(brain, brain_argv: list[str], *, local: bool = False) -> dict:
    """Add the MCP entry and the hooks; idempotent; refuses (writing nothing) on a foreign `brain` server.

    The entries are inserted as text into the user's files, so every byte of theirs stays as it was."""
    settings_rel = ".claude/settings.local.json" if local else ".claude/settings.json"
    targets = {".mcp.json": brain.repo / ".mcp.json", settings_rel: brain.repo / settings_rel}
    manifest_path = _manifest_path(brain)
    manifest = read_json_object(manifest_path)
    files = manifest.get("files", {})
    # validate everything first: nothing is written unless both files can be
    mcp, mcp_text = read_json_file(targets[".mcp.json"])
    servers = mcp.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(".mcp.json `mcpServers` is not an object; nothing was changed", field="mcpServers")
    if "brain" in servers and not _is_our_server(servers["brain"]):
        raise IntegrationConflict(".mcp.json", "mcpServers.brain")
    settings, settings_text = read_json_file(targets[settings_rel])
    _add_hooks(_strip_hooks(settings), brain_argv)  # raises on a `hooks` that is not an object of lists

    def strip_server(data: dict) -> dict:
        rest = {k: v for k, v in data.get("mcpServers", {}).items() if k != "brain"}
        return {**data, "mcpServers": rest}

    base = _base_text(".mcp.json", mcp_text, mcp, files.get(".mcp.json"), "brain" in servers, strip_server)
    planned = {".mcp.json": (_with_server(base, _server_entry(brain_argv)), base)}
    has_hooks = _strip_hooks(settings) != settings
    base = _base_text(settings_rel, settings_text, settings, files.get(settings_rel), has_hooks, _strip_hooks)
    planned[settings_rel] = (_with_hooks(base, brain_argv), base)
    written = {}
    for rel, (text, original) in planned.items():
        json.loads(text)  # what we write parses
        targets[rel].parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(targets[rel], text.encode("utf-8"))
        entry = dict(files.get(rel) or {})
        if "original" not in entry or entry.get("written") != sha256_text(
                mcp_text if rel == ".mcp.json" else settings_text):
            entry["original"] = original
        entry["written"] = sha256_text(text)
        written[rel] = entry
    pointer = add_pointer(brain.repo, CLIENT, manifest)  # CLAUDE.md: the file Claude Code reads instructions from
    manifest = {"client": CLIENT, "at": manifest.get("at", time.time()), "command": brain_argv,
                "files": {**files, **written}, **pointer}
    atomic_write_bytes(manifest_path, json.dumps(manifest, indent=2).encode("utf-8"), private=True)
    return {"client": CLIENT, "files": sorted(written), "command": brain_argv,
            "pointer": pointer["pointer_file"] if pointer["pointer_added"] else None,
            "hooks": {e: hook_command(brain_argv, sub) for e, (_, sub, _) in HOOK_EVENTS.items()}}


def uninstall(brain) -> dict:
    """Remove exactly what install added: original bytes back when the file is as brain left it."""
    manifest_path = _manifest_path(brain)
    manifest = read_json_object(manifest_path)
    files = manifest.get("files") or {".mcp.json": {}, ".claude/settings.json": {}, ".claude/settings.local.json": {}}
    changed = []
    for rel, entry in files.items():
        path = brain.repo / rel
        data, text = read_json_file(path)
        if text is None:
            continue
        original = entry.get("original") if "original" in entry else text
        if entry.get("written") and sha256_text(text) == entry["written"]:
            if original is None:
                path.unlink()
            else:
                path.write_bytes(original.encode("utf-8"))
            changed.append(rel)
            continue
        new = _without_ours(rel, text, original)
        if new is None:
            continue
        if not json.loads(new) and original is None:
            path.unlink()
        else:
            atomic_write_bytes(path, new.encode("utf-8"))
        changed.append(rel)
    removed_pointer = remove_pointer(brain.repo, manifest)
    manifest_path.unlink(missing_ok=True)
    return {"client": CLIENT, "files": sorted(changed), "pointer": manifest.get("pointer_file") if removed_pointer
            else None}


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
