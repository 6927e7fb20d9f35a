"""Team commands: `brain token create|list|revoke|delete` and `brain team leave` (team server access), and
`brain sync` (git remotes)."""

from __future__ import annotations

import time

from .common import add_json, open_from_args
from .output import emit

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("token", help="bearer tokens of the team server (create, list, revoke)",
                       description="Bearer tokens for `brain serve --http` used by several machines. Once a token "
                                   "exists, every HTTP request needs one (401 otherwise). Tokens are stored hashed "
                                   "in .brain/runtime/tokens.json; a new token is printed once and never again.")
    tsub = p.add_subparsers(dest="token_command", metavar="ACTION")
    c = tsub.add_parser("create", help="create a token for an agent or a person (printed once)",
                        description="Create a bearer token NAME. Its sessions get role R (territories apply to it) "
                                    "and machine M in their ids; it may act only as the sessions it started, plus "
                                    "those whose id starts with --session-prefix.")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--role", metavar="R", help="role of the token's sessions and memory writes (default: NAME)")
    c.add_argument("--machine", metavar="M", help="machine name in the token's session ids (default: NAME)")
    c.add_argument("--session-prefix", metavar="P", help="also allow acting as existing sessions whose id starts "
                                                          "with P (e.g. sess-20261130-0900-build@laptop)")
    c.add_argument("--layer", action="append", default=[], choices=["instance", "personal"], dest="layers",
                   help="serve this user-level layer to the token (read, write); repeatable. Without it the "
                        "instance and personal layers are never served to the token")
    add_json(c)
    c.set_defaults(handler=cmd_token_create)
    lp = tsub.add_parser("list", help="list tokens (never the tokens themselves)",
                         description="Every token: name, role, machine, created, revoked, its sessions.")
    add_json(lp)
    lp.set_defaults(handler=cmd_token_list)
    r = tsub.add_parser("revoke", help="revoke a token: refused from its next request on",
                        description="Revoke token NAME. A running server refuses it at its next request (401).")
    r.add_argument("name", metavar="NAME")
    add_json(r)
    r.set_defaults(handler=cmd_token_revoke)
    d = tsub.add_parser("delete", help="delete a token's record (active or revoked) from the list",
                        description="Forget token NAME entirely: an active one stops working at its next request, "
                                    "and it no longer appears in `brain token list`. The last token deleted still "
                                    "leaves the server in team mode; `brain team leave` goes back to local mode.")
    d.add_argument("name", metavar="NAME")
    add_json(d)
    d.set_defaults(handler=cmd_token_delete)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])

    t = sub.add_parser("team", help="team mode of this brain (leave: back to local mode)",
                       description="Team mode starts with the first `brain token create`: the HTTP server then "
                                   "requires a bearer token. `brain team leave --yes` goes back to local mode.")
    tteam = t.add_subparsers(dest="team_command", metavar="ACTION")
    lv = tteam.add_parser("leave", help="delete every token: back to local mode (loopback, no token)",
                          description="Delete the token store (.brain/runtime/tokens.json): every token stops "
                                      "working, and `brain serve --http` serves this machine only, without a token, "
                                      "as before the first token. A server already bound beyond loopback keeps "
                                      "refusing requests without a valid token (it will find none): stop it and "
                                      "start it again on 127.0.0.1. Deliberate: refused without --yes.")
    lv.add_argument("--yes", action="store_true", help="really delete every token")
    add_json(lv)
    lv.set_defaults(handler=cmd_team_leave)
    t.set_defaults(handler=lambda args: (t.print_help(), 2)[1])

    s = sub.add_parser("sync", help="pull and push every memory git repository against its remote",
                       description="For the project memory, each layer repository under $BRAIN_HOME and each "
                                   "satellite declared in sync.satellites: commit pending memory changes, fetch, "
                                   "merge and push. A real conflict stops that repository with the files named, "
                                   "both sides kept (merge aborted, nothing pushed); exit code 6. A .git inside the "
                                   "memory that is not declared is never run: reported as refused, exit code 7.")
    s.add_argument("--no-push", action="store_true", help="pull only")
    s.add_argument("--dry-run", action="store_true", help="list the repositories and pending changes, change nothing")
    add_json(s)
    s.set_defaults(handler=cmd_sync)


