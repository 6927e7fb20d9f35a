"""Client integrations: the hook commands clients run, and installing them.

``claude`` installs brain into a Claude Code project (hooks in `.claude/settings.local.json`,
the server in Claude Code's local scope: nothing of this machine in a shared file) and handles
the hook events; ``codex`` writes the MCP entry into `~/.codex/config.toml` and the AGENTS.md
pointer. Files of the repository are written through ``repofiles``, never through a link. Every install
records what it added in `runtime/installs/<client>.json`, so uninstall removes
exactly that and a user's own settings are preserved byte for byte.
"""

from __future__ import annotations

__all__ = ["default_brain_argv"]


def default_brain_argv() -> list[str]:
    """How a client should start brain, from any shell: an absolute command, never a bare `brain`.

    A client (and the hooks it runs) starts brain with its own PATH, which need not hold the venv
    brain was installed in; a bare `brain` then fails with "not found". So: the `brain` entry point
    installed next to this interpreter (a venv's bin/, or the user's), else this interpreter's
    `-m brain`. The interpreter path is kept as is (not resolved): a venv's python is a symlink
    whose target would leave the venv's packages behind.
    """
    import os
    import sys
    from pathlib import Path

    python = Path(sys.executable).absolute()
    script = python.parent / ("brain.exe" if os.name == "nt" else "brain")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "brain"]
