"""Managing memory files: `brain notes`, `brain rm`, `brain mv`, `brain edit`, `brain remember`."""

from __future__ import annotations

from .common import add_json, add_role, open_from_args, writer_role
from .output import emit, read_input_text

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("notes", help="list memory files with titles and sizes",
                       description="List the project's memory files (.brain/: now.md, focus.md, notes/, workflows/, "
                                   "decisions/, agents/, promoted handoffs/, contracts/) with each one's first heading "
                                   "as title and its size in bytes. --all adds the module cards and the local "
                                   "handoffs.")
    p.add_argument("--all", action="store_true", help="also list module cards (modules/) and handoffs/local/")
    p.add_argument("--stale", action="store_true",
                   help="only the files no boot, read or search used and nobody wrote for --days days, and the "
                        "files naming code (a backticked call or class) the code index no longer has; each with "
                        "why. Nothing is deleted")
    p.add_argument("--days", type=float, default=90.0, metavar="N", help="with --stale: unused for N days (default 90)")
    add_json(p)
    p.set_defaults(handler=cmd_notes)

    p = sub.add_parser("rm", help="delete a memory file",
                       description="Delete one memory file (a path relative to .brain/, e.g. notes/old.md). now.md "
                                   "and focus.md cannot be removed. --expect refuses the delete if the file changed "
                                   "since you read it; --role is checked against the territories. The search index "
                                   "drops it; memory files whose [[links]] pointed to it are listed.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--expect", metavar="HASH", help="refuse unless the file's sha256 starts with HASH")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_rm)

    p = sub.add_parser("mv", help="rename a memory file",
                       description="Rename one memory file; DEST must not exist. now.md and focus.md cannot be "
                                   "moved. --expect refuses if the source changed since you read it; --role is "
                                   "checked against the territories of both paths. The search index and the graph "
                                   "follow; [[links]] that named the old path are rewritten to name the new one (each linking file written "
                                   "with its own territory check; one that cannot be is listed).")
    p.add_argument("source", metavar="SOURCE")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--expect", metavar="HASH", help="refuse unless the source's sha256 starts with HASH")
    p.add_argument("--no-links", action="store_true",
                   help="leave the [[links]] to SOURCE as they are (by default they are rewritten to name DEST)")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_mv)

    p = sub.add_parser("edit", help="change a memory file in place: append, prepend, a section, find-and-replace",
                       description="Edit one memory file (a path relative to .brain/, e.g. now.md or notes/setup.md) "
                                   "in place, atomically over the version read (or over --expect's): append or "
                                   "prepend lines (after front matter and a leading `# Title`; both create a missing "
                                   "file), replace the body of one section by its heading (--section HEADING "
                                   "--text TEXT; subsections go with it), or replace literal text (--replace OLD "
                                   "--with NEW; it must occur --count times, default 1). Territories (--role) and "
                                   "secret redaction apply as for `brain write`. TEXT '-' reads standard input.")
    p.add_argument("path", metavar="PATH")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--append", metavar="TEXT", help="add TEXT as the last lines")
    how.add_argument("--prepend", metavar="TEXT", help="add TEXT as the first lines of the body")
    how.add_argument("--section", metavar="HEADING", help="replace the body under HEADING with --text")
    how.add_argument("--replace", metavar="OLD", help="replace the literal text OLD with --with")
    p.add_argument("--text", metavar="TEXT", help="with --section: the new body ('-': standard input)")
    p.add_argument("--with", dest="new", metavar="NEW", help="with --replace: the new text ('' deletes)")
    p.add_argument("--count", type=int, default=1, metavar="N", help="with --replace: OLD must occur N times (default 1)")
    p.add_argument("--all", dest="every", action="store_true", help="with --replace: replace every occurrence, however many")
    p.add_argument("--expect", metavar="HASH", help="refuse unless the file's sha256 starts with HASH")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_edit)

    p = sub.add_parser("remember", help="file a one-line memory where it belongs",
                       description="File one line of memory without choosing a path: it goes as a bullet at the end "
                                   "of the note already about its subject (the note search ranks first whose title "
                                   "or headings share two of its words), else into notes/inbox.md to sort later. "
                                   "Territories and secret redaction apply as for `brain write`.")
    p.add_argument("text", nargs="+", metavar="TEXT")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_remember)


