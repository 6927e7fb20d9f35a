"""Managing memory files: `brain notes`, `brain rm`, `brain mv`."""

from __future__ import annotations

from .common import add_json, add_role, open_from_args, writer_role
from .output import emit

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("notes", help="list memory files with titles and sizes",
                       description="List the project's memory files (.brain/: now.md, focus.md, notes/, workflows/, "
                                   "decisions/, agents/, promoted handoffs/, contracts/) with each one's first heading "
                                   "as title and its size in bytes. --all adds the module cards and the local "
                                   "handoffs.")
    p.add_argument("--all", action="store_true", help="also list module cards (modules/) and handoffs/local/")
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
                                   "follow; memory files whose [[links]] named the old path are listed to fix.")
    p.add_argument("source", metavar="SOURCE")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--expect", metavar="HASH", help="refuse unless the source's sha256 starts with HASH")
    add_role(p)
    p.add_argument("--reason", metavar="TEXT", help="why: goes into the commit message (sync.commit_on_write)")
    add_json(p)
    p.set_defaults(handler=cmd_mv)


def cmd_notes(args) -> int:
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
                      reason=args.reason)
    emit(data, args.json, lambda d: f"moved {d['moved']} to {d['to']} (sha256 {d['hash'][:12]})"
         + _links_line(d["linked_from"]))
    return 0
