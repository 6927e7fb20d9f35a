"""Conversation log, handoffs, usage figures and client hooks: `brain log`, `brain handoff`,
`brain record-turn`, `brain import-turns`, `brain stats`, `brain hook`, `brain uninstall`, and the `claude-code` and
`codex` targets of `brain install`.

`brain log` is a human viewer: the log never goes to an agent (no MCP tool wraps it).
"""

from __future__ import annotations

from ..bounds import MAX_COUNT, MAX_PAGE, cli_int
import sys

from ..errors import InvalidInput, NotFound
from .common import add_json, open_from_args, writer_role
from .output import emit, read_input_text

__all__ = ["register", "register_install_claude_code", "register_install_codex"]


def register(sub) -> None:
    p = sub.add_parser("log", help="list conversations, or read one page by page (humans only)",
                       description="Without THREAD, list the conversations (threads between two parties) with their "
                                   "parties and size. With THREAD, print one page of its turns, oldest first across "
                                   "rotated segments. A page counts lines: a torn or foreign one keeps its place and is "
                                   "skipped and counted, so page N is the same here and in `brain ui`. The log is for "
                                   "people: no agent-facing surface ever returns it.")
    p.add_argument("thread", nargs="?", metavar="THREAD")
    p.add_argument("--page", type=cli_int(-MAX_PAGE, MAX_PAGE, "--page"), metavar="N", help="page number, 1 = oldest; negative counts from the end "
                                                         "(default: the last page)")
    p.add_argument("--size", type=cli_int(1, MAX_COUNT, "--size"), default=50, metavar="K", help="lines per page (default 50)")
    p.add_argument("--worktrees", action="store_true",
                   help="also list the conversations recorded in the repository's other worktrees, removed ones "
                        "included (each checkout's logs are kept apart, in the repository's shared store)")
    p.add_argument("--worktree", metavar="NAME",
                   help="read THREAD from the other worktree NAME (git's worktree id; for a removed worktree the "
                        "checkout id --worktrees names, or its last name when only one removed worktree had it)")
    p.add_argument("--prune", action="store_true", help="delete rotated segments past log.retention_days now "
                                                        "(rotation does it for the thread it rotates), the "
                                                        "local handoffs (handoffs/local/) not updated that long, "
                                                        "and the logs of removed worktrees not written that long")
    add_json(p)
    p.set_defaults(handler=cmd_log)

    p = sub.add_parser("handoff", help="print a thread's handoff summary, or list them",
                       description="Print a thread's handoff, the bounded summary folded turn by turn (open questions, "
                                   "answers, decisions, files touched, next step), kept in handoffs/local/THREAD.md "
                                   "(machine-local, not versioned). Without THREAD, list the handoffs. --rebuild "
                                   "recomputes it from what is left of the log; --promote copies it to the versioned "
                                   "handoffs/THREAD.md, as team memory. --migrate (no THREAD) moves the handoffs the "
                                   "fold wrote into the versioned handoffs/ before handoffs/local/ existed (the ones "
                                   "`brain doctor` names) to handoffs/local/ and deletes the versioned copies.")
    p.add_argument("thread", nargs="?", metavar="THREAD")
    p.add_argument("--rebuild", action="store_true", help="recompute the handoff from the log")
    p.add_argument("--promote", action="store_true",
                   help="copy the handoff to the versioned handoffs/THREAD.md (team memory)")
    p.add_argument("--migrate", action="store_true",
                   help="move per-session handoffs of the old layout out of the versioned handoffs/ into "
                        "handoffs/local/ (committed with sync.commit_on_write, else left for you to commit)")
    add_json(p)
    p.set_defaults(handler=cmd_handoff)

    p = sub.add_parser("record-turn", help="append one turn to a thread and fold it into its handoff",
                       description="Record a turn said by SPEAKER in THREAD (or, with --to and no THREAD, in the "
                                   "thread of the two parties): appended to the log, folded into the handoff. The "
                                   "text comes from --text, --file F, or standard input.")
    p.add_argument("thread", nargs="?", metavar="THREAD")
    p.add_argument("--speaker", required=True, metavar="S")
    p.add_argument("--to", metavar="P", help="the other party")
    p.add_argument("--kind", default="message", choices=["message", "ask", "reply", "prompt", "answer", "note"])
    p.add_argument("--ref", metavar="TICKET", help="what this turn answers (an ask ticket)")
    p.add_argument("--text", metavar="TEXT")
    p.add_argument("-f", "--file", metavar="F")
    add_json(p)
    p.set_defaults(handler=cmd_record_turn)

    p = sub.add_parser("import-turns", help="import a Claude Code or Codex transcript's turns into the log",
                       description="Import the person's prompts and the agent's answers of a client transcript "
                                   "(format detected) into the thread between --person and --agent (default: "
                                   "`person` and the transcript's session id), folding each into the thread's "
                                   "handoff. Incremental: a second run imports only what was added since.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--agent", metavar="NAME", help="the agent party (default: <client>-<session id>)")
    p.add_argument("--person", default="person", metavar="NAME")
    add_json(p)
    p.set_defaults(handler=cmd_import_turns)

    p = sub.add_parser("stats", help="usage figures from Claude Code and Codex transcripts",
                       description="Read this project's client transcripts (Claude Code: ~/.claude/projects/<slug>/; "
                                   "Codex: ~/.codex/sessions/ whose cwd is in the project; CLAUDE_CONFIG_DIR and "
                                   "CODEX_HOME are honoured) and report per session and per task (a task runs from one "
                                   "prompt to the next): file-read tool calls, context tokens per model call "
                                   "(p50/p95/max), compactions, and the trend before/after brain was installed. "
                                   "Transcripts are streamed; torn or foreign lines are skipped and counted.")
    p.add_argument("files", nargs="*", metavar="FILE", help="transcript files to read as well")
    p.add_argument("--no-discover", action="store_true", help="read only the FILEs given")
    p.add_argument("--installed", metavar="YYYY-MM-DD", help="split before/after at this date instead of the "
                                                              "detected install date")
    p.add_argument("--svg", metavar="F", help="also write a small SVG chart to F")
    p.add_argument("--tasks", type=cli_int(0, MAX_COUNT, "--tasks"), default=20, metavar="N", help="task rows in the table (default 20)")
    add_json(p)
    p.set_defaults(handler=cmd_stats)

    from ..hooks.events import HOOK_NAMES

    p = sub.add_parser("hook", help="entry points the client hooks call (reads the hook JSON on stdin)",
                       description="Run by the hooks `brain install claude-code` writes and by those of brain's "
                                   "plugins (Claude Code and Codex: the same events, input and output): reads the "
                                   "event JSON on standard input and prints what the client expects. EVENT is brain's "
                                   "spelling (session-start) or the client's (SessionStart); both answer the same. "
                                   "Never fails the client: errors go to stderr and the exit code stays 0.")
    p.add_argument("client", choices=["claude-code", "codex"],
                   help="the client running the hook: its name is the role of the session, and says how its "
                        "transcript is read")
    p.add_argument("event", metavar="EVENT",  # not argparse choices: its refusal exits 2, which blocks Claude Code
                   help="one of " + ", ".join(HOOK_NAMES) + " (another name is refused on stderr, exit 0)")
    p.set_defaults(handler=cmd_hook)

    p = sub.add_parser("uninstall", help="remove exactly what `brain install` added for a client",
                       description="Remove brain's entries from the client's settings; a file brain did not change "
                                   "otherwise is restored byte for byte, anything else of the user's is kept.")
    p.add_argument("target", choices=["claude-code", "codex"])
    add_json(p)
    p.set_defaults(handler=cmd_uninstall)


