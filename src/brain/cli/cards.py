"""Card and decision commands: map, report-done, decisions, decision."""

from __future__ import annotations

import sys
import time

from ..errors import InvalidInput
from .common import add_json, add_role, open_from_args, writer_role
from .output import emit, read_input_text

__all__ = ["register", "ProgressBar"]


class ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal and the run is long."""

    def __init__(self, stream=None, *, delay: float = 0.3, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.delay = delay
        self.width = width
        self.drawn = False

    def __call__(self, done: int, total: int, name: str) -> None:
        if not self.enabled or total <= 0:
            return
        if done >= total:
            if self.drawn:
                self.stream.write("\r\033[K")
                self.stream.flush()
            return
        if time.monotonic() - self.started < self.delay:
            return
        filled = int(self.width * done / total)
        line = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {name}"[:120]
        self.stream.write(line + "\033[K")
        self.stream.flush()
        self.drawn = True


def register(sub) -> None:
    p = sub.add_parser("map", help="build or refresh the module cards (.brain/modules/)",
                       description="Discover the modules of the repository and write one card per module to "
                                   ".brain/modules/<module>.md, mechanically. Only modules whose code changed are "
                                   "rebuilt. With --check nothing is written and the exit status is 1 when a card is "
                                   "stale, missing or orphaned (for CI and pre-commit).")
    p.add_argument("--module", metavar="M", help="only this module (its folder path, e.g. django/db/models)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 and name the stale cards")
    p.add_argument("--force", action="store_true", help="rebuild even the cards that look up to date")
    p.add_argument("--staged", action="store_true",
                   help="only the modules of the files staged in git, then `git add` their cards (pre-commit hook)")
    p.add_argument("--list", action="store_true", help="list the discovered modules and their files, write nothing")
    add_json(p)
    p.set_defaults(handler=cmd_map)

    p = sub.add_parser("report-done", help="refresh a module's card at the end of a task",
                       description="Regenerate module M's card now, so it lands in the same commit as the code, and "
                                   "when --how-to-use F is given replace only its How to use section with F's text.")
    p.add_argument("--module", metavar="M", required=True, help="the module the task changed")
    p.add_argument("--how-to-use", metavar="F", help="file with the new How to use text ('-' = standard input)")
    p.add_argument("--summary", metavar="TEXT", help="one paragraph on what was done (kept in runtime/reports.jsonl)")
    add_role(p)
    add_json(p)
    p.set_defaults(handler=cmd_report_done)

    p = sub.add_parser("decisions", help="the one-line index of decision records, filtered",
                       description="Print the decision records as one line each (number, status, title, modules), "
                                   "following supersession chains to the record that stands. Filter by words "
                                   "(--query) or by module (--module). `brain decisions --reindex` rewrites "
                                   ".brain/decisions.md.")
    p.add_argument("--query", "-q", metavar="Q", help="only records whose title, modules or text contain every word")
    p.add_argument("--module", metavar="M", help="only records about this module (or its parents/children)")
    p.add_argument("--all", action="store_true", help="include superseded and rejected records")
    p.add_argument("--reindex", action="store_true", help="rewrite .brain/decisions.md from the records")
    p.add_argument("--renumber", action="store_true",
                   help="give records that share a number (merged branches or clones) the next free numbers: the "
                        "record the upstream, else the main line (origin/HEAD, main, master), else this branch, already holds "
                        "keeps its number")
    p.add_argument("--dry-run", action="store_true", help="with --renumber: show the moves, change nothing")
    add_role(p)
    add_json(p)
    p.set_defaults(handler=cmd_decisions)

    p = sub.add_parser("decision", help="create a decision record or change its status",
                       description="`brain decision new TITLE` creates the next NNNN-title.md record (status proposed) "
                                   "and refreshes decisions.md; `brain decision status N accepted|rejected|deprecated` "
                                   "changes a status; `--supersedes N` on new marks record N superseded by the new one.")
    dsub = p.add_subparsers(dest="action", metavar="ACTION")
    q = dsub.add_parser("new", help="create the next decision record",
                        description="Create .brain/decisions/NNNN-<title>.md (or in decisions.dir) from a template.")
    q.add_argument("title", metavar="TITLE")
    q.add_argument("--status", default="proposed", choices=["proposed", "accepted"], help="initial status")
    q.add_argument("--module", action="append", default=[], metavar="M", help="module the decision is about (repeatable)")
    q.add_argument("--supersedes", metavar="N", help="the record this one replaces (it becomes superseded by this one)")
    q.add_argument("--file", "-f", metavar="F", help="the body (context, decision, consequences) from F or '-'")
    add_role(q)
    add_json(q)
    q.set_defaults(handler=cmd_decision_new)
    q = dsub.add_parser("status", help="set a record's status",
                        description="Set record N's status to proposed, accepted, rejected or deprecated.")
    q.add_argument("number", metavar="N")
    q.add_argument("status", choices=["proposed", "accepted", "rejected", "deprecated"])
    add_role(q)
    add_json(q)
    q.set_defaults(handler=cmd_decision_status)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def _render_report(d: dict) -> str:
    lines = []
    if d["checked"]:
        bad = d["stale"] + d["missing"] + d["orphans"] + (["decisions.md"] if d.get("decisions_index") == "stale" else [])
        if not bad:
            return f"all {len(d['modules'])} cards are up to date"
        for name in d["stale"]:
            lines.append(f"stale: {name}")
        for name in d["missing"]:
            lines.append(f"missing: {name}")
        for name in d["orphans"]:
            lines.append(f"orphaned card (module gone): {name}")
        if d.get("decisions_index") == "stale":
            lines.append("stale: .brain/decisions.md (does not match the decision records)")
        lines.append("run `brain map` to refresh them")
        return "\n".join(lines)
    lines.append(f"{len(d['written'])} card(s) written, {len(d['unchanged'])} up to date, "
                 f"{len(d['modules'])} module(s), {d['seconds']} s")
    for name in d["written"]:
        lines.append(f"  wrote .brain/modules/{name if name != '.' else '_root'}.md")
    for name in d["removed"]:
        lines.append(f"  removed orphaned card of {name}")
    if d.get("decisions_index") == "rewritten":
        lines.append("  rewrote .brain/decisions.md from the decision records")
    for name in [o for o in d["orphans"] if o not in d["removed"]]:
        lines.append(f"  kept orphaned card of {name} (it has a How to use section): move or delete it by hand")
    for name, why in d.get("errors", {}).items():
        lines.append(f"  could not write the card of {name}: {why}")
    index = d.get("index")
    if index and "error" in index:
        lines.append(f"  code index not built: {index['error']}")
    elif index and (index["changed"] or index["removed"]):
        lines.append(f"  code index: {index['changed']} changed and {index['removed']} removed of {index['files']} source "
                     f"files, {index.get('functions', 0)} file(s) in the function index, {index['seconds']} s")
    unread = sum(len(v) for v in d["unread"].values())
    if unread:
        lines.append(f"  {unread} file(s) not read (listed in their cards)")
    return "\n".join(lines)


def cmd_map(args) -> int:
    from ..cards import build_map, list_modules

    brain = open_from_args(args)
    if args.list:
        mods = list_modules(brain)
        data = [{"module": m.name, "kind": m.kind, "package": m.package, "files": list(m.files), "other": len(m.other)}
                for m in mods]
        emit(data, args.json, lambda d: "\n".join(f"{m['module']} ({m['kind']}, {len(m['files'])} files)" for m in d))
        return 0
    if args.staged:
        from ..cards.githook import refresh_staged

        data = refresh_staged(brain, check=args.check)
        emit(data, args.json, lambda d: "\n".join(f"refreshed and staged {c}" for c in d["staged"]) or "no card to refresh")
        return 1 if args.check and data["stale"] else 0
    report = build_map(brain, args.module, check=args.check, force=args.force,
                       progress=None if args.json else ProgressBar())
    emit(report.to_dict(), args.json, _render_report)
    return 1 if (args.check and not report.ok) or report.errors else 0


def cmd_report_done(args) -> int:
    brain = open_from_args(args)
    text = read_input_text(args.how_to_use, "How to use text",
                           brain.settings["limits.write_bytes"], "limits.write_bytes") if args.how_to_use else None
    result = brain.report_done(args.module, how_to_use=text, summary=args.summary, role=writer_role(brain, args))

    def render(d):
        line = f"{'refreshed' if d['refreshed'] else 'checked'} {d['card']}"
        if d["how_to_use_replaced"]:
            line += " and replaced its How to use section"
        return line

    emit(result, args.json, render)
    return 0


def cmd_decisions(args) -> int:
    brain = open_from_args(args)
    if args.dry_run and not args.renumber:
        raise InvalidInput("--dry-run goes with --renumber", field="dry_run")
    if args.renumber:
        result = brain.renumber_decisions(dry_run=args.dry_run, role=writer_role(brain, args))
        emit(result, args.json, _render_renumber)
        return 0
    if args.reindex:
        from ..decisions import duplicate_numbers, load_decisions

        path = brain.reindex_decisions()
        shared = sorted(duplicate_numbers(load_decisions(brain)))
        emit({"index": path, "duplicates": shared}, args.json,
             lambda d: f"wrote {d['index']}" + (f"\n{len(shared)} number(s) held by several records "
                                               f"({', '.join(f'{n:04d}' for n in shared)}): `brain decisions "
                                               "--renumber`" if shared else ""))
        return 0
    items = brain.decisions(query=args.query, module=args.module, include_inactive=args.all)
    emit(items, args.json, lambda d: "\n".join(i["line"] for i in d) or "no matching decision")
    return 0


def cmd_decision_new(args) -> int:
    brain = open_from_args(args)
    body = read_input_text(args.file, "decision body", brain.settings["limits.write_bytes"],
                           "limits.write_bytes") if args.file else None
    record = brain.new_decision(args.title, status=args.status, modules=args.module, supersedes=args.supersedes, body=body,
                                role=writer_role(brain, args))
    emit(record, args.json, lambda d: f"created {d['path']} ({d['status']})")
    return 0


def cmd_decision_status(args) -> int:
    brain = open_from_args(args)
    record = brain.set_decision_status(args.number, args.status, role=writer_role(brain, args))
    emit(record, args.json, lambda d: f"{d['path']}: {d['status']}")
    return 0


def _render_renumber(d: dict) -> str:
    if not d["moves"]:
        return "every decision record has a number of its own"
    verb = "would move" if d["dry_run"] else "moved"
    lines = [f"{d['kept'][n]} keeps {int(n):04d}" for n in sorted(d["kept"], key=int)]
    lines += [f"{verb} {m['path']} -> {m['new_path']} ({m['number']:04d} -> {m['to']:04d})" for m in d["moves"]]
    for number, paths in d["mentions"].items():
        lines.append(f"check: {', '.join(paths)} cite {int(number):04d}, which may mean either record")
    if not d["dry_run"]:
        lines.append("rewrote .brain/decisions.md; commit the renames: git add -A .brain && git commit")
    return "\n".join(lines)
