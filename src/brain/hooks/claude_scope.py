"""Claude Code's own per-user state: the local-scope MCP server entry, and the trust and approvals it records.

The absolute command that starts brain belongs to this machine, so it never goes into a file
the repository shares: it goes where `claude mcp add --scope local` writes, the user's
`~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when set) under
``projects.<project key>.mcpServers.brain``. The project key is Claude Code's: the real path
of the repository's main work tree (every worktree of one repository shares it), else the
folder itself. The file is edited as text (``jsonedit``): Claude Code's other keys stay as
they are.

The same file records whether the user trusted the folder (``hasTrustDialogAccepted``, on the
key or any parent folder) — until then an interactive session skips the project's hooks — and the
approvals of the servers of a shared `.mcp.json` (``enabledMcpjsonServers``,
``disabledMcpjsonServers``, ``enableAllProjectMcpServers``, also read from the settings files).
``claude_state`` reads them and names what is pending and the one step that approves it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import IntegrationConflict, InvalidInput, UnsafeLink
from ..memory.files import atomic_write_bytes
from .jsonedit import add_member, find, read_json_object, remove_member, scan
from .jsonfile import dump_json, read_json_file

__all__ = ["config_file", "project_key", "plan_server", "write_server", "remove_server", "local_server",
           "claude_state", "SERVER"]

SERVER = "brain"


def config_file(env: dict[str, str]) -> Path:
    """Claude Code's global config: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser() / ".claude.json"
    return (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".claude.json"


def project_key(repo: Path) -> str:
    """The key Claude Code files this project under: the main work tree of its git repository (so all
    worktrees share it), real path; the folder itself outside git."""
    from ..errors import BrainError
    from ..gitsafe import GitRepo, find_worktree_root

    root = find_worktree_root(repo)
    if root is not None:
        try:
            common = GitRepo(root).run("rev-parse", "--path-format=absolute", "--git-common-dir",
                                       check=False).stdout.strip()
        except (BrainError, OSError):
            common = ""
        if common and Path(common).name == ".git":
            return os.path.realpath(Path(common).parent)
        return os.path.realpath(root)
    return os.path.realpath(repo)


def server_entry(brain_argv: list[str]) -> dict:
    return {"type": "stdio", "command": brain_argv[0], "args": [*brain_argv[1:], "serve"], "env": {}}


def is_our_server(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("args"), list) and entry["args"][-1:] == ["serve"] and (
        "brain" in str(entry.get("command", "")) or "brain" in entry["args"])


def _project(data: dict, key: str, path: Path) -> dict:
    projects = data.get("projects", {})
    if not isinstance(projects, dict):
        raise InvalidInput(f"{path}: `projects` is not an object; nothing was changed", field="projects")
    project = projects.get(key, {})
    if not isinstance(project, dict):
        raise InvalidInput(f"{path}: projects[{key!r}] is not an object; nothing was changed", field="projects")
    servers = project.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"{path}: projects[{key!r}].mcpServers is not an object; nothing was changed",
                           field="mcpServers")
    return project


def plan_server(env: dict[str, str], key: str, brain_argv: list[str], recorded: dict | None) -> str:
    """The new text of Claude Code's config with brain's local-scope server (validated, nothing written).
    A `brain` server there that is not brain's (nor the one an earlier install wrote) is refused."""
    path = config_file(env)
    if path.is_symlink():  # checked now, so the install stops before its first write (a rename would refuse it later)
        raise UnsafeLink(str(path), os.readlink(path), "Claude Code config file")
    data, text = read_json_file(path)
    servers = _project(data, key, path).get("mcpServers", {})
    current = servers.get(SERVER)
    if current is not None and not is_our_server(current) and current != (recorded or {}).get("entry"):
        raise IntegrationConflict(str(path), f"projects[{key}].mcpServers.{SERVER}")
    entry = server_entry(brain_argv)
    if text is None or not text.strip():
        return dump_json({"projects": {key: {"mcpServers": {SERVER: entry}}}}, None)
    if current is not None:
        text = _cut(text, key)
    root = scan(text)
    projects = find(root, "projects")
    if projects is None:
        return add_member(text, root, "projects", {key: {"mcpServers": {SERVER: entry}}})
    project = find(projects, key)
    if project is None:
        return add_member(text, projects, key, {"mcpServers": {SERVER: entry}})
    servers_node = find(project, "mcpServers")
    if servers_node is None:
        return add_member(text, project, "mcpServers", {SERVER: entry})
    return add_member(text, servers_node, SERVER, entry)


def write_server(env: dict[str, str], text: str) -> None:
    json.loads(text)  # what we write parses
    path = config_file(env)
    existed = path.exists()
    atomic_write_bytes(path, text.encode("utf-8"))
    if not existed:
        os.chmod(path, 0o600)  # Claude Code keeps it private: it holds the user's account state


