"""Coordination commands: session, claim, release, claims, signal, signals, checkpoint, ask, inbox,
reply, workstate, audit. Each parses, makes one library call on ``brain.coord``, prints."""

from __future__ import annotations

from ..bounds import MAX_COUNT, MAX_ID, MAX_SECONDS, cli_int, cli_seconds
import os
import time

from .common import add_json, open_from_args
from .output import emit

__all__ = ["register"]


def _session_arg(p, required: bool = True) -> None:
    default = os.environ.get("BRAIN_SESSION")
    p.add_argument("--session", metavar="ID", default=default, required=required and not default,
                   help="your session id (default: $BRAIN_SESSION); every call is also its heartbeat")


def _when(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


def register(sub) -> None:
    p = sub.add_parser("session", help="start, end or list coordination sessions",
                       description="Sessions are the routing identity sess-YYYYMMDD-HHMM-<role>@<machine>.")
    ssub = p.add_subparsers(dest="session_command", metavar="ACTION")
    s = ssub.add_parser("start", help="start a live session", description="Start a live session and print its id.")
    s.add_argument("--role", required=True, metavar="R", help="the session's role, e.g. build, review, test")
    add_json(s)
    s.set_defaults(handler=cmd_session_start)
    s = ssub.add_parser("end", help="end a session", description="End a session: its claims are released and asks "
                                                                   "waiting on it resolve as silent.")
    s.add_argument("id", metavar="ID")
    add_json(s)
    s.set_defaults(handler=cmd_session_end)
    s = ssub.add_parser("list", help="list sessions and their liveness",
                        description="List sessions with liveness alive / stalled / gone and the worktree and "
                                    "branch each works in (every worktree of the repository shares them).")
    s.add_argument("--all", action="store_true", help="include gone and ended sessions")
    add_json(s)
    s.set_defaults(handler=cmd_session_list)
    s = ssub.add_parser("prune", help="delete sessions gone or ended long enough",
                        description="Delete the sessions that never did anything and have been gone or ended for "
                                    "coord.prune_idle_seconds, and every session gone or ended for "
                                    "coord.prune_gone_seconds (never one holding a claim or in an open ask; the "
                                    "audit history stays). Every session start does this too.")
    add_json(s)
    s.set_defaults(handler=cmd_session_prune)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])

    p = sub.add_parser("claim", help="claim a path, glob or name:ITEM (overlaps are reported, never blocked)",
                       description="Claim ITEM (a path, a glob, or name:ITEM) for a TTL. The claim is always granted; "
                                   "claims of other sessions that overlap it are returned. --renew extends a held "
                                   "claim and never revives a lost one.")
    p.add_argument("item", nargs="?", metavar="ITEM")
    _session_arg(p)
    p.add_argument("--ttl", type=cli_seconds(MAX_SECONDS, "--ttl"), metavar="S", help="lease in seconds (default coord.claim_ttl, 1800)")
    p.add_argument("--renew", type=cli_int(0, MAX_ID, "--renew"), metavar="CLAIM", help="renew this claim instead of claiming ITEM")
    add_json(p)
    p.set_defaults(handler=cmd_claim)

    p = sub.add_parser("release", help="release a claim", description="Release CLAIM, every claim on --item, or --all.")
    p.add_argument("claim", nargs="?", type=cli_int(0, MAX_ID, "CLAIM"), metavar="CLAIM")
    _session_arg(p)
    p.add_argument("--item", metavar="ITEM")
    p.add_argument("--all", action="store_true", help="release every claim of the session")
    add_json(p)
    p.set_defaults(handler=cmd_release)

    p = sub.add_parser("claims", help="list claims and overlaps; --watch keeps reporting overlaps",
                       description="List held claims and the overlapping pairs. --watch reports overlaps every "
                                   "--interval seconds until interrupted; --decide A B --decision TEXT records a "
                                   "human decision on an overlap.")
    p.add_argument("--session", metavar="ID", help="only this session's claims")
    p.add_argument("--all", action="store_true", help="include released and expired claims")
    p.add_argument("--watch", action="store_true", help="keep watching for overlaps")
    p.add_argument("--interval", type=cli_seconds(86400, "--interval"), default=5.0, metavar="S", help="seconds between watch rounds (default 5)")
    p.add_argument("--count", type=cli_int(1, MAX_COUNT, "--count"), metavar="N", help="stop watching after N rounds")
    p.add_argument("--decide", nargs=2, type=cli_int(0, MAX_ID, "--decide"), metavar=("A", "B"), help="record a decision on the overlap of claims A and B")
    p.add_argument("--decision", metavar="TEXT", help="the decision text (with --decide)")
    p.add_argument("--by", default="human", metavar="WHO", help="who decided (default human)")
    add_json(p)
    p.set_defaults(handler=cmd_claims)

    p = sub.add_parser("signal", help="send a signal to a session or broadcast to <brain>@<machine>",
                       description="Send TEXT to TARGET: a session id, or <brain>@<machine> for every live session "
                                   "of that brain on that machine (not yourself).")
    p.add_argument("target", metavar="TARGET")
    p.add_argument("text", metavar="TEXT")
    _session_arg(p)
    p.add_argument("--kind", default="note", help="a short kind label (default note)")
    add_json(p)
    p.set_defaults(handler=cmd_signal)

    p = sub.add_parser("signals", help="read your signals in order (after your cursor)",
                       description="Signals for the session after its acknowledged cursor, oldest first. "
                                   "--ack moves the cursor past the ones printed.")
    _session_arg(p)
    p.add_argument("--ack", action="store_true", help="acknowledge what is printed")
    p.add_argument("--all", action="store_true", help="include already acknowledged signals still kept")
    p.add_argument("--limit", type=cli_int(1, MAX_COUNT, "--limit"), default=100, metavar="N")
    add_json(p)
    p.set_defaults(handler=cmd_signals)

    p = sub.add_parser("checkpoint", help="snapshot the session (or show its checkpoint)",
                       description="With --step: snapshot the session (step, open claims, pending asks, signal "
                                   "cursor, --note). Without: print its checkpoint, or its predecessor's.")
    _session_arg(p)
    p.add_argument("--step", metavar="TEXT", help="the current step (writes the checkpoint)")
    p.add_argument("--note", default="", metavar="TEXT", help="free text for whoever resumes")
    add_json(p)
    p.set_defaults(handler=cmd_checkpoint)

    p = sub.add_parser("ask", help="ask another session and wait for its reply (bounded)",
                       description="Ask TARGET a QUESTION and block until exactly one of: its reply; TARGET seen "
                                   "stalled (no reply); the absolute timeout (600 s, BRAIN_ASK_TIMEOUT overrides). "
                                   "TARGET is a session id, or a role: its one live session, waited for (within "
                                   "the same bound) while that agent is still starting. "
                                   "--ticket T waits again on an earlier ask (e.g. after a restart), still bounded by "
                                   "the deadline stored when it was armed.")
    p.add_argument("target", nargs="?", metavar="TARGET")
    p.add_argument("question", nargs="?", metavar="QUESTION")
    _session_arg(p)
    p.add_argument("--timeout", type=cli_seconds(MAX_SECONDS, "--timeout"), metavar="S", help="a shorter bound for this ask (never above the absolute one)")
    p.add_argument("--ticket", metavar="T", help="wait on this earlier ask instead of asking again")
    add_json(p)
    p.set_defaults(handler=cmd_ask)

    p = sub.add_parser("inbox", help="asks waiting on your reply", description="Asks made of the session, oldest first.")
    _session_arg(p)
    add_json(p)
    p.set_defaults(handler=cmd_inbox)

    p = sub.add_parser("reply", help="answer an ask", description="Answer ask TICKET. A second reply, or a reply "
                                                                 "after the ask resolved, is refused.")
    p.add_argument("ticket", metavar="TICKET")
    p.add_argument("answer", metavar="ANSWER")
    _session_arg(p)
    add_json(p)
    p.set_defaults(handler=cmd_reply)

    p = sub.add_parser("workstate", help="read or set the lean live state",
                       description="Print live state (busy/queue computed from pending asks), or --set KEY with "
                                   "--intent/--progress/--delegation/--status; --expect REV refuses a stale write.")
    p.add_argument("key", nargs="?", metavar="KEY", help="only this key")
    p.add_argument("--set", metavar="KEY", dest="set_key", help="write this key (last writer wins)")
    p.add_argument("--intent")
    p.add_argument("--progress")
    p.add_argument("--delegation")
    p.add_argument("--status", choices=["idle", "working", "done", "blocked", "stalled"])
    p.add_argument("--expect", type=cli_int(0, MAX_ID, "--expect"), metavar="REV", help="write only if the key is at revision REV (0: new key)")
    add_json(p)
    p.set_defaults(handler=cmd_workstate)

    p = sub.add_parser("audit", help="coordination history: grants, releases, expiries, signals, asks, replies",
                       description="The audit history of coordination, newest first.")
    p.add_argument("--limit", type=cli_int(1, MAX_COUNT, "--limit"), default=50, metavar="N")
    p.add_argument("--session", metavar="ID")
    p.add_argument("--action", metavar="A", help="only this action (grant, release, expire, signal, ask, reply...)")
    add_json(p)
    p.set_defaults(handler=cmd_audit)