# -- install targets (registered by cli/install.py) ---------------------------------------------------------------
def _add_command_option(p) -> None:
    p.add_argument("--command", dest="brain_command", metavar="CMD",
                   help="how the client starts brain, written as given (default: the absolute path of the `brain` "
                        "installed next to this Python, else this Python's absolute path with -m brain, so the "
                        "client finds it from any shell)")
    p.add_argument("--force", action="store_true",
                   help="install even when brain's plugin already covers this client (by default the install says "
                        "so and writes nothing: the plugin and these entries together would run brain twice)")


def register_install_claude_code(sub) -> None:
    p = sub.add_parser("claude-code", help="MCP server entry and session hooks for Claude Code",
                       description="Add the `brain serve` MCP server to Claude Code's local scope for this project "
                                   "(~/.claude.json, as `claude mcp add --scope local` does) and the hooks to "
                                   ".claude/settings.local.json (kept out of git): SessionStart injects a compact boot, "
                                   "PreCompact writes a checkpoint, Stop and SessionEnd import the turns into the log "
                                   "(Stop asks once to update now.md). CLAUDE.md gets the one pointer line. Nothing of "
                                   "this machine goes into a file the repository shares; brain entries an earlier "
                                   "version put in .mcp.json or .claude/settings.json are taken out. Says what Claude "
                                   "Code still has to approve. `brain uninstall claude-code` removes exactly what this "
                                   "added. When brain's Claude Code plugin is enabled for the project (claude plugin "
                                   "install brain@brain), it already brings all this: the install says so and writes "
                                   "nothing (--force installs all the same).")
    p.add_argument("--local", action="store_true", help="accepted for older scripts: the hooks always go to "
                                                        ".claude/settings.local.json")
    _add_command_option(p)
    add_json(p)
    p.set_defaults(handler=cmd_install_claude_code)


