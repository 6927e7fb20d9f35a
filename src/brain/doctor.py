"""`brain doctor`: check the install, settings, backend, index and client hooks; say what to fix."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from .trees import walk as walk_tree

__all__ = ["run_checks"]


def _check(name: str, ok: bool, detail: str, fix: str | None = None, *, level: str | None = None,
           file: str | None = None) -> dict:
    found = {"check": name, "ok": ok, "level": level or ("ok" if ok else "error"), "detail": detail,
             "fix": fix if not ok else None}
    return found | {"file": file} if file else found


def run_checks(brain) -> list[dict]:
    from . import __version__
    from .memory.scaffold import FOLDERS, POINTER_MARKER

    checks = [_check("python", sys.version_info >= (3, 11), f"Python {sys.version.split()[0]}, brain {__version__}",
                     "install Python 3.11 or newer")]
    for extra, module in (("mcp", "mcp"), ("postgres", "psycopg"), ("web", "starlette")):
        present = importlib.util.find_spec(module) is not None
        checks.append(_check(f"extra:{extra}", present, f"{module} {'installed' if present else 'not installed'}",
                             f"pip install 'agent-brain[{extra}]'", level=None if present else "warning"))
    from .security.redact import mask_dsn

    checks.append(_check("settings", True, f"{brain.dir / 'brain.yml'} valid; backend {mask_dsn(brain.settings.get('backend'))}"))
    missing = [f for f in FOLDERS if not (brain.dir / f).is_dir()]
    checks.append(_check("layout", not missing, "all folders present" if not missing else f"missing: {', '.join(missing)}",
                         "run `brain init` again: it only adds what is missing"))
    checks.append(_gitignore_check(brain))
    checks.append(_links_check(brain))
    now = brain.memory.read_or_none("now.md")
    checks.append(_check("now.md", now is not None and bool(now.text.strip()),
                         f"{now.size} bytes" if now else "absent", "write it: `brain write now < now.md`"))
    has_pointer = POINTER_MARKER in _repo_text(brain.repo, "AGENTS.md")
    checks.append(_check("AGENTS.md", has_pointer, "pointer line present" if has_pointer else "no pointer line",
                         "run `brain init` to add it"))
    try:
        from .memory.private import ensure_private_dir, open_private

        ensure_private_dir(brain.runtime)
        probe = brain.runtime / ".doctor"
        os.close(open_private(probe, os.O_WRONLY))
        probe.unlink()
        checks.append(_check("runtime", True, f"{brain.runtime} writable"))
    except OSError as exc:
        checks.append(_check("runtime", False, str(exc), "make .brain/runtime/ writable"))
    checks.append(_private_modes_check(brain))
    checks.append(_decisions_check(brain))
    checks.append(_merge_marks_check(brain))
    checks.append(_profiles_check(brain))
    checks.append(_legacy_handoffs_check(brain))
    checks.append(_backend_check(brain))
    worktree = _worktree_check(brain)
    if worktree is not None:
        checks.append(worktree)
    logs = _worktree_logs_check(brain)
    if logs is not None:
        checks.append(logs)
    checks.append(_index_check(brain))
    checks.append(_hooks_check(brain.repo, {**os.environ, **brain.env}))
    checks.append(_shared_files_check(brain))
    approval = _claude_approval_check(brain)
    if approval is not None:
        checks.append(approval)
    checks.extend(_client_command_checks(brain))
    return checks


def _repo_text(repo: Path, rel: str) -> str:
    """A file of the repository, never read through a link it ships ("" for a link, a missing or a bad file)."""
    from .errors import BrainError
    from .hooks import repofiles

    try:
        return repofiles.read_text(repo, rel) or ""
    except (BrainError, OSError):
        return ""


def _gitignore_check(brain) -> dict:
    from .memory.scaffold import GITIGNORE_LINES

    path = brain.dir / ".gitignore"
    try:
        present = {line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()}
    except OSError:
        present = set()
    missing = [line for line in GITIGNORE_LINES if line not in present]
    return _check("gitignore", not missing, ".brain/.gitignore complete" if not missing
                  else f".brain/.gitignore lacks {', '.join(missing)}", "run `brain init` again: it adds the missing lines",
                  level=None if not missing else "warning")


def _links_check(brain) -> dict:
    """Symbolic links inside .brain/ are never followed by brain (memory files are regular files): name them."""
    import os

    links = []
    for folder, dirs, files in walk_tree(brain.dir):  # runtime/ itself is checked (a link there redirects state)
        links += [os.path.relpath(os.path.join(folder, n), brain.dir) for n in dirs + files
                  if os.path.islink(os.path.join(folder, n))]
        dirs[:] = [d for d in dirs if not (folder == str(brain.dir) and d == "runtime")]
    if not links:
        return _check("links", True, "no symbolic links in .brain/")
    shown = ", ".join(sorted(links)[:5]) + (" ..." if len(links) > 5 else "")
    return _check("links", False, f"{len(links)} symbolic link(s) in .brain/ are ignored (never read nor written "
                  f"through): {shown}", "replace each by the file it points to, or delete it", level="warning")


def _client_command_checks(brain) -> list[dict]:
    """Every command an installed client runs for brain resolves and starts (see hooks.installed)."""
    import os

    from .hooks.installed import installed_commands, probe

    env = {**os.environ, **brain.env}
    checks = []
    for command in installed_commands(brain.repo, env):
        starts, detail = probe(command, env, brain.repo)
        bare = not os.path.isabs(command.argv[0])
        where = "; ".join(command.where)
        fix = (f"from the environment brain is installed in, run `brain install {command.client}` again: it writes "
               f"the absolute path of the brain command (or pass --command /absolute/path/to/brain)")
        if not starts:
            checks.append(_check(f"client:{command.client}", False, f"{detail} (used by {where})", fix))
        elif bare:
            checks.append(_check(f"client:{command.client}", False, f"{detail}; the client may start it with "
                                 f"another PATH (used by {where})", fix, level="warning"))
        else:
            checks.append(_check(f"client:{command.client}", True, f"{command.argv[0]} starts ({detail}); used by "
                                 f"{where}"))
    return checks


MERGE_SCAN_FILES = 5000  # memory files read for conflict markers (a doctor run stays bounded)


def _merge_marks_check(brain) -> dict:
    """Memory files committed with git's conflict markers (two worktrees or clones wrote them): named with
    their lines, and what resolves each (regenerated files: the command; the others: a person's choice)."""
    from .memory.files import read_regular_file
    from .memory.merge_marks import conflict_regions, describe_regions

    found: list[str] = []
    paths: list[Path] = []
    for folder, dirs, files in walk_tree(brain.dir):  # no recursion, only so deep (a cloned tree may be 1,200 deep)
        if Path(folder) == brain.dir:
            dirs[:] = [d for d in dirs if d != "runtime"]
        paths += [Path(folder) / name for name in files if name.endswith(".md")]
        if len(paths) >= MERGE_SCAN_FILES:
            break
    for path in sorted(paths)[:MERGE_SCAN_FILES]:
        try:
            data = read_regular_file(path)  # a link is not read
        except OSError:
            continue
        if data is None or b"<<<<<<<" not in data:
            continue
        regions = conflict_regions(data.decode("utf-8", errors="replace"))
        if regions:
            found.append(f"{path.relative_to(brain.dir).as_posix()} (lines {describe_regions(regions)})")
    if not found:
        return _check("merge", True, "no memory file holds an unresolved git merge")
    return _check("merge", False, f"{len(found)} memory file(s) hold an unresolved git merge: {'; '.join(found)}",
                  "regenerate what is generated (`brain map` for modules/, `brain decisions --reindex` for "
                  "decisions.md); for the others keep what is true, drop the markers and write the file back "
                  "(`brain write now`, `brain write note NAME`)", level="warning") | {"files": found}


def _decisions_check(brain) -> dict:
    """Two decision records with one number (an old repository, merged branches): `decision status N` refuses them."""
    from .decisions import duplicate_numbers, load_decisions

    try:
        dups = duplicate_numbers(load_decisions(brain))
    except Exception as exc:  # noqa: BLE001 - a check reports, it never fails the others
        return _check("decisions", False, f"could not read the decision records: {exc}", level="warning")
    if not dups:
        return _check("decisions", True, "every decision record has a number of its own")
    shown = "; ".join(f"{n:04d}: {', '.join(paths)}" for n, paths in sorted(dups.items()))
    found = _check("decisions", False, f"{len(dups)} decision number(s) held by several records: {shown}",
                   "`brain decisions --renumber` (`--dry-run` first shows which records move)", level="warning")
    return found | {"duplicates": {str(n): paths for n, paths in sorted(dups.items())}}


def _private_modes_check(brain) -> dict:
    """brain's own state (runtime/, the instance and personal layers) is its owner's only: name what the group or
    others may read, with the chmod that fixes it (brain.memory.private)."""
    from .memory.layers import PRIVATE_LAYERS
    from .memory.private import chmod_fix, loose_modes

    roots = [brain.runtime, *(brain.layers.path(layer) for layer in PRIVATE_LAYERS)]
    if brain.store_dir != brain.runtime:  # the repository's shared store: its database and conversation logs
        roots.insert(1, brain.store_dir)
    loose = {str(root): loose_modes(root) for root in roots}
    loose = {root: found for root, found in loose.items() if found}
    if not loose:
        return _check("private modes", True, "runtime/, the shared store and the personal layers are readable by "
                                             "their owner only")
    count = sum(len(found) for found in loose.values())
    first = [f"{path} ({mode:o})" for found in loose.values() for path, mode in found][:5]
    found = _check("private modes", False, f"{count} file(s) or folder(s) readable by other users: {', '.join(first)}"
                   + (" ..." if count > 5 else ""), "; ".join(chmod_fix(Path(root)) for root in loose), level="warning")
    return found | {"loose": [{"path": path, "mode": f"{mode:o}"} for found in loose.values() for path, mode in found]}


def _profiles_check(brain) -> dict:
    """Agent profiles that do not parse are skipped by every boot: say which, and why."""
    from .memory.layers import TIERS

    problems = brain.profile_problems()
    if not problems:
        return _check("agent profiles", True, f"{len(brain.profiles())} profile(s) parse")
    return _check("agent profiles", False, "skipped by every boot: " + "; ".join(
        f"{p['source']}: {p['problem']}" for p in problems),
        f"fix the front matter of each (tier: one of {', '.join(TIERS)}; roles and triggers: a name or a list; "
        "valid YAML between --- lines)", level="warning")


def _legacy_handoffs_check(brain) -> dict:
    """Per-session handoffs the fold wrote into the versioned `handoffs/` before `handoffs/local/` existed."""
    try:
        legacy = brain.conversations.legacy_handoffs()
    except Exception as exc:  # noqa: BLE001 - a check reports, it never fails the others
        return _check("handoffs", False, f"could not list .brain/handoffs/: {exc}", level="warning")
    if not legacy:
        return _check("handoffs", True, "no per-session handoff in the versioned handoffs/")
    shown = ", ".join(f"{t}.md" for t in legacy[:10]) + (f" and {len(legacy) - 10} more" if len(legacy) > 10 else "")
    return _check("handoffs", False, f"{len(legacy)} per-session handoff(s) from before handoffs/local/ are still "
                  f"versioned in .brain/handoffs/: {shown}",
                  "`brain handoff --migrate` moves them to handoffs/local/ (machine-local) and deletes the "
                  "versioned copies; to keep one as team memory, `brain handoff THREAD --promote` it afterwards",
                  level="warning")


def _worktree_check(brain) -> dict | None:
    """In a linked worktree: which repository's store it shares, and whether the main working tree's
    brain.local.yml (which `git worktree add` does not copy: the backend, the machine name) is missing here."""
    checkout = brain.checkout
    if checkout is None or not checkout.linked:
        return None
    branch = checkout.branch() or "no branch"
    detail = (f"worktree {checkout.name} ({branch}) of {checkout.repository_name}: sessions, claims, signals, asks "
              f"and live state are shared with every worktree")
    if checkout.common_dir.name == ".git":  # a bare repository has no main working tree to compare with
        main_local = checkout.common_dir.parent / brain.dir.relative_to(checkout.root) / "brain.local.yml"
        if main_local.is_file() and not (brain.dir / "brain.local.yml").exists():
            return _check("worktree", False, f"{detail}; the main working tree has a brain.local.yml and this "
                          "worktree has none, so its settings (backend, machine) do not apply here",
                          f"cp {main_local} {brain.dir / 'brain.local.yml'}", level="warning", file=str(main_local))
    return _check("worktree", True, detail, level="info")


def _worktree_logs_check(brain) -> dict | None:
    """The other worktrees' conversation logs: a worktree whose brain has not moved them into the shared store
    yet (an older version ran there) loses them to `git worktree remove`; removed worktrees' logs are kept."""
    if brain.checkout is None:
        return None
    from .log.worktrees import worktree_logs

    try:
        others = worktree_logs(brain)
    except Exception:  # noqa: BLE001 - a check reports, it never fails the others
        return None
    in_place = [w for w in others if w.checkout_id is None and w.log.threads()]
    removed = [w for w in others if w.removed and w.log.threads()]
    if in_place:
        import shlex

        roots = [shlex.quote(str(w.brain_dir.parent)) for w in in_place]
        return _check("worktree logs", False, f"{len(in_place)} worktree(s) keep their conversation logs in their own "
                      f"runtime/ (an older brain ran there): {', '.join(w.name for w in in_place)}; `git worktree "
                      "remove` would delete them", "; ".join(f"(cd {r} && brain log)" for r in roots)
                      + " (moves them into the repository's shared store)", level="warning")
    if removed:
        return _check("worktree logs", True, f"the conversations of {len(removed)} removed worktree(s) are kept: "
                      "`brain log --worktrees`", level="info")
    return None


def _backend_check(brain) -> dict:
    backend = brain.settings.get("backend")
    if backend == "sqlite":
        from .search.index import sqlite_file_problem

        db = brain.store_dir / "brain.db"
        for found in (db, brain.runtime / "brain.db"):  # the shared store, and an old one not imported yet
            problem = sqlite_file_problem(found)
            if problem:
                return _check("backend", False, f"{found} is damaged: {problem}", CORRUPT_STORE_FIX.format(db=found),
                              file=str(found))
        where = "the repository's git dir, shared by its worktrees" if brain.store_dir != brain.runtime \
            else ".brain/runtime/"
        return _check("backend", True, f"sqlite (embedded) in {where}: {db}")
    if importlib.util.find_spec("psycopg") is None:
        return _check("backend", False, "postgresql configured but psycopg is not installed",
                      "pip install 'agent-brain[postgres]'")
    try:
        import psycopg

        with psycopg.connect(backend, connect_timeout=3) as conn:
            conn.execute("select 1")
        return _check("backend", True, "postgresql reachable")
    except Exception as exc:  # report any driver failure as a finding, not a crash
        return _check("backend", False, f"postgresql unreachable: {type(exc).__name__}",
                      "check the URL in brain.local.yml / BRAIN_BACKEND and that the server runs")


CORRUPT_STORE_FIX = ("stop the brain servers and agents of this project, move the file aside "
                     "(`mv {db} {db}.damaged`, and its -wal and -shm files), then run `brain doctor` again: a new "
                     "empty store is created at the next use (sessions, claims, signals and asks start over; "
                     "memory files are not in it and are kept)")


def _index_check(brain) -> dict:
    from .search.index import sqlite_file_problem

    db = brain.runtime / "index.db"
    if not db.exists():
        return _check("index", True, "no search index yet; it is derived and built on demand", level="info")
    problem = sqlite_file_problem(db)
    if problem:
        return _check("index", False, f"{db} is damaged: {problem}",
                      "run `brain index --rebuild` (the index is derived from the files: nothing is lost; "
                      "search and boot also rebuild it on their own when they find it damaged)", file=str(db))
    try:
        removed, changed = brain.index.memory_changes()  # the index's own stamps: what `brain index` refreshes
    except Exception as exc:  # noqa: BLE001 - a check reports, it never fails the others
        return _check("index", False, f"could not read {db}: {type(exc).__name__}", "run `brain index --rebuild` "
                      "(the index is derived from the files: nothing is lost)", file=str(db))
    if not removed and not changed:
        return _check("index", True, "up to date with the memory files")
    behind = [*changed, *removed]
    shown = ", ".join(behind[:5]) + (f" and {len(behind) - 5} more" if len(behind) > 5 else "")
    return _check("index", False, f"behind the memory files: {len(changed)} new or changed, {len(removed)} removed "
                  f"since the last refresh ({shown})", "run `brain index`", level="warning")


def _hooks_check(repo: Path, env: dict[str, str]) -> dict:
    """Which client entries are installed, read without following a link the repository ships, and which of
    brain's plugins cover a client (they bring their own hooks and server: `brain install` is not needed)."""
    from .hooks.installed import _repo_json
    from .hooks.plugins import claude_plugin, codex_plugin

    found = [f"{client} plugin {p['plugin']} ({p['where']})" for client, p in
             (("claude-code", claude_plugin(repo, env)), ("codex", codex_plugin(env))) if p]
    for rel in (".claude/settings.json", ".claude/settings.local.json"):
        if "brain" in json.dumps(_repo_json(repo, rel).get("hooks", {})):
            found.append(f"claude-code hooks ({rel})")
    if "brain" in json.dumps(_repo_json(repo, ".mcp.json").get("mcpServers", {})):
        found.append("MCP entry (.mcp.json)")
    if found:
        return _check("client hooks", True, ", ".join(found))
    return _check("client hooks", True, "none installed (optional): brain's plugin (`claude plugin install brain@brain`, "
                  "`codex plugin add brain@brain`), or `brain install claude-code` or `brain install codex`",
                  level="info")


def _shared_files_check(brain) -> dict:
    """brain entries in files the repository shares carry one machine's path: a teammate's clone gets a command
    that does not exist on their machine. (Versions before the local scope wrote them there.)"""
    from .hooks.claude_install import LOCAL_SETTINGS, MARK
    from .hooks.installed import _repo_json
    from .hooks.localfile import SharedFile, keep_out_of_git

    found = []
    server = _repo_json(brain.repo, ".mcp.json").get("mcpServers")
    if isinstance(server, dict) and "brain" in server:
        found.append(".mcp.json (mcpServers.brain)")
    if MARK in json.dumps(_repo_json(brain.repo, ".claude/settings.json").get("hooks", {})):
        found.append(".claude/settings.json (brain's hooks)")
    if MARK in json.dumps(_repo_json(brain.repo, LOCAL_SETTINGS).get("hooks", {})):
        try:
            if keep_out_of_git(brain.repo, LOCAL_SETTINGS, write=False):
                found.append(f"{LOCAL_SETTINGS} (git does not ignore it)")
        except SharedFile:
            found.append(f"{LOCAL_SETTINGS} (tracked by git)")
    if not found:
        return _check("shared client files", True, "no brain entry in a file the repository shares")
    return _check("shared client files", False, f"brain entries in shared files hold one machine's command: "
                  f"{', '.join(found)}", "run `brain install claude-code`: it moves them to Claude Code's local scope "
                  "and .claude/settings.local.json; then commit the change", level="warning")


def _claude_approval_check(brain) -> dict | None:
    """What Claude Code still has to approve (trust of the folder, a shared server's approval), from its own state."""
    import os

    from .hooks.claude_scope import claude_state
    from .hooks.installed import _repo_json

    hooks = "brain" in json.dumps(_repo_json(brain.repo, ".claude/settings.local.json").get("hooks", {})) or \
        "brain" in json.dumps(_repo_json(brain.repo, ".claude/settings.json").get("hooks", {}))
    servers = _repo_json(brain.repo, ".mcp.json").get("mcpServers")
    shared = isinstance(servers, dict) and "brain" in servers
    env = {**os.environ, **brain.env}
    state = claude_state(brain.repo, env, hooks_installed=hooks, mcpjson_brain=shared)
    if not hooks and not shared and state["local_server"] is None:
        return None
    if not state["pending"]:
        return _check("claude-code approval", True, f"Claude Code trusts {state['key']}; nothing pending")
    return _check("claude-code approval", False, "pending: " + "; ".join(p["what"] for p in state["pending"]),
                  "; then ".join(p["step"] for p in state["pending"]), level="warning", file=state["config"])
