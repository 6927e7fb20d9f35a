"""Whether brain's plugin already covers a client: what `brain install` checks before writing anything.

The plugin (`plugins/brain/` of brain's repository, installed with `claude plugin install` or
`codex plugin add`) brings the hooks and the MCP server itself. `brain install` on top of it
would run every hook twice and list two `brain` servers, so it says which plugin covers the
client and installs nothing (``--force`` installs the local entries all the same).

Claude Code: a `brain@<marketplace>` key set to true in `enabledPlugins` of a settings file that
applies to the project (the project's `.claude/settings.local.json` and `.claude/settings.json`,
read without following a link, then the user's `settings.json`), and an install of it recorded in
`plugins/installed_plugins.json` whose folder holds brain's plugin manifest. Codex: a
`[plugins."brain@<marketplace>"]` table with `enabled = true` in the user's `config.toml`, and
brain's manifest in the plugin cache. A key alone is not enough: the plugin must be there.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ..inputs import loads_json
from .jsonedit import read_json_object

__all__ = ["claude_plugin", "codex_plugin", "covered_text", "PLUGIN"]

PLUGIN = "brain"  # the plugin's name in both manifests (plugins/brain/.claude-plugin/plugin.json)


def _claude_dir(env: dict[str, str]) -> Path:
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".claude"


def _is_brain_manifest(path: Path) -> bool:
    try:
        data = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("name") == PLUGIN


def _enabled(settings: dict) -> list[str]:
    plugins = settings.get("enabledPlugins")
    if not isinstance(plugins, dict):
        return []
    return sorted(k for k, v in plugins.items() if v is True and isinstance(k, str) and k.split("@", 1)[0] == PLUGIN)


def claude_plugin(repo: Path, env: dict[str, str]) -> dict | None:
    """``{"plugin": "brain@M", "where": settings file, "path": install folder}`` when brain's plugin is
    enabled for ``repo`` and installed; None otherwise."""
    from .installed import _repo_json  # the project's file, read without following a link ({} on any doubt)

    home = _claude_dir(env)
    scopes = [(rel, _repo_json(repo, rel)) for rel in (".claude/settings.local.json", ".claude/settings.json")]
    scopes.append((str(home / "settings.json"), read_json_object(home / "settings.json")))
    installed = read_json_object(home / "plugins" / "installed_plugins.json").get("plugins")
    installed = installed if isinstance(installed, dict) else {}
    for where, settings in scopes:
        for key in _enabled(settings):
            for entry in installed.get(key) or []:
                path = entry.get("installPath") if isinstance(entry, dict) else None
                if isinstance(path, str) and _is_brain_manifest(Path(path) / ".claude-plugin" / "plugin.json"):
                    return {"plugin": key, "where": where, "path": path}
    return None


def codex_plugin(env: dict[str, str]) -> dict | None:
    """``{"plugin": "brain@M", "where": config.toml, "path": cache folder}`` when Codex has brain's plugin
    enabled and installed; None otherwise."""
    from .codex import config_path

    config = config_path(env)
    try:
        plugins = tomllib.loads(config.read_text(encoding="utf-8")).get("plugins")
    except (OSError, ValueError):
        return None
    for key, table in sorted((plugins if isinstance(plugins, dict) else {}).items()):
        name, _, market = key.partition("@")
        if name != PLUGIN or not market or not isinstance(table, dict) or table.get("enabled") is not True:
            continue
        cache = config.parent / "plugins" / "cache" / market / PLUGIN
        try:
            versions = sorted(p for p in cache.iterdir() if p.is_dir())
        except OSError:
            continue
        for folder in versions:
            if _is_brain_manifest(folder / ".codex-plugin" / "plugin.json"):
                return {"plugin": key, "where": str(config), "path": str(folder)}
    return None


def covered_text(client: str, found: dict) -> str:
    """What `brain install` says when the plugin covers ``client``."""
    return (f"brain's plugin {found['plugin']} (enabled in {found['where']}) already gives {client} the MCP server "
            "and the hooks: nothing installed. "
            f"`brain install` on top of it would run brain twice; --force installs the local entries all the same")