def register_install_codex(sub) -> None:
    p = sub.add_parser("codex", help="MCP server entry in ~/.codex/config.toml and the AGENTS.md pointer",
                       description="Append a [mcp_servers.brain] block to $CODEX_HOME/config.toml (default "
                                   "~/.codex/config.toml) between marker comments, and make sure AGENTS.md has the "
                                   "pointer line. `brain uninstall codex` removes exactly that. When brain's Codex plugin "
                                   "is enabled (codex plugin add brain@brain), it already brings the server and hooks: the "
                                   "install says so and writes nothing (--force installs all the same).")
    _add_command_option(p)
    add_json(p)
    p.set_defaults(handler=cmd_install_codex)


def _argv(args) -> list[str]:
    import shlex

    from ..hooks import default_brain_argv

    return shlex.split(args.brain_command) if getattr(args, "brain_command", None) else default_brain_argv()


def _covered(args, client: str, found: dict | None) -> bool:
    """Report that brain's plugin covers ``client`` (and install nothing), unless --force or no plugin."""
    if found is None or args.force:
        return False
    from ..hooks.plugins import covered_text

    emit({"client": "claude-code" if client == "Claude Code" else "codex", "installed": False,
          "covered_by": found["plugin"], "where": found["where"], "plugin_path": found["path"]},
         args.json, lambda d: covered_text(client, found))
    return True


def cmd_install_claude_code(args) -> int:
    import os

    from ..hooks.claude import install
    from ..hooks.plugins import claude_plugin

    brain = open_from_args(args)
    if _covered(args, "Claude Code", claude_plugin(brain.repo, dict(os.environ))):
        return 0
    data = install(brain, _argv(args))
    emit({**data, "installed": True}, args.json, _installed_text)
    return 0


def _installed_text(d: dict) -> str:
    lines = [f"wrote {', '.join(d['files'])} (hooks: {', '.join(d['hooks'])})",
             f"wrote the MCP server `brain` to Claude Code's local scope: {d['config']} (project {d['key']})",
             f"command: {' '.join(d['command'])}"]
    if d["excluded"]:
        lines.append(f"kept {d['files'][0]} out of git (`{d['excluded']}` in the clone's info/exclude)")
    if d["removed_shared"]:
        lines.append(f"took brain's machine-specific entries out of {', '.join(d['removed_shared'])}: commit that")
    if d["pointer"]:
        lines.append(f"added the pointer line to {d['pointer']}")
    lines += [f"pending: {p['what']}\n  to approve: {p['step']}" for p in d["pending"]]
    return "\n".join(lines)