def cmd_session_start(args) -> int:
    brain = open_from_args(args)
    info = brain.coord.start_session(args.role)  # no pid: a CLI process is gone right after
    brain.tidy_after_session_start()
    emit({"session": info.id}, args.json, lambda d: d["session"])
    return 0


def cmd_session_end(args) -> int:
    released = open_from_args(args).coord.end_session(args.id)
    emit({"session": args.id, "released": released}, args.json,
         lambda d: f"ended {d['session']} (released {len(d['released'])} claims)")
    return 0


def cmd_session_prune(args) -> int:
    pruned = open_from_args(args).coord.prune_sessions()
    emit({"pruned": pruned}, args.json, lambda d: f"pruned {d['pruned']} session(s)")
    return 0


def _where(worktree: str | None, branch: str | None) -> str:
    """A session's working tree and branch as shown: `wt-2 (feature-x)`, or '' for a session that named none."""
    if not worktree:
        return ""
    return f"{worktree} ({branch})" if branch else worktree


def cmd_session_list(args) -> int:
    sessions = [s.to_dict() for s in open_from_args(args).coord.sessions(include_gone=args.all)]
    emit(sessions, args.json, lambda ss: "\n".join(
        f"{s['id']}  {s['liveness']}  last seen {_when(s['last_seen'])}"
        + (f"  in {_where(s['worktree'], s['branch'])}" if s["worktree"] else "")
        + (f"  waiting on {s['waiting_on']}" if s["waiting_on"] else "") for s in ss) or "no live sessions")
    return 0


