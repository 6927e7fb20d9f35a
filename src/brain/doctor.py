"""`brain doctor`: check the install, settings, backend, index and client hooks; say what to fix."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

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
    agents = brain.repo / "AGENTS.md"
    has_pointer = agents.exists() and POINTER_MARKER in agents.read_text(encoding="utf-8", errors="replace")
    checks.append(_check("AGENTS.md", has_pointer, "pointer line present" if has_pointer else "no pointer line",
                         "run `brain init` to add it"))
    try:
        brain.runtime.mkdir(parents=True, exist_ok=True)
        probe = brain.runtime / ".doctor"
        probe.write_text("ok")
        probe.unlink()
        checks.append(_check("runtime", True, f"{brain.runtime} writable"))
    except OSError as exc:
        checks.append(_check("runtime", False, str(exc), "make .brain/runtime/ writable"))
    checks.append(_profiles_check(brain))
    checks.append(_legacy_handoffs_check(brain))
    checks.append(_backend_check(brain))
    checks.append(_index_check(brain))
    checks.append(_hooks_check(brain.repo))
    checks.extend(_client_command_checks(brain))
    return checks


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
    for folder, dirs, files in os.walk(brain.dir):  # runtime/ itself is checked (a link there redirects state)
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


def _backend_check(brain) -> dict:
    backend = brain.settings.get("backend")
    if backend == "sqlite":
        from .search.index import sqlite_file_problem

        db = brain.runtime / "brain.db"
        problem = sqlite_file_problem(db)
        if problem:
            return _check("backend", False, f"{db} is damaged: {problem}", CORRUPT_STORE_FIX.format(db=db),
                          file=str(db))
        return _check("backend", True, "sqlite (embedded) in .brain/runtime/brain.db")
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
    newest = max((p.lstat().st_mtime for p in brain.dir.rglob("*.md") if "runtime" not in p.parts), default=0)
    fresh = db.stat().st_mtime >= newest
    return _check("index", fresh, "up to date" if fresh else "older than the newest memory file", "run `brain index`",
                  level=None if fresh else "warning")


def _hooks_check(repo: Path) -> dict:
    settings = repo / ".claude" / "settings.json"
    found = []
    if settings.exists():
        try:
            data = json.loads(settings.read_text(encoding="utf-8"))
            if "brain" in json.dumps(data.get("hooks", {})):
                found.append("claude-code hooks")
        except (json.JSONDecodeError, OSError):
            return _check("client hooks", False, f"{settings} is not valid JSON", "fix or remove the file")
    if (repo / ".mcp.json").exists() and "brain" in (repo / ".mcp.json").read_text(encoding="utf-8", errors="replace"):
        found.append("MCP entry (.mcp.json)")
    if found:
        return _check("client hooks", True, ", ".join(found))
    return _check("client hooks", True, "none installed (optional): `brain install claude-code` or `brain install codex`",
                  level="info")