def cmd_install_codex(args) -> int:
    import os

    from ..hooks.codex import install
    from ..hooks.plugins import codex_plugin

    brain = open_from_args(args)
    if _covered(args, "Codex", codex_plugin(dict(os.environ))):
        return 0
    data = {**install(brain, _argv(args), dict(os.environ)), "installed": True}
    emit(data, args.json, lambda d: f"wrote [mcp_servers.brain] in {d['config']}"
         + ("; added the AGENTS.md pointer" if d["agents_md"] else ""))
    return 0


def cmd_uninstall(args) -> int:
    import os

    brain = open_from_args(args)
    if args.target == "claude-code":
        from ..hooks.claude import uninstall

        data = uninstall(brain, dict(os.environ))
        emit(data, args.json, lambda d: ("removed brain from " + ", ".join(
            d["files"] + ([d["pointer"]] if d["pointer"] else []) + ([d["config"]] if d["config"] else [])))
             if d["files"] or d["pointer"] or d["config"] else "nothing of brain's to remove")
    else:
        from ..hooks.codex import uninstall

        data = uninstall(brain, dict(os.environ))
        emit(data, args.json, lambda d: f"{'removed' if d['removed_config'] else 'no'} brain block in {d['config']}"
             + ("; removed the AGENTS.md pointer" if d["agents_md"] else ""))
    return 0


# -- log, handoff, record-turn -------------------------------------------------------------------------------------
def _when(at: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)) if at else "?"


def cmd_log(args) -> int:
    brain = open_from_args(args)
    conv = brain.conversations
    if args.prune:
        from ..log.worktrees import prune_removed

        removed = conv.log.prune_all()
        handoffs = conv.prune_local()
        worktrees = prune_removed(brain, conv.log.retention_seconds, conv.log.clock())
        emit({"pruned": removed, "handoffs": handoffs, "worktrees": worktrees}, args.json, lambda d: "\n".join(
            [f"{t}: {', '.join(n)}" for t, n in d["pruned"].items()]
            + [f"{t}: local handoff" for t in d["handoffs"]]
            + [f"removed worktree {c}: its logs" for c in d["worktrees"]]) or "nothing past the retention")
        return 0
    if args.worktree and not args.thread:
        raise InvalidInput("--worktree NAME reads one THREAD there; list them with --worktrees", field="worktree")
    if not args.thread:
        data = {"threads": [t.to_dict() for t in conv.threads()]}
        from ..log.worktrees import worktree_logs

        others = [w.to_dict() | {"threads": [t.to_dict() for t in w.log.threads()]} for w in worktree_logs(brain)]
        if args.worktrees:
            data["worktrees"] = others
        elsewhere = sum(len(w["threads"]) for w in others)
        emit(data, args.json, lambda d: _render_threads(d) + (
            f"\n{elsewhere} conversation(s) in other worktrees: brain log --worktrees"
            if elsewhere and not args.worktrees else ""))
        return 0
    if args.worktree:
        from ..log.worktrees import worktree_log

        other = worktree_log(brain, args.worktree)
        if other is None:
            raise NotFound(f"worktree {args.worktree!r} with conversation logs",
                           hint="`brain log --worktrees` lists the other worktrees and their threads")
        page = other.log.page(args.thread, args.page, args.size)
    else:
        page = conv.page(args.thread, args.page, args.size)

    def render(d) -> str:
        # pages count lines (brain.log.pages): a damaged line keeps its place and is skipped here
        out = [f"{d['thread']}: page {d['page']}/{d['pages']} ({d['total']} lines"
               + (f"; {d['skipped']} torn or foreign skipped on this page" if d["skipped"] else "") + ")", ""]
        for t in d["turns"]:
            arrow = f" -> {t['to']}" if t.get("to") else ""
            out.append(f"[{_when(t['at'])}] {t['speaker']}{arrow} ({t['kind']}):")
            out.extend("    " + line for line in t["text"].splitlines() or [""])
            if t.get("files"):
                out.append("    files: " + ", ".join(t["files"]))
        return "\n".join(out)

    emit(page.to_dict(), args.json, render)
    return 0


def _thread_line(t: dict) -> str:
    return (f"{t['thread']}  {', '.join(t['parties'])}  {t['bytes']} bytes  {t['segments']} segment(s)  "
            f"updated {_when(t['updated'])}")