def _grant_text(d: dict) -> str:
    lines = [f"claim {d['claim']} on {d['item']} (fence {d['fence']}, until {_when(d['expires'])})"]
    lines += [f"  overlaps {o['item']} held by {o['session']} (claim {o['claim']})" for o in d["overlaps"]]
    return "\n".join(lines)


def cmd_claim(args) -> int:
    from ..errors import InvalidInput

    coord = open_from_args(args).coord
    if args.renew is not None:
        if args.item:
            raise InvalidInput("give ITEM or --renew CLAIM, not both", field="item")
        grant = coord.renew(args.session, args.renew, ttl=args.ttl)
    else:
        if not args.item:
            raise InvalidInput("what to claim is missing", field="item", hint="e.g. `brain claim src/auth --session ID`")
        grant = coord.claim(args.session, args.item, ttl=args.ttl)
    data = grant.to_dict()
    data["overlaps"] = [{"session": o["session"], "item": o["item"], "claim": o["claim"]} for o in data["overlaps"]]
    emit(data, args.json, _grant_text)
    return 0


def cmd_release(args) -> int:
    released = open_from_args(args).coord.release(args.session, args.claim, item=args.item, all_claims=args.all)
    emit({"released": released}, args.json, lambda d: f"released {len(d['released'])} claim(s)")
    return 0


