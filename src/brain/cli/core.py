"""Core commands: init, write, read, boot, state, doctor, export-template, settings."""

from __future__ import annotations

from ..bounds import MAX_BUDGET, cli_int
import argparse

from .common import add_json, add_role, open_from_args, writer_role
from .output import emit, read_input_text

__all__ = ["register"]

DOCTOR_FAILED_EXIT = 1  # a check failed: brain cannot work as configured
DOCTOR_WARNINGS_EXIT = 12  # --strict: nothing failed, something warns (beyond the error tree's codes 1-11)
BOOT_GC_THRESHOLD = 100_000  # the collector's first-generation threshold during `brain boot` (see cmd_boot)


def doctor_exit(checks: list[dict], *, strict: bool) -> int:
    """Only a failure makes `brain doctor` fail: a new install warns (an extra not installed, an index behind)
    and must not look broken to `brain doctor && ...`; CI that wants warnings gone asks with --strict."""
    if any(c["level"] == "error" for c in checks):
        return DOCTOR_FAILED_EXIT
    if strict and any(c["level"] == "warning" for c in checks):
        return DOCTOR_WARNINGS_EXIT
    return 0


def register(sub) -> None:
    p = sub.add_parser("init", help="create .brain/ and the AGENTS.md pointer line",
                       description="Create .brain/ in DIR (default: the current git repository's root), its "
                                   ".gitignore, and one pointer line in AGENTS.md. Re-running only adds what is missing. "
                                   "Outside a git repository the brain is created all the same, and init names what "
                                   "needs git and the `git init` that adds it.")
    p.add_argument("path", nargs="?", metavar="DIR")
    add_json(p)
    p.set_defaults(handler=cmd_init)

    p = sub.add_parser("write", help="write now.md, focus.md, a note, a workflow or a profile atomically",
                       description="Write a memory file from --file F or standard input, atomically. "
                                   "TARGET is now, focus, note NAME, workflow NAME or profile NAME; "
                                   "--path writes any path under .brain/.")
    p.add_argument("target", nargs="?", choices=["now", "focus", "note", "workflow", "profile"])
    p.add_argument("name", nargs="?", metavar="NAME")
    p.add_argument("--path", help="a memory path relative to .brain/ (instead of TARGET)")
    p.add_argument("--layer", choices=["project", "kernel", "instance", "personal"], default="project",
                   help="write into a user-level layer under $BRAIN_HOME instead of the project")
    p.add_argument("-f", "--file", help="read the text from F ('-' or absent: standard input)")
    p.add_argument("--expect", metavar="HASH", help="refuse the write unless the file's current sha256 starts with HASH "
                                                    "('' = the file must not exist)")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_write)

    p = sub.add_parser("read", help="print one memory file",
                       description="Print a memory file (path relative to .brain/, or to a layer with --layer).")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--layer", choices=["project", "kernel", "instance", "personal"], default="project")
    add_json(p)
    p.set_defaults(handler=cmd_read)

    p = sub.add_parser("boot", help="print the budgeted boot message",
                       description="Assemble what a session needs to resume, now.md first, under a hard token budget. "
                                   "Every part left out is named at the end with how to fetch it. Agent profiles "
                                   "(.brain/agents/*.md, kernel agents/) load by the `tier` of their front matter: "
                                   "always (every boot), hot (boots of their roles), warm (their roles, when the task "
                                   "names a trigger), cold (never loaded, listed as fetchable). A profile that does not "
                                   "parse is skipped and named at the end; `brain doctor` reports it.")
    task = p.add_mutually_exclusive_group()
    task.add_argument("--task", metavar="TEXT", help="what the session is about to do")
    task.add_argument("--task-file", metavar="F", help="read the task text from F")
    p.add_argument("--module", metavar="M", help="the module the task is about")
    p.add_argument("--role", metavar="R", help="the session's role (selects agent profiles and features; default: "
                                               "the role written in --session's id)")
    p.add_argument("--session", metavar="S", help="the session id (selects its checkpoint and thread, and its role's "
                                                  "profiles when --role is not given)")
    p.add_argument("--budget", type=cli_int(0, MAX_BUDGET, "--budget"), metavar="N", help="token budget (default: boot.budget, 8000)")
    p.add_argument("--no-record", action="store_true", help="do not append this boot to runtime/boots.jsonl")
    add_json(p)
    p.set_defaults(handler=cmd_boot)

    p = sub.add_parser("state", help="the derived environment: git, services",
                       description="Git branch and head, changed files, recent commits, and whether each declared "
                                   "service listens on its port. Computed now, never stored.")
    add_json(p)
    p.set_defaults(handler=cmd_state)

    p = sub.add_parser("doctor", help="check the install, settings, backend, index and hooks",
                       description="Check everything brain depends on and say what to fix. Exit status: 0 when no "
                                   "check fails (warnings and notes included), 1 when a check fails; with --strict, "
                                   f"{DOCTOR_WARNINGS_EXIT} when no check fails but some warn. Each warning's fix "
                                   "clears it.")
    p.add_argument("--strict", action="store_true",
                   help=f"exit {DOCTOR_WARNINGS_EXIT} when a check warns (and none fails), for CI")
    add_json(p)
    p.set_defaults(handler=cmd_doctor)

    p = sub.add_parser("export-template", help="write the kernel layer alone to DEST",
                       description="Copy the kernel layer ($BRAIN_HOME/kernel: agent profiles, profile notes) to DEST, "
                                   "an empty or new folder. Instance and personal layers are never exported.")
    p.add_argument("dest", metavar="DEST")
    add_json(p)
    p.set_defaults(handler=cmd_export_template)

    p = sub.add_parser("settings", help="show the effective settings or document every key",
                       description="Print the effective settings with the source of each value, or with --docs "
                                   "every key brain.yml and brain.local.yml accept.")
    p.add_argument("--docs", action="store_true", help="document every settings key and environment variable")
    add_json(p)
    p.set_defaults(handler=cmd_settings)


