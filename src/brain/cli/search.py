"""Search commands: search, index, related."""

from __future__ import annotations

from ..bounds import MAX_COUNT, cli_int
from .common import add_json, open_from_args
from .output import emit

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("search", help="full-text search over the memory and the code symbols",
                       description="Search every markdown store (now, focus, notes, workflows, module cards, decisions, "
                                   "handoffs) and the code's symbols. Identifier-aware: `bulk_create`, `bulkCreate` and "
                                   "`bulk create` find each other. Results are bounded: path, title and a short snippet.")
    p.add_argument("query", metavar="QUERY", nargs="+")
    p.add_argument("--kind", metavar="K", help="only this kind: now, focus, note, workflow, card, decision, handoff, "
                                              "contract, profile, memory or code")
    p.add_argument("--limit", type=cli_int(-MAX_COUNT, MAX_COUNT, "--limit"), default=10, metavar="N", help="at most N results (1-100, default 10)")
    add_json(p)
    p.set_defaults(handler=cmd_search)

    p = sub.add_parser("index", help="bring the derived search index up to date, or rebuild it",
                       description="Update runtime/index.db (memory documents, code symbols, graph) incrementally from "
                                   "the files, or with --rebuild start from nothing. Safe to run any time, e.g. from "
                                   "git post-merge and post-checkout hooks; deleting runtime/ loses nothing.")
    p.add_argument("--rebuild", action="store_true", help="delete the index and build it again from the files")
    p.add_argument("--no-code", action="store_true", help="only the memory documents (skip the source files)")
    p.add_argument("--quiet", action="store_true", help="print nothing (for git hooks)")
    add_json(p)
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("related", help="what the graph links to a file, module, card, decision or contract",
                       description="Neighbours of X in the derived graph: imports and dependencies, the module a file is "
                                   "in, the card describing a module, decisions about it and what they supersede.")
    p.add_argument("target", metavar="X")
    p.add_argument("--limit", type=cli_int(-MAX_COUNT, MAX_COUNT, "--limit"), default=30, metavar="N", help="at most N neighbours (1-100, default 30)")
    add_json(p)
    p.set_defaults(handler=cmd_related)


def cmd_search(args) -> int:
    brain = open_from_args(args)
    hits = brain.search(" ".join(args.query), kind=args.kind, limit=args.limit)
    brain.record_use("search", [h["path"] for h in hits if h.get("kind") != "code"])

    def render(items):
        if not items:
            return "no match"
        lines = []
        for h in items:
            lines.append(f"{h['path']}  [{h['kind']}] {h['title']}")
            if h["snippet"]:
                lines.append(f"    {h['snippet']}")
        return "\n".join(lines)

    emit(hits, args.json, render)
    return 0


def cmd_index(args) -> int:
    brain = open_from_args(args)
    if args.rebuild and args.no_code:
        from ..errors import InvalidInput

        raise InvalidInput("--rebuild always includes the code; drop --no-code", field="no_code")
    stats = brain.reindex(rebuild=args.rebuild, code=not args.no_code)
    if args.quiet and not args.json:
        return 0

    def render(d):
        mem = d["memory"]
        parts = [f"memory: {mem['documents']} documents ({mem['changed']} changed, {mem['removed']} removed)"]
        if "code" in d:
            c = d["code"]
            parts.append(f"code: {c['files']} files ({c['changed']} changed, {c['removed']} removed)")
        parts.append(f"graph: {d['graph']['nodes']} nodes, {d['graph']['edges']} edges")
        return "\n".join(parts)

    emit(stats, args.json, render)
    return 0


def cmd_related(args) -> int:
    brain = open_from_args(args)
    found = brain.related(args.target, limit=args.limit)

    def render(d):
        lines = [f"{', '.join(d['nodes'])}:"]
        for kind, items in d["related"].items():
            lines.append(f"  {kind}:")
            lines += [f"    {i['node']}" for i in items]
        if d["total"] > d["shown"]:
            lines.append(f"  ({d['total'] - d['shown']} more: --limit N)")
        return "\n".join(lines)

    emit(found, args.json, render)
    return 0