def _render_threads(d: dict) -> str:
    lines = [_thread_line(t) for t in d["threads"]]
    if "worktrees" not in d:
        return "\n".join(lines) or "no conversation recorded yet"
    lines = (["in this checkout:"] + ["  " + line for line in lines]) if lines else ["in this checkout: none"]
    for w in d["worktrees"]:
        gone = f", removed: --worktree {w['key']}" if w.get("removed") else ""
        lines.append(f"in worktree {w['worktree']} ({w['branch'] or 'no branch'}{gone}):"
                     + ("" if w["threads"] else " none"))
        lines += ["  " + _thread_line(t) for t in w["threads"]]
    if any(w["threads"] for w in d["worktrees"]):
        lines.append("read one: brain log THREAD --worktree NAME")
    return "\n".join(lines)


def cmd_handoff(args) -> int:
    from ..errors import NotFound

    brain = open_from_args(args)
    conv = brain.conversations
    if args.migrate:
        if args.thread or args.promote or args.rebuild:
            from ..errors import InvalidInput

            raise InvalidInput("--migrate takes no THREAD, --promote or --rebuild", field="migrate")
        moved, deleted = conv.migrate_legacy()
        brain.commit_memory(deleted, writer=None, reason="per-session handoffs move to handoffs/local/ "
                            "(machine-local, not versioned)", action="delete")
        emit({"migrated": moved, "deleted": deleted}, args.json, lambda d: (
            f"moved {len(d['migrated'])} handoff(s) to handoffs/local/; the versioned copies are deleted "
            "(commit the deletions unless sync.commit_on_write did)") if d["migrated"] else "nothing to migrate")
        return 0
    if not args.thread:
        names = conv.handoff_names()
        emit({"handoffs": sorted(set(names["local"]) | set(names["promoted"])), "promoted": names["promoted"]},
             args.json, lambda d: "\n".join(t + ("  (promoted)" if t in d["promoted"] else "") for t in d["handoffs"])
             or "no handoff yet")
        return 0
    if args.rebuild:
        if not conv.log.segments(args.thread):
            raise NotFound(f"conversation {args.thread}")
        conv.rebuild(args.thread)
    doc = conv.handoff(args.thread)
    if doc is None:
        raise NotFound(f"handoff of {args.thread}", hint="`brain handoff` lists them")
    if args.promote:
        from ..log import mark_promoted, promoted_path

        doc = brain.write(promoted_path(args.thread), mark_promoted(doc.text), role=writer_role(brain, args),
                          reason=f"promote the handoff of {args.thread}")
        emit({"thread": args.thread, "path": doc.path, "hash": doc.hash, "promoted": True}, args.json,
             lambda d: f"promoted to {d['path']}")
        return 0
    emit({"thread": args.thread, "path": doc.path, "text": doc.text, "hash": doc.hash}, args.json, lambda d: d["text"])
    return 0


def cmd_record_turn(args) -> int:
    from ..log.turns import MAX_TURN_BYTES

    brain = open_from_args(args)
    text = args.text if args.text is not None else read_input_text(args.file, "turn text", MAX_TURN_BYTES)
    rec = brain.record_turn(args.thread, args.speaker, text, to=args.to, kind=args.kind, ref=args.ref)
    emit(rec.to_dict(), args.json, lambda d: f"recorded turn {d['turns']} of {d['thread']} ({d['handoff']})")
    return 0


