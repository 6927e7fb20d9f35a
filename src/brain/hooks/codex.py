"""Codex: the MCP server entry in `~/.codex/config.toml` and the AGENTS.md pointer line.

The config is edited as text, never re-serialized: brain appends one block between
marker comments and uninstall removes exactly that block, so every byte of the
user's file is kept. A `[mcp_servers.brain]` table the user wrote is never touched
(the install refuses). Codex has no session hooks: it reads AGENTS.md, whose pointer
line tells the agent to call `brain_boot` first.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from pathlib import Path

from ..errors import IntegrationConflict, InvalidInput
from ..memory.files import atomic_write_bytes
from .pointer import add_pointer, read_utf8, remove_pointer

__all__ = ["install", "uninstall", "config_path", "BEGIN", "END"]

CLIENT = "codex"
BEGIN = "# >>> brain: added by `brain install codex`; `brain uninstall codex` removes this block"
END = "# <<< brain"
_TABLE = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*(?:brain|"brain"|\'brain\')\s*\]', re.MULTILINE)
_BLOCK = re.compile(r"\n?" + re.escape(BEGIN) + r"\n.*?" + re.escape(END) + r"\n?", re.DOTALL)


def config_path(env: dict[str, str]) -> Path:
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _block(brain_argv: list[str]) -> str:
    args = ", ".join(_toml_str(a) for a in [*brain_argv[1:], "serve"])
    return f"{BEGIN}\n[mcp_servers.brain]\ncommand = {_toml_str(brain_argv[0])}\nargs = [{args}]\n{END}\n"


def _manifest_path(brain) -> Path:
    return brain.runtime / "installs" / f"{CLIENT}.json"


def _legacy(manifest: dict) -> dict:
    """A manifest written before the pointer fields were shared with Claude Code (agents_* keys)."""
    if "agents_added" not in manifest:
        return manifest
    return {**manifest, "pointer_file": "AGENTS.md", "pointer_added": manifest.get("agents_added"),
            "pointer_original": manifest.get("agents_original"), "pointer_written": manifest.get("agents_written")}


def install(brain, brain_argv: list[str], env: dict[str, str]) -> dict:
    path = config_path(env)
    text = read_utf8(path)
    base = _BLOCK.sub("", text) if text else text  # re-install replaces brain's own block
    if base and _TABLE.search(base):
        raise IntegrationConflict(str(path), "mcp_servers.brain")
    if base:
        try:
            tomllib.loads(base)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(f"{path} is not valid TOML ({exc}); nothing was changed", field="file") from None
    block = _block(brain_argv)
    if not base:
        new = block
    else:
        new = base + ("" if base.endswith("\n") else "\n") + "\n" + block
    tomllib.loads(new)  # what we write parses
    atomic_write_bytes(path, new.encode("utf-8"))
    manifest_path = _manifest_path(brain)
    old = {}
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    pointer = add_pointer(brain.repo, CLIENT, _legacy(old))
    manifest = {"client": CLIENT, "at": old.get("at", time.time()), "config": str(path),
                "config_original": old.get("config_original", text) if old else text,
                "config_written": new, "command": brain_argv, **pointer}
    atomic_write_bytes(manifest_path, json.dumps(manifest, indent=2).encode("utf-8"), private=True)
    return {"client": CLIENT, "config": str(path), "agents_md": pointer["pointer_added"], "command": brain_argv}


def uninstall(brain, env: dict[str, str]) -> dict:
    manifest_path = _manifest_path(brain)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    path = Path(manifest.get("config") or config_path(env))
    text = read_utf8(path)
    removed_config = False
    if text is not None:
        if text == manifest.get("config_written") and "config_original" in manifest:
            original = manifest["config_original"]
            if original is None:
                path.unlink()
            else:
                atomic_write_bytes(path, original.encode("utf-8"))
            removed_config = True
        elif BEGIN in text:
            stripped = _BLOCK.sub("", text, count=1)
            if stripped.endswith("\n\n") and not text.endswith("\n\n"):
                stripped = stripped[:-1]
            if stripped.strip():
                atomic_write_bytes(path, stripped.encode("utf-8"))
            else:
                path.unlink()
            removed_config = True
    removed_pointer = remove_pointer(brain.repo, _legacy(manifest))
    manifest_path.unlink(missing_ok=True)
    return {"client": CLIENT, "config": str(path), "removed_config": removed_config, "agents_md": removed_pointer}
