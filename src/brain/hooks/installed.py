"""What the installed clients will run, and whether it starts: the checks behind `brain doctor`.

A client starts brain with its own environment, not the shell brain was installed from. An
entry that says `brain` works in the installer's venv and fails everywhere else ("Failed to
connect", every hook `brain: not found`), and reading the config files cannot tell. So each
installed command is resolved the way the client would (an absolute path must exist and be
executable; a bare name depends on the client's PATH) and run once with `--version`, bounded.

The commands come from files a repository carries (`.mcp.json`, `.claude/settings.json`, read
without following a link) or the user's own client config, so they are data, and data never
chooses what runs: only a command recognised as brain is run —
a `brain` console script (a `#!` script importing `brain.cli`) or a Python interpreter with
`-m brain` — never a file the repository carries, and from a neutral working directory (so
`-m brain` cannot pick up a `brain/` package of the repository). A file inside the repository
is run only when git ignores it and does not track it (the usual `.venv/` made by
`python3 -m venv .venv` in the project): a clone can never bring such a file; the console
script's interpreter, when inside the repository too, obeys the same rule.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..inputs import loads_json

__all__ = ["InstalledCommand", "installed_commands", "probe", "PROBE_TIMEOUT"]

PROBE_TIMEOUT = 20.0  # seconds for `<command> --version`: a cold Python start on a loaded machine
_MARK = " hook claude-code "
_PYTHON = re.compile(r"python[0-9.]*")


@dataclass
class InstalledCommand:
    """One way a client starts brain: the argv before brain's subcommand, and where it is written."""

    client: str
    argv: list[str]
    where: list[str] = field(default_factory=list)  # "file: entry" for each place this argv is written


def _add(found: dict, client: str, argv: list[str], where: str) -> None:
    if not argv or not all(isinstance(a, str) for a in argv):
        return
    key = (client, tuple(argv))
    found.setdefault(key, InstalledCommand(client, list(argv))).where.append(where)


def _server_argv(entry) -> list[str] | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    if args[-1:] == ["serve"]:
        args = args[:-1]
    return [entry["command"], *args]


def _repo_json(repo: Path, rel: str) -> dict:
    """A JSON object file of the repository, read without following a link (``{}`` for a link or a bad file)."""
    from ..errors import BrainError
    from . import repofiles

    try:
        data = loads_json(repofiles.read_text(repo, rel) or "{}")
    except (BrainError, OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def installed_commands(repo: Path, env: dict[str, str]) -> list[InstalledCommand]:
    """Every command the installed Claude Code and Codex entries run for brain, deduplicated."""
    from .claude_scope import config_file, local_server, project_key
    from .codex import config_path

    found: dict = {}
    argv = _server_argv(local_server(env, project_key(repo)))
    if argv:
        _add(found, "claude-code", argv, f"{config_file(env)}: local-scope mcpServers.brain")
    server = (_repo_json(repo, ".mcp.json").get("mcpServers") or {})
    argv = _server_argv(server.get("brain") if isinstance(server, dict) else None)
    if argv:
        _add(found, "claude-code", argv, ".mcp.json: mcpServers.brain")
    for rel in (".claude/settings.json", ".claude/settings.local.json"):
        hooks = _repo_json(repo, rel).get("hooks")
        for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
            for group in groups if isinstance(groups, list) else []:
                for hook in (group.get("hooks") if isinstance(group, dict) else None) or []:
                    command = hook.get("command") if isinstance(hook, dict) else None
                    if isinstance(command, str) and _MARK in f"{command} ":
                        try:
                            words = shlex.split(command)
                        except ValueError:
                            continue
                        cut = next((i for i in range(len(words) - 1)
                                    if words[i] == "hook" and words[i + 1] == "claude-code"), None)
                        if cut:
                            _add(found, "claude-code", words[:cut], f"{rel}: hooks.{event}")
    config = config_path(env)
    try:
        table = tomllib.loads(config.read_text(encoding="utf-8")).get("mcp_servers", {}).get("brain")
    except (OSError, ValueError):
        table = None
    argv = _server_argv(table)
    if argv:
        _add(found, "codex", argv, f"{config}: mcp_servers.brain")
    return list(found.values())


def _made_here(path: Path, repo: Path) -> bool:
    """``path`` (inside ``repo``) is ignored and untracked by git: made on this machine, not carried by the
    repository (a clone brings only tracked files). Asked through the pinned git runner; False on any doubt."""
    from ..errors import BrainError
    from ..gitsafe import GitRepo, find_worktree_root

    root = find_worktree_root(repo)
    if root is None:
        return False
    try:
        git = GitRepo(root)
        rel = os.path.relpath(path, root.resolve())
        tracked = git.run("ls-files", "--error-unmatch", "--", rel, check=False)
        ignored = git.run("check-ignore", "-q", "--no-index", "--", rel, check=False)
    except (BrainError, OSError, ValueError):
        return False
    return tracked.returncode == 1 and ignored.returncode == 0


def _inside(path: Path, repo: Path) -> bool:
    real, top = path.resolve(), repo.resolve()
    return real == top or top in real.parents


def _recognised(resolved: str, argv: list[str], repo: Path) -> str | None:
    """Why ``resolved`` may not be run (None: it is brain, and not a file the repository carries)."""
    real = Path(resolved).resolve()
    if _inside(real, repo) and not _made_here(Path(resolved).parent.resolve() / Path(resolved).name, repo):
        return "it is a file of the repository"
    if _PYTHON.fullmatch(Path(resolved).name) and argv[1:3] == ["-m", "brain"]:
        return None
    try:
        with open(real, "rb") as handle:
            head = handle.read(2048)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if head.startswith(b"#!") and b"brain.cli" in head:
        interpreter = head[2:].split(b"\n", 1)[0].strip().split(b" ", 1)[0].decode("utf-8", "replace")
        if interpreter and _inside(Path(interpreter), repo) and not _made_here(
                Path(interpreter).parent.resolve() / Path(interpreter).name, repo):
            return "its interpreter is a file of the repository"
        return None
    return "it is not a brain entry point (nor a Python interpreter with -m brain)"


def probe(command: InstalledCommand, env: dict[str, str], repo: Path,
          timeout: float = PROBE_TIMEOUT) -> tuple[bool, str]:
    """(starts, what happened): resolve the command as a client would and, if it is brain, run it with --version."""
    exe = command.argv[0]
    if os.path.isabs(exe):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            return False, f"{exe} does not exist or is not executable"
        resolved = exe
    else:
        resolved = shutil.which(exe, path=env.get("PATH"))
        if resolved is None:
            return False, f"`{exe}` is not on PATH"
    refused = _recognised(resolved, command.argv, repo)
    if refused:
        return False, f"{resolved} was not run: {refused}"
    try:
        out = subprocess.run([resolved, *command.argv[1:], "--version"], capture_output=True, text=True,
                             timeout=timeout, env=env, stdin=subprocess.DEVNULL, cwd=Path.home() if
                             Path.home().is_dir() else "/")
    except subprocess.TimeoutExpired:
        return False, f"`{shlex.join(command.argv)} --version` did not answer within {timeout:.0f} s"
    except OSError as exc:
        return False, f"{resolved} cannot start: {exc.strerror or exc}"
    if out.returncode != 0 or not out.stdout.startswith("brain "):
        last = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return False, f"`{shlex.join(command.argv)} --version` failed: {last[:200]}"
    if not os.path.isabs(exe):
        return True, f"bare `{exe}` resolves to {resolved} on this PATH only"
    return True, out.stdout.strip()