def cmd_import_turns(args) -> int:
    import hashlib
    import json
    from pathlib import Path

    from ..errors import InvalidInput, NotFound
    from ..log.importer import import_transcript
    from ..log.transcripts import Counters, detect_format, read_transcript

    brain = open_from_args(args)
    path = Path(args.file).resolve()
    if not path.is_file():
        raise NotFound(f"transcript {args.file}")
    fmt = detect_format(path)
    if fmt is None:
        raise InvalidInput(f"{args.file} is neither a Claude Code nor a Codex transcript", field="file")
    agent = args.agent
    if not agent:
        counters = Counters()
        for event in read_transcript(path, counters, fmt):
            if event.kind == "session":
                break
        agent = f"{fmt}-{counters.session or path.stem}"
    thread = brain.thread_between(args.person, agent)
    marker = brain.runtime / "imports" / (hashlib.sha256(f"{path}|{thread}".encode()).hexdigest()[:24] + ".json")
    from ..memory.files import atomic_write_bytes, file_lock

    # the offset is read, the turns imported and the offset saved by one importer at a time: twelve
    # concurrent imports of one transcript once logged every turn nine times over
    with file_lock(marker.with_suffix(".lock")):
        try:
            offset = int(json.loads(marker.read_text(encoding="utf-8")).get("offset", 0))
        except (OSError, ValueError, AttributeError):
            offset = 0
        if offset > path.stat().st_size:
            offset = 0  # the file was replaced: start over
        result = import_transcript(brain.conversations, path, thread=thread, person=args.person, agent=agent,
                                   offset=offset, fmt=fmt, root=brain.repo)
        atomic_write_bytes(marker, json.dumps({"file": str(path), "thread": thread, "offset": result.offset})
                           .encode("utf-8"), durable=False, private=True)
    emit(result.to_dict(), args.json, lambda d: f"imported {d['turns']} turn(s) into {d['thread']}"
         + (f" ({d['skipped']} torn or foreign lines skipped)" if d["skipped"] else ""))
    return 0


# -- stats ---------------------------------------------------------------------------------------------------------
def cmd_stats(args) -> int:
    import calendar
    import os
    import time
    from pathlib import Path

    from ..errors import InvalidInput, NotFound, NotInitialized
    from ..log.stats import compute, discover, installed_at, render_svg, render_text
    from ..log.transcripts import detect_format

    try:
        brain = open_from_args(args)
        repo = brain.repo
    except NotInitialized:
        brain, repo = None, Path(getattr(args, "dir", None) or os.getcwd()).resolve()
    paths = []
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            raise NotFound(f"transcript {name}")
        paths.append((path, detect_format(path)))
    if not args.no_discover:
        paths += [p for p in discover(repo) if p[0] not in {q for q, _ in paths}]
    installed = installed_at(brain) if brain is not None else (None, None)
    if args.installed:
        try:
            installed = (float(calendar.timegm(time.strptime(args.installed, "%Y-%m-%d"))), "--installed")
        except ValueError:
            raise InvalidInput(f"--installed {args.installed!r} is not a YYYY-MM-DD date", field="installed") from None
    if args.tasks < 0:
        raise InvalidInput("--tasks must be 0 or more", field="tasks")
    report = compute(paths, installed)
    if args.svg:
        Path(args.svg).write_text(render_svg(report), encoding="utf-8")
    emit(report.to_dict(), args.json, lambda _: render_text(report, task_rows=args.tasks))
    return 0


# -- hooks -----------------------------------------------------------------------------------------------------------
MAX_HOOK_INPUT = 1024 * 1024


def cmd_hook(args) -> int:
    import json
    import os

    from ..hooks.events import HOOK_NAMES, subcommand

    if args.event not in HOOK_NAMES:  # exit 0 all the same: a hook exiting 2 blocks the client's prompt or tool call
        sys.stderr.write(f"brain hook: unknown Claude Code hook event {args.event[:80]!r}; brain answers "
                         f"{', '.join(HOOK_NAMES)}\n")
        return 0
    try:
        from ..inputs import read_bounded

        # the events brain hooks (session start/end, stop, pre-compact) carry ids and paths, never tool output
        raw = read_bounded(sys.stdin.buffer, MAX_HOOK_INPUT, "hook input") if sys.stdin is not None else b""
        payload = json.loads(raw or b"{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        from ..hooks.claude import handle

        out, code = handle(subcommand(args.event), payload, dict(os.environ), client=args.client)
    except Exception as exc:  # noqa: BLE001 - a hook must never break the client's session
        sys.stderr.write(f"brain hook {args.event}: {type(exc).__name__}: {exc}\n")
        return 0
    if out:
        sys.stdout.write(out + "\n")
    return code