def cmd_notes(args) -> int:
    if args.stale:
        stale = open_from_args(args).stale_notes(args.days)
        emit({"stale": stale, "days": args.days}, args.json, lambda d: "\n".join(
            f"{n['path']}  {n['title']}\n    " + "; ".join(n["why"]) for n in d["stale"])
            or f"nothing stale: every memory file was used or written in the last {d['days']:g} days")
        return 0
    notes = [n.to_dict() for n in open_from_args(args).notes(everything=args.all)]
    emit({"notes": notes}, args.json, lambda d: "\n".join(
        f"{n['path']}  {n['bytes']} bytes  {n['title']}" for n in d["notes"]) or "no memory files")
    return 0


def _links_line(linked: list[str]) -> str:
    return ("\n[[links]] to it remain in: " + ", ".join(linked)) if linked else ""


def cmd_rm(args) -> int:
    brain = open_from_args(args)
    data = brain.remove(args.path, expected_hash=args.expect, role=writer_role(brain, args), reason=args.reason)
    emit(data, args.json, lambda d: f"removed {d['removed']}" + _links_line(d["linked_from"]))
    return 0


def cmd_mv(args) -> int:
    brain = open_from_args(args)
    data = brain.move(args.source, args.dest, expected_hash=args.expect, role=writer_role(brain, args),
                      reason=args.reason, rewrite_links=not args.no_links)

    def render(d):
        line = f"moved {d['moved']} to {d['to']} (sha256 {d['hash'][:12]})"
        if d["links_rewritten"]:
            line += "\n[[links]] rewritten in: " + ", ".join(d["links_rewritten"])
        if d["links_left"]:
            line += "\n[[links]] left as they were in: " + ", ".join(f"{x['path']} ({x['error']})" for x in d["links_left"])
        if args.no_links:
            line += _links_line(d["linked_from"])
        return line

    emit(data, args.json, render)
    return 0


def _text_arg(value: str | None, brain, what: str) -> str:
    if value == "-":
        return read_input_text(None, what, brain.settings["limits.write_bytes"], "limits.write_bytes")
    return value or ""


def cmd_edit(args) -> int:
    from ..errors import InvalidInput

    brain = open_from_args(args)
    if args.section is not None:
        if args.text is None:
            raise InvalidInput("--section needs --text: the new body of the section", field="text")
        operation, value, heading = "section", _text_arg(args.text, brain, "section text"), args.section
    elif args.replace is not None:
        if args.new is None:
            raise InvalidInput("--replace needs --with: the new text ('' deletes)", field="with")
        operation, value, heading = "replace", args.replace, None
    else:
        operation = "append" if args.append is not None else "prepend"
        value, heading = _text_arg(args.append if args.append is not None else args.prepend, brain, "text"), None
    if args.count < 1:
        raise InvalidInput("--count must be 1 or more", field="count")
    doc, changes = brain.edit(args.path, operation, value=value, heading=heading, new=args.new or "",
                              count=None if args.every else args.count, expected_hash=args.expect,
                              role=writer_role(brain, args), reason=args.reason)
    data = {"path": doc.path, "operation": operation, "changes": changes, "hash": doc.hash, "bytes": doc.size,
            "redacted": [{"kind": k, "count": n} for k, n in doc.redacted]}

    def render(d):
        line = f"edited {d['path']} ({d['operation']}, {d['changes']} change{'s' if d['changes'] != 1 else ''}, " \
               f"sha256 {d['hash'][:12]})"
        if d["redacted"]:
            line += "\nredacted: " + ", ".join(f"{r['count']} {r['kind']}" for r in d["redacted"])
        return line

    emit(data, args.json, render)
    return 0


def cmd_remember(args) -> int:
    brain = open_from_args(args)
    data = brain.remember(" ".join(args.text), role=writer_role(brain, args), reason=args.reason)
    emit(data, args.json, lambda d: f"remembered in {d['path']}: {d['why']}")
    return 0
