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
from ..memory.scaffold import POINTER_MARKER, add_pointer_line

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


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed", field="file") from None


def _manifest_path(brain) -> Path:
    return brain.runtime / "installs" / f"{CLIENT}.json"


def install(brain, brain_argv: list[str], env: dict[str, str]) -> dict:
    path = config_path(env)
    text = _read(path)
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
    agents = brain.repo / "AGENTS.md"
    agents_before = _read(agents)
    added_now = add_pointer_line(agents)
    agents_added = added_now or bool(old.get("agents_added"))
    manifest = {"client": CLIENT, "at": old.get("at", time.time()), "config": str(path),
                "config_original": old.get("config_original", text) if old else text,
                "config_written": new, "agents_added": agents_added, "command": brain_argv,
                "agents_original": agents_before if added_now else old.get("agents_original"),
                "agents_written": _read(agents) if added_now else old.get("agents_written")}
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return {"client": CLIENT, "config": str(path), "agents_md": agents_added, "command": brain_argv}


def uninstall(brain, env: dict[str, str]) -> dict:
    manifest_path = _manifest_path(brain)
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    path = Path(manifest.get("config") or config_path(env))
    text = _read(path)
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
    removed_pointer = False
    agents = brain.repo / "AGENTS.md"
    if manifest.get("agents_added") and agents.is_file() and _read(agents) == manifest.get("agents_written"):
        original = manifest.get("agents_original")
        if original is None:
            agents.unlink()
        else:
            atomic_write_bytes(agents, original.encode("utf-8"))
        removed_pointer = True
    elif manifest.get("agents_added") and agents.is_file():
        raw = agents.read_text(encoding="utf-8")
        lines = raw.splitlines(keepends=True)
        kept = [line for line in lines if POINTER_MARKER not in line]
        if len(kept) != len(lines):
            rest = "".join(kept)
            if rest.strip() in ("", "# Agents"):
                agents.unlink()
            else:
                atomic_write_bytes(agents, rest.rstrip("\n").encode("utf-8") + b"\n")
            removed_pointer = True
    manifest_path.unlink(missing_ok=True)
    return {"client": CLIENT, "config": str(path), "removed_config": removed_config, "agents_md": removed_pointer}