WITHOUT_GIT = ("worktree sharing (one coordination store for every `git worktree`)",
               "`brain sync` (pull and push the memory)",
               "the cards' pre-commit hook (`brain install git-hook`) and .gitignore-aware module discovery")


def _git_init_command(repo) -> str:
    """The one command that puts ``repo`` under git, as the user would type it from where they are."""
    import os
    import shlex
    from pathlib import Path

    return "git init" if Path(os.getcwd()).resolve() == repo else f"git init {shlex.quote(str(repo))}"


def cmd_init(args) -> int:
    from ..gitsafe import discover_toplevel
    from ..workspace import init_brain

    from pathlib import Path

    from ..checkout import main_worktree_brain

    target = args.path or getattr(args, "dir", None)
    # looked up before init creates anything: a linked worktree whose branch lacks the main tree's memory
    other = main_worktree_brain(Path(target) if target else Path.cwd())
    brain, created = init_brain(target)
    data = {"brain": str(brain.dir), "created": created, "git": discover_toplevel(brain.repo) is not None}
    if not data["git"]:  # a brain outside git works (memory, boot, coordination): say what it goes without
        data["without_git"] = list(WITHOUT_GIT)
        data["fix"] = _git_init_command(brain.repo)
    elif created:  # worktrees and teammates get the memory only through a commit
        data["commit"] = "git add .brain AGENTS.md && git commit -m 'brain: init'"
    if other is not None and created and other[1] != brain.dir:
        data["main_worktree_brain"] = str(other[1])

    def render(d):
        lines = [f"brain ready in {d['brain']}"]
        lines += [f"  created {c}" for c in d["created"]] or ["  nothing to add: already initialised"]
        if not d["git"]:
            lines.append(f"not a git repository: memory, boot and coordination work here, but these need git: "
                         f"{'; '.join(d['without_git'])}")
            lines.append(f"  fix: `{d['fix']}` (then commit .brain/ to share the memory)")
        if d.get("main_worktree_brain"):
            lines.append(f"note: this is a linked git worktree and the main working tree has its own brain "
                         f"({d['main_worktree_brain']}): this one is a second, separate memory on this branch; "
                         f"to share that one instead, commit it there and merge it into this branch")
        elif d.get("commit"):
            lines.append(f"commit it so every `git worktree` and teammate has this memory: `{d['commit']}`")
        lines.append("next: edit .brain/now.md (or `brain write now`), then `brain boot`")
        return "\n".join(lines)

    emit(data, args.json, render)
    return 0


def cmd_write(args) -> int:
    from ..errors import InvalidInput

    brain = open_from_args(args)
    if args.path and args.target:
        raise InvalidInput("give either TARGET or --path, not both", field="path")
    if args.path:
        path = args.path
    elif args.target:
        path = brain.target_path(args.target, args.name)
    else:
        raise InvalidInput("what to write is missing", field="target",
                           hint="e.g. `brain write now --file now.md` or `brain write note setup < setup.md`")
    setting = "limits.now_bytes" if path == "now.md" and args.layer == "project" else "limits.write_bytes"
    text = read_input_text(args.file, "text to write", brain.settings[setting], setting)
    layer = None if args.layer == "project" else args.layer
    doc = brain.write(path, text, expected_hash=args.expect, layer=layer, role=writer_role(brain, args),
                      reason=args.reason)
    redacted = [{"kind": k, "count": n} for k, n in doc.redacted]

    def render(d):
        line = f"wrote {d['path']} ({d['bytes']} bytes, sha256 {d['hash'][:12]})"
        if d["redacted"]:
            line += "\nredacted: " + ", ".join(f"{r['count']} {r['kind']}" for r in d["redacted"])
        return line

    emit({"path": doc.path, "layer": args.layer, "hash": doc.hash, "bytes": doc.size, "redacted": redacted}, args.json,
         render)
    return 0