def _cut(text: str, key: str) -> str:
    servers = find(scan(text), "projects", key, "mcpServers")
    return remove_member(text, servers, SERVER) if servers is not None and find(servers, SERVER) else text


def local_server(env: dict[str, str], key: str) -> dict | None:
    """brain's entry in Claude Code's local scope for ``key`` (None when there is none)."""
    data = read_json_object(config_file(env))
    projects = data.get("projects")
    project = projects.get(key) if isinstance(projects, dict) else None
    servers = project.get("mcpServers") if isinstance(project, dict) else None
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def remove_server(env: dict[str, str], key: str, recorded: dict) -> bool:
    """Cut the entry an install wrote (as it wrote it, or still brain's); the rest of the file stays."""
    path = config_file(env)
    try:
        data, text = read_json_file(path)
    except InvalidInput:
        return False
    if text is None or not text.strip():
        return False
    current = local_server(env, key)
    if current is None or not (current == recorded.get("entry") or is_our_server(current)):
        return False
    new = _cut(text, key)
    project = find(scan(new), "projects", key)
    if recorded.get("created_project") and json.loads(new[project.start:project.end]) == {"mcpServers": {}}:
        new = remove_member(new, find(scan(new), "projects"), key)
    if recorded.get("created_file") and json.loads(new) == {"projects": {}}:
        path.unlink()  # the install made the file, and nothing else was put in it since
        return True
    atomic_write_bytes(path, new.encode("utf-8"))
    return True


# -- trust and approvals ------------------------------------------------------------------------------------------
def _trusted(projects: dict, key: str, repo: Path) -> bool:
    """Claude Code's rule: the project key, or the folder or any parent of it, has accepted the trust dialog."""
    def accepted(folder: str) -> bool:
        entry = projects.get(folder)
        return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True

    if accepted(key):
        return True
    folder = Path(os.path.realpath(repo))
    return any(accepted(str(f)) for f in (folder, *folder.parents))


def _mcpjson_approval(project: dict, settings: list[dict], name: str) -> str:
    """approved | rejected | pending, for the server ``name`` of the project's shared `.mcp.json`."""
    def listed(source: dict, key: str) -> bool:
        value = source.get(key)
        return isinstance(value, list) and name in value

    if listed(project, "disabledMcpjsonServers") or any(listed(s, "disabledMcpjsonServers") for s in settings):
        return "rejected"
    if listed(project, "enabledMcpjsonServers") or project.get("enableAllProjectMcpServers") is True:
        return "approved"
    if any(listed(s, "enabledMcpjsonServers") or s.get("enableAllProjectMcpServers") is True for s in settings):
        return "approved"
    return "pending"


def claude_state(repo: Path, env: dict[str, str], *, hooks_installed: bool, mcpjson_brain: bool) -> dict:
    """What Claude Code records for this project, and what is still pending with the one step that approves it.

    ``pending`` is a list of {"what", "step"}: trust of the folder (needed for the hooks of
    `.claude/settings.local.json`), and the approval of a `brain` server in the shared `.mcp.json`."""
    from ..errors import BrainError
    from . import repofiles

    key = project_key(repo)
    path = config_file(env)
    data = read_json_object(path)
    projects = data.get("projects") if isinstance(data.get("projects"), dict) else {}
    project = projects.get(key) if isinstance(projects.get(key), dict) else {}
    trusted = _trusted(projects, key, repo)
    pending = []
    if hooks_installed and not trusted:
        pending.append({"what": f"Claude Code has not trusted {key} yet: an interactive session asks first and "
                                "skips the project's hooks until the folder is trusted",
                        "step": f"run `claude` once in {key} and accept the trust dialog "
                                "(\"Yes, I trust this folder\")"})
    approval = None
    if mcpjson_brain:
        user_settings = (Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else
                         (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".claude") / "settings.json"
        settings = [read_json_object(user_settings)]
        for rel in (".claude/settings.local.json", ".claude/settings.json"):
            try:
                text = repofiles.read_text(repo, rel)
                value = json.loads(text) if text else {}
            except (BrainError, OSError, ValueError):  # a link is never read (the install refuses it)
                value = {}
            settings.append(value if isinstance(value, dict) else {})
        approval = _mcpjson_approval(project, settings, SERVER)
        if approval != "approved":
            pending.append({"what": f"the `brain` server of the shared .mcp.json is {approval} in Claude Code, and "
                                    "it carries one machine's command",
                            "step": "run `brain install claude-code` again: it moves the server to Claude Code's "
                                    "local scope (nothing to approve there) and removes it from .mcp.json"})
    return {"config": str(path), "key": key, "trusted": trusted, "mcpjson_approval": approval,
            "local_server": local_server(env, key), "pending": pending}