def _places(coord) -> dict[str, dict]:
    """session id -> {worktree, branch}: where each session works (claims and overlaps name it)."""
    return {s.id: {"worktree": s.worktree, "branch": s.branch} for s in coord.sessions(include_gone=True)}


def _overlaps_data(coord, places: dict[str, dict] | None = None) -> list[dict]:
    places = _places(coord) if places is None else places
    none = {"worktree": None, "branch": None}
    return [{"a": {"claim": r.a.claim, "session": r.a.session, "item": r.a.item, **places.get(r.a.session, none)},
             "b": {"claim": r.b.claim, "session": r.b.session, "item": r.b.item, **places.get(r.b.session, none)},
             "decision": r.decision, "decided_by": r.decided_by} for r in coord.overlaps()]


def _party(side: dict) -> str:
    where = _where(side.get("worktree"), side.get("branch"))
    return f"{side['session']}{', ' + where if where else ''}"


def _overlaps_text(items: list[dict]) -> str:
    if not items:
        return "no overlapping claims"
    lines = []
    for o in items:
        line = (f"OVERLAP claim {o['a']['claim']} {o['a']['item']} ({_party(o['a'])}) <-> "
                f"claim {o['b']['claim']} {o['b']['item']} ({_party(o['b'])})")
        line += f"\n  decided by {o['decided_by']}: {o['decision']}" if o["decision"] else \
            f"\n  decide: brain claims --decide {o['a']['claim']} {o['b']['claim']} --decision TEXT"
        lines.append(line)
    return "\n".join(lines)


def cmd_claims(args) -> int:
    import json
    import sys

    from ..errors import InvalidInput

    coord = open_from_args(args).coord
    if args.decide:
        if not args.decision:
            raise InvalidInput("--decide needs --decision TEXT", field="decision")
        result = coord.decide_overlap(args.decide[0], args.decide[1], args.decision, by=args.by)
        emit(result, args.json, lambda d: f"recorded: claims {d['claim_a']}/{d['claim_b']}: {d['decision']}")
        return 0
    if args.watch:
        if args.interval <= 0:
            raise InvalidInput("--interval must be above 0", field="interval")
        rounds = 0
        while args.count is None or rounds < args.count:
            items = _overlaps_data(coord)
            if args.json:
                sys.stdout.write(json.dumps({"at": coord.clock(), "overlaps": items}) + "\n")
            else:
                sys.stdout.write(f"[{_when(coord.clock())}] " + _overlaps_text(items) + "\n")
            sys.stdout.flush()
            rounds += 1
            if args.count is not None and rounds >= args.count:
                break
            time.sleep(args.interval)  # a human-facing polling display, not synchronisation
        return 0
    places = _places(coord)
    none = {"worktree": None, "branch": None}
    claims = [{**c.to_dict(), **places.get(c.session, none)}
              for c in coord.claims(session=args.session, include_ended=args.all)]
    data = {"claims": claims, "overlaps": _overlaps_data(coord, places)}

    def render(d):
        lines = [f"{c['claim']:>5} {c['state']:<8} {c['item']}  {c['session']}"
                 + (f"  in {_where(c['worktree'], c['branch'])}" if c["worktree"] else "")
                 + f"  fence {c['fence']}  until {_when(c['expires'])}" for c in d["claims"]] or ["no claims held"]
        return "\n".join(lines + ["", _overlaps_text(d["overlaps"])])

    emit(data, args.json, render)
    return 0


def cmd_signal(args) -> int:
    result = open_from_args(args).coord.signal(args.session, args.target, args.text, kind=args.kind)
    emit(result, args.json, lambda d: f"sent to {len(d['recipients'])} session(s)")
    return 0


def cmd_signals(args) -> int:
    items = [s.to_dict() for s in open_from_args(args).coord.signals(args.session, include_acked=args.all,
                                                                     limit=args.limit, ack=args.ack)]
    emit(items, args.json, lambda ss: "\n".join(f"#{s['id']} [{s['kind']}] from {s['sender']}: {s['body']}"
                                                for s in ss) or "no new signals")
    return 0


