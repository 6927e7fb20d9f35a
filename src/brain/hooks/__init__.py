"""Client integrations: the hook commands clients run, and installing them.

``claude`` installs brain into a Claude Code project (`.claude/settings.json` hooks
and the `.mcp.json` server entry) and handles the hook events; ``codex`` writes the
MCP entry into `~/.codex/config.toml` and the AGENTS.md pointer. Every install
records what it added in `runtime/installs/<client>.json`, so uninstall removes
exactly that and a user's own settings are preserved byte for byte.
"""

from __future__ import annotations

__all__ = ["default_brain_argv"]


def default_brain_argv() -> list[str]:
    """How a client should start brain: `brain` when it is on PATH, else this interpreter's `-m brain`."""
    import shutil
    import sys

    return ["brain"] if shutil.which("brain") else [sys.executable, "-m", "brain"]