def cmd_read(args) -> int:
    brain = open_from_args(args)
    doc = brain.read(args.path, layer=None if args.layer == "project" else args.layer)
    if args.layer == "project":
        brain.record_use("read", [doc.path])
    emit({"path": doc.path, "hash": doc.hash, "text": doc.text}, args.json, lambda d: d["text"].rstrip("\n"))
    return 0


def cmd_boot(args) -> int:
    import gc

    # A warm boot makes some tens of thousands of objects it keeps until it prints (rows, evidence,
    # records), almost none in reference cycles: at the default threshold (700) the collector passed over
    # them about 50 times, 5-7 ms of a Django task boot's CPU, freeing next to nothing. At 100,000 a warm
    # boot runs no collection, while a boot that indexes a new repository (and the map workers it forks,
    # which inherit the setting) still collects. When the process ends right after (``main`` run as the
    # `brain` command), its objects are also frozen: the interpreter's exit would otherwise walk every one
    # of them in a last collection (about 9 ms) before freeing them as it does anyway; atexit handlers,
    # output flushes and module teardown still run.
    threshold = gc.get_threshold()
    gc.set_threshold(BOOT_GC_THRESHOLD, *threshold[1:])
    try:
        return _boot(args)
    finally:
        gc.set_threshold(*threshold)
        if getattr(args, "process_ends", False):
            gc.freeze()


def _boot(args) -> int:
    from ..errors import InvalidInput
    from ..bounds import MAX_TURN_BYTES  # a task is a turn's worth of text

    brain = open_from_args(args)
    task = args.task
    if args.task_file:
        task = read_input_text(args.task_file, "task text", MAX_TURN_BYTES)
    if args.budget is not None and args.budget <= 0:
        raise InvalidInput("--budget must be a positive number of tokens", field="budget")
    result = brain.boot(task, module=args.module, role=args.role, session=args.session, budget=args.budget,
                        record=not args.no_record)
    emit(result.to_dict(), args.json, lambda d: d["text"])
    return 0


def cmd_state(args) -> int:
    from ..state import render_state

    brain = open_from_args(args)
    emit(brain.state(), args.json, render_state)
    return 0


def cmd_doctor(args) -> int:
    from ..errors import TrackedLocalSettings

    try:
        brain = open_from_args(args)
        checks = brain.doctor()
    except TrackedLocalSettings as exc:  # nothing else can be checked until it is gone: say so, with the fix
        checks = [{"check": "local settings", "ok": False, "level": "error", "detail": exc.message, "fix": exc.hint,
                   "file": exc.path}]

    def render(items):
        marks = {"ok": "ok  ", "info": "info", "warning": "warn", "error": "FAIL"}
        lines = []
        for c in items:
            lines.append(f"[{marks[c['level']]}] {c['check']}: {c['detail']}")
            if c["fix"]:
                lines.append(f"       fix: {c['fix']}")
        return "\n".join(lines)

    emit(checks, args.json, render)
    return doctor_exit(checks, strict=args.strict)


def cmd_export_template(args) -> int:
    from pathlib import Path

    from ..errors import NotInitialized
    from ..memory.layers import Layers
    from ..settings import load_settings

    # the kernel lives in $BRAIN_HOME, so exporting works outside any project too
    try:
        brain = open_from_args(args)
        layers = brain.layers
    except NotInitialized:  # no project here: the environment names the home
        layers = Layers(load_settings(None).home)
    files = layers.export_template(Path(args.dest))
    emit({"dest": str(Path(args.dest).resolve()), "files": files}, args.json,
         lambda d: f"exported the kernel layer to {d['dest']} ({len(d['files'])} files)")
    return 0


def cmd_settings(args) -> int:
    from ..settings import ENVIRONMENT, SCHEMA

    if args.docs:
        data = {"keys": {k: {"type": s.type, "default": s.default, "file": "brain.local.yml" if s.local_only else "brain.yml",
                             "doc": s.doc} for k, s in SCHEMA.items()},
                "environment": ENVIRONMENT}

        def render(d):
            lines = ["Settings keys (brain.yml; machine keys in brain.local.yml):"]
            for key, info in d["keys"].items():
                lines.append(f"  {key} ({info['type']}, default {info['default']!r}, {info['file']}): {info['doc']}")
            lines.append("Environment:")
            lines += [f"  {k}: {v}" for k, v in d["environment"].items()]
            return "\n".join(lines)

        emit(data, args.json, render)
        return 0
    from ..security.redact import mask_dsn

    brain = open_from_args(args)
    # a connection URL (``backend``) or any other value holding one is shown with its password masked
    data = {k: {"value": mask_dsn(brain.settings.get(k)), "source": brain.settings.sources.get(k, "default")} for k in SCHEMA}
    emit(data, args.json, lambda d: "\n".join(f"{k} = {v['value']!r}  ({v['source']})" for k, v in d.items()))
    return 0