def _checkpoint_text(d) -> str:
    if not d:
        return "no checkpoint"
    lines = [f"checkpoint of {d['session']}" + (" (predecessor)" if d["inherited"] else "") + f": {d['step']}"]
    lines += [f"  claim {c['claim']} {c['item']} (fence {c['fence']})" for c in d["claims"]]
    lines += [f"  ask {a['ticket']} {a['asker']} -> {a['target']}: {a['question']}" for a in d["asks"]]
    lines.append(f"  signal cursor {d['signal_cursor']}")
    if d["note"]:
        lines.append(d["note"])
    return "\n".join(lines)


def cmd_checkpoint(args) -> int:
    coord = open_from_args(args).coord
    if args.step is not None:
        cp = coord.checkpoint(args.session, args.step, note=args.note)
    else:
        cp = coord.read_checkpoint(args.session)
    emit(cp.to_dict() if cp else None, args.json, _checkpoint_text)
    return 0


def cmd_ask(args) -> int:
    from ..errors import InvalidInput

    coord = open_from_args(args).coord
    if args.ticket:
        if args.target or args.question:
            raise InvalidInput("give TARGET QUESTION or --ticket T, not both", field="ticket")
        coord.heartbeat(args.session)
        result = coord.wait(args.ticket)
    elif not (args.target and args.question):
        raise InvalidInput("ask needs TARGET and QUESTION", field="target",
                           hint="e.g. `brain ask sess-...-review@host \"is the API frozen?\" --session ID`")
    else:
        from ..coord.targets import arm_addressed

        armed = arm_addressed(coord, args.session, args.target, args.question, timeout=args.timeout)
        result = armed if armed.ticket is None else coord.wait(armed.ticket)  # None: no agent of the role came
    emit(result.to_dict(), args.json, lambda d: d["answer"] if d["outcome"] == "reply" else
         {"stalled": "target silent, no reply", "timeout": "timed out, no reply"}[d["outcome"]])
    return 0


def cmd_inbox(args) -> int:
    items = [{"ticket": i["ticket"], "from": i["from"], "question": i["question"]}
             for i in open_from_args(args).coord.inbox(args.session)]
    emit(items, args.json, lambda xs: "\n".join(f"{x['ticket']} from {x['from']}: {x['question']}" for x in xs)
         or "no asks waiting on you")
    return 0


def cmd_reply(args) -> int:
    result = open_from_args(args).coord.reply(args.session, args.ticket, args.answer)
    emit({"ticket": result.ticket, "replied": True}, args.json, lambda d: f"replied to {d['ticket']}")
    return 0


def cmd_workstate(args) -> int:
    from ..errors import InvalidInput

    live = open_from_args(args).livestate
    if args.set_key:
        entry = live.set(args.set_key, intent=args.intent, progress=args.progress, delegation=args.delegation,
                         status=args.status, expected_revision=args.expect, writer=os.environ.get("BRAIN_SESSION"))
        emit(entry.to_dict(), args.json, lambda d: f"{d['key']} at revision {d['revision']}")
        return 0
    if any(v is not None for v in (args.intent, args.progress, args.delegation, args.status, args.expect)):
        raise InvalidInput("--intent/--progress/--delegation/--status/--expect need --set KEY", field="set")
    from ..livestate.store import render_lean

    entries = live.read(args.key)
    emit([e.to_dict() for e in entries], args.json,
         lambda _: render_lean(entries, live.clock(), limit=1000, timestamps=True) or "no live state")
    return 0


def cmd_audit(args) -> int:
    events = [e.to_dict() for e in open_from_args(args).coord.history(limit=args.limit, session=args.session,
                                                                      action=args.action)]
    emit(events, args.json, lambda es: "\n".join(f"{_when(e['at'])} {e['action']:<13} {e['subject']}  "
                                                 f"{e['session'] or ''}" for e in es) or "no history")
    return 0