def _when(stamp) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp)) if stamp else "-"


def cmd_token_create(args) -> int:
    brain = open_from_args(args)
    token, record = brain.tokens.create(args.name, role=args.role, machine=args.machine,
                                        session_prefix=args.session_prefix, layers=args.layers)
    data = {"token": token, **record.public()}
    emit(data, args.json, lambda d: (f"token {d['name']} (role {d['role'] or d['name']}, machine {d['machine']}):\n"
                                     f"{d['token']}\nshown once: store it now (e.g. in the client's "
                                     f"Authorization: Bearer header config)"))
    return 0


def cmd_token_list(args) -> int:
    brain = open_from_args(args)
    items = [r.public() for r in brain.tokens.list()]

    def render(rows):
        if not rows:
            return "no tokens: `brain token create NAME --role R` makes one"
        return "\n".join(f"{r['name']:<20} role={r['role'] or r['name']:<12} machine={r['machine']:<12} "
                         f"created={_when(r['created'])} "
                         f"{'revoked=' + _when(r['revoked']) if r['revoked'] else 'active'} "
                         f"sessions={len(r['sessions'])}" for r in rows)

    emit(items, args.json, render)
    return 0


def cmd_token_revoke(args) -> int:
    brain = open_from_args(args)
    record = brain.tokens.revoke(args.name)
    emit(record.public(), args.json, lambda d: f"revoked token {d['name']}")
    return 0


def cmd_token_delete(args) -> int:
    brain = open_from_args(args)
    gone = brain.tokens.delete(args.name)
    emit({"deleted": args.name, "records": len(gone), "tokens_left": len(brain.tokens.list())}, args.json,
         lambda d: f"deleted token {d['deleted']} ({d['tokens_left']} left"
         + ("; still team mode: `brain team leave --yes` goes back to local mode)" if not d["tokens_left"] else ")"))
    return 0


def cmd_team_leave(args) -> int:
    from ..errors import InvalidInput

    brain = open_from_args(args)
    active = [r.name for r in brain.tokens.list() if r.active]
    if not args.yes:
        raise InvalidInput("leaving team mode deletes every token" + (f" ({', '.join(active)})" if active else ""),
                           field="yes", hint="run `brain team leave --yes` to do it")
    was_team = brain.tokens.exists()
    gone = brain.tokens.leave()
    emit({"left": was_team, "tokens_deleted": [r.name for r in gone]}, args.json,
         lambda d: ("local mode: deleted " + (", ".join(d["tokens_deleted"]) or "the empty token store")
                    + "; restart a running `brain serve --http` on 127.0.0.1") if d["left"]
         else "already in local mode (no token store)")
    return 0


def cmd_sync(args) -> int:
    from ..errors import SyncConflict

    brain = open_from_args(args)
    report = brain.sync(push=not args.no_push, dry_run=args.dry_run)

    def render(d):
        lines = []
        for r in d["repos"]:
            extra = []
            if r["committed"]:
                extra.append("committed pending memory")
            if r["pulled"]:
                extra.append(f"pulled {r['pulled']}")
            if r["pushed"]:
                extra.append(f"pushed {r['pushed']}")
            if r["conflicts"]:
                extra.append("CONFLICT in " + ", ".join(r["conflicts"]))
            if r["error"]:
                extra.append("ERROR " + r["error"])
            lines.append(f"{r['kind']:<9} {r['repo']}: {r['status']}" + (f" ({'; '.join(extra)})" if extra else ""))
        return "\n".join(lines) or "no memory repository found"

    emit(report.to_dict(), args.json, render)
    if report.conflicts:
        first = report.conflicts[0]
        raise SyncConflict(first.repo, first.conflicts, first.local or "", first.remote or "")
    if report.refused:
        from ..errors import UntrustedRepository

        first = report.refused[0]
        raise UntrustedRepository(first.repo, first.error or "")
    if report.errors:
        from ..errors import SyncError

        first = report.errors[0]
        raise SyncError(first.repo, "sync", first.error or "")
    return 0
