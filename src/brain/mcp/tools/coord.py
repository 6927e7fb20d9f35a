"""Coordination MCP tools: claims, signals, checkpoints, ask/reply, live state.

A connection is a session from its handshake: ``initialize`` (handshake-era clients),
``server/discover`` (2026-07-28 clients that probe), or over stdio the first request of a
2026-07-28 client that pins its version. So an agent is on the board, and can be asked,
while it cold-starts. The id is ``sess-YYYYMMDD-HHMM-<role>@<machine>``, the role coming
from BRAIN_ROLE, else the client's name (``brain.coord.clients.client_role``), else
``agent``. Every tool defaults to that session; each call is its heartbeat, and over stdio the
server beats for an idle agent while it is connected (brain.coord.keepalive). When the
connection closes (stdio: the client closed the pipe; HTTP: the server stops) the session
ends, claims released; a session whose connection made no tool call and left no trace (a
health check: ``claude mcp list``, an ``initialize`` + ``tools/list``) is
deleted at once, so health checks never pile up on the board.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated, Literal

from pydantic import Field

from ...errors import InvalidInput
from ..access import ASK_MADE, ASK_RECEIVED, CLAIM, LIVE_KEY, SESSION, ActsAs, Addresses, ReadsBoard
from .. import outputs
from ..registry import ClientHello, ToolOutput, ToolRegistry

__all__ = ["register", "connection_session", "start_connection_session", "connection_role", "own_session"]

_lock = threading.Lock()

Session = Annotated[str | None, Field(description="Your session id; leave empty to use this connection's own "
                                                  "session (started at its handshake)."), ActsAs(SESSION)]


def connection_role(brain, hello: ClientHello | None = None) -> str:
    """The role of this connection's session: BRAIN_ROLE, else the client's name, else the default role."""
    from ...coord.clients import client_role

    hello = hello or getattr(brain, "_mcp_hello", None)
    return client_role(brain.env.get("BRAIN_ROLE") or (hello.client_name if hello else None))


def start_connection_session(brain, hello: ClientHello | None = None) -> str:
    """Start the session of this MCP connection (idempotent per Brain object).

    On the team server (a bearer token authenticated the request) it is the token's own session."""
    from ...coord.clients import client_pid, joins_client
    from ...team.identity import bound_session, current_principal

    principal = current_principal()
    if principal is not None:
        return bound_session(brain, principal)
    with _lock:
        existing = getattr(brain, "_mcp_session", None)
        if existing:
            return existing
        hello = hello or getattr(brain, "_mcp_hello", None)
        role = connection_role(brain, hello)
        client = client_pid() if hello is not None and hello.transport == "stdio" else None
        if client is None:
            info = brain.coord.start_session(role, pid=os.getpid())  # the server process is the session's life
        else:  # the session the client's hooks started (Claude Code), if any: one agent, one session
            info, joined = brain.coord.join_or_start_session(role, pid=os.getpid(),
                                                             joinable=joins_client(client, servers=False))
            brain._mcp_session_joined = joined  # then the hooks end it, not this server
        brain._mcp_session = info.id
        brain.tidy_after_session_start()
        return info.id


def connection_session(brain, session: str | None = None) -> str:
    from ...team.identity import bound_session, current_principal

    principal = current_principal()
    if principal is not None:  # team server: only the token's own sessions (Forbidden otherwise)
        return bound_session(brain, principal, session)
    if session:
        return session
    from ..handles import caller_session

    return caller_session() or getattr(brain, "_mcp_session", None) or start_connection_session(brain)


def own_session(brain) -> str | None:
    """The session this call acts as without starting one: its handle's (brain.mcp.handles), else the
    connection's, else None."""
    from ..handles import caller_session

    return caller_session() or getattr(brain, "_mcp_session", None)


def register(tools: ToolRegistry) -> None:
    @tools.on_initialize
    def _session_from_the_handshake(brain, hello: ClientHello) -> None:
        from ...team.identity import current_principal

        brain._mcp_hello = hello
        sid = start_connection_session(brain, hello)  # on the team server: the token's one session
        if hello.transport == "stdio" and current_principal() is None and getattr(brain, "_mcp_beat", None) is None:
            from ...coord.keepalive import ConnectionHeartbeat, beat_interval

            # one stdio connection is one agent: alive while connected, however long it makes no call
            brain._mcp_beat = ConnectionHeartbeat(brain.coord, sid,
                                                  beat_interval(brain.coord.config.stall_seconds)).start()

    @tools.on_close
    def _end_session(brain) -> None:
        beat = getattr(brain, "_mcp_beat", None)
        if beat is not None:
            beat.stop()
        sid = getattr(brain, "_mcp_session", None)
        if not sid or getattr(brain, "_mcp_session_joined", False):
            return
        if getattr(brain, "_mcp_tool_calls", 0):
            brain.coord.end_session(sid)
        else:  # a health check: nothing to keep (unless someone else joined it or asked it something)
            brain.coord.discard_session(sid)

    @tools.tool(title="Sessions", read_only=True, output=outputs.Sessions)
    def brain_sessions(brain, include_gone: Annotated[bool, Field(description="Also list gone and ended sessions.")]
                       = False) -> ToolOutput:
        """List coordination sessions with their liveness (alive / stalled / gone) and which one is you.
        Use it to find the session id to ask (ask_agent) or signal (brain_signal)."""
        me = connection_session(brain)
        brain.coord.heartbeat(me)
        items = [s.to_dict() | {"you": s.id == me} for s in brain.coord.sessions(include_gone=include_gone)]
        text = "\n".join(f"{s['id']} {s['liveness']}{' (you)' if s['you'] else ''}"
                         + (f" in {s['worktree']}" + (f" ({s['branch']})" if s["branch"] else "") if s["worktree"] else "")
                         for s in items)  # every worktree of the repository shares the sessions: say where each is
        return ToolOutput(text or "no sessions", {"you": me, "sessions": items})

    @tools.tool(title="Claim a path or item", output=outputs.Grant)
    def brain_claim(
        brain,
        item: Annotated[str, Field(description="A repository path, a glob (src/auth/**/*.py), or name:ITEM for a "
                                               "named resource. A folder claims everything below it.")],
        ttl: Annotated[float | None, Field(description="Lease in seconds (default 1800). Renew before it ends.")] = None,
        renew: Annotated[int | None, Field(description="A claim id of yours to renew instead of claiming item."),
                         ActsAs(CLAIM)] = None,
        session: Session = None,
    ) -> ToolOutput:
        """Declare that you are working on a path or item. Always granted: claims of other sessions that
        overlap are returned so you can coordinate (signal them or ask). Returns the claim id and a fencing
        number; renewing a lost (expired or released) claim fails with claim_lost — then claim it again.
        Structured content: {claim, fence, item, session, expires, overlaps: [{session, item, claim}]}."""
        sid = connection_session(brain, session)
        grant = brain.coord.renew(sid, renew, ttl=ttl) if renew is not None else brain.coord.claim(sid, item, ttl=ttl)
        data = grant.to_dict()
        text = f"claim {grant.claim} on {grant.item} (fence {grant.fence})"
        if grant.overlaps:
            text += "\noverlaps: " + "; ".join(f"{o.item} held by {o.session}" for o in grant.overlaps)
        return ToolOutput(text, data)

    @tools.tool(title="Release claims", destructive=False, idempotent=True, output=outputs.Released)
    def brain_release(
        brain,
        claim: Annotated[int | None, Field(description="The claim id to release."), ActsAs(CLAIM)] = None,
        item: Annotated[str | None, Field(description="Release your claims on exactly this item.")] = None,
        all_claims: Annotated[bool, Field(description="Release every claim of your session.")] = False,
        session: Session = None,
    ) -> dict:
        """Release a claim when you are done with a path or item (by id, by item, or all of yours).
        Structured content: {released: [claim ids]}."""
        return {"released": brain.coord.release(connection_session(brain, session), claim, item=item,
                                                all_claims=all_claims)}

    @tools.tool(title="Send a signal", output=outputs.Sent)
    def brain_signal(
        brain,
        target: Annotated[str, Field(description="A session id, or <brain>@<machine> to broadcast to every live "
                                                 "session of this brain on that machine."), Addresses()],
        text: Annotated[str, Field(description="The message.")],
        kind: Annotated[str, Field(description="A short label: note, warning, handoff...")] = "note",
        session: Session = None,
    ) -> dict:
        """Send a short message to another session or broadcast it; it does not wait for an answer
        (use ask_agent for that). Structured content: {signals: [ids], recipients: [session ids]}."""
        return brain.coord.signal(connection_session(brain, session), target, text, kind=kind)

    @tools.tool(title="Read your signals", output=outputs.Signals)
    def brain_signals(
        brain,
        ack: Annotated[bool, Field(description="Mark the returned signals as read (moves your cursor).")] = True,
        include_acked: Annotated[bool, Field(description="Also return signals already read and still kept.")] = False,
        limit: Annotated[int, Field(description="At most this many, oldest first.", ge=1, le=500)] = 50,
        session: Session = None,
    ) -> dict:
        """Read the signals sent to you, in order, after your read cursor.
        Structured content: {items: [{id, sender, recipient, target, kind, body, created}]}."""
        items = brain.coord.signals(connection_session(brain, session), include_acked=include_acked, limit=limit,
                                    ack=ack)
        return {"items": [s.to_dict() for s in items]}

    @tools.tool(title="Checkpoint", output=outputs.CheckpointOut)
    def brain_checkpoint(
        brain,
        step: Annotated[str | None, Field(description="Your current step, to snapshot now. Leave empty to read your "
                                                      "checkpoint (or your predecessor's) instead.")] = None,
        note: Annotated[str, Field(description="Free text for whoever resumes: next action, open questions.")] = "",
        session: Session = None,
    ) -> ToolOutput:
        """Snapshot yourself before a context compaction or a handoff: step, open claims, pending asks,
        signal cursor and a note. brain_boot with your session id reads it back right after now.md.
        Without step: returns the checkpoint to resume from."""
        sid = connection_session(brain, session)
        from ...team.identity import read_own_checkpoint

        cp = brain.coord.checkpoint(sid, step, note=note) if step else read_own_checkpoint(brain, sid)
        if cp is None:
            return ToolOutput("no checkpoint", {"checkpoint": None})
        from ...boot.slots.checkpoint import render

        return ToolOutput(render(cp), cp.to_dict())

    @tools.tool(title="Ask another agent and wait", output=outputs.AskOutcome)
    async def ask_agent(
        brain,
        target: Annotated[str | None, Field(description="The session id to ask (see brain_sessions), or a role "
                                                        "(e.g. codex, review): its one live session, waited for "
                                                        "while that agent is still starting."),
                          Addresses()] = None,
        question: Annotated[str | None, Field(description="The question, self-contained.")] = None,
        timeout: Annotated[float | None, Field(description="Give up sooner than the absolute timeout (600 s by "
                                                           "default), in seconds.")] = None,
        ticket: Annotated[str | None, Field(description="Keep waiting on an earlier ask that came back pending, "
                                                        "instead of asking again."), ActsAs(ASK_MADE)] = None,
        wait_seconds: Annotated[float | None, Field(description="Bound of this call's wait; when it passes first "
                                                                "the outcome is pending (call again with ticket).")]
        = None,
        session: Session = None,
    ) -> ToolOutput:
        """Ask another session a question and block until exactly one of: its reply (outcome reply); the
        target seen stalled (outcome stalled: target silent, no reply); the absolute timeout (outcome
        timeout). Every path returns in bounded time. Asking a session that is waiting on you is refused
        (wait_cycle): answer your inbox first. A role as target waits for that role's agent to connect
        first (no ticket yet if it has not: pending, ask again). Structured content: {outcome, answer, ticket}."""
        import time

        from ...coord.targets import arm_addressed
        from ..calls import in_thread, wait_for_ask

        coord = brain.coord

        def arm():  # a ticket to keep waiting on, the armed Ask, or the outcome when nothing was asked
            sid = connection_session(brain, session)
            if ticket is not None:
                return ticket
            if not target or not question:
                raise InvalidInput("ask_agent needs target and question (or ticket to keep waiting)", field="target")
            return arm_addressed(coord, sid, target, question, timeout=timeout, wait_seconds=wait_seconds)

        started = time.monotonic()
        armed = await in_thread(arm)  # a role's cold start is waited for there; the ask's wait holds no thread
        if not isinstance(armed, str):
            if armed.ticket is None:  # no agent of that role connected in time: nothing was asked
                text = ("timed out, no reply: no session of that role connected" if armed.outcome == "timeout" else
                        f"no session of role {target} has connected yet: call ask_agent again to keep waiting")
                return ToolOutput(f"[{armed.outcome}] {text}", armed.to_dict())
            armed = armed.ticket
        if wait_seconds is not None:  # this call's bound covers the wait for the handshake too
            wait_seconds = max(wait_seconds - (time.monotonic() - started), 0.001)
        result = await wait_for_ask(coord, armed, wait_seconds=wait_seconds)
        text = {"reply": result.answer or "", "stalled": "target silent, no reply",
                "timeout": "timed out, no reply",
                "pending": f"still waiting: call ask_agent with ticket={armed} to keep waiting"}[result.outcome]
        return ToolOutput(f"[{result.outcome}] {text}", result.to_dict())

    @tools.tool(title="Reply to an ask", output=outputs.Replied)
    def reply(
        brain,
        ticket: Annotated[str, Field(description="The ticket from inbox."), ActsAs(ASK_RECEIVED)],
        answer: Annotated[str, Field(description="Your answer.")],
        session: Session = None,
    ) -> dict:
        """Answer a question another session asked you (see inbox). A second reply, or a reply after the ask
        resolved (timeout, stalled), is refused with reply_refused. Structured content: {ticket, replied}."""
        from ..calls import ask_changed

        result = brain.coord.reply(connection_session(brain, session), ticket, answer)
        ask_changed()  # the asker's wait, if it runs in this process, returns now rather than at its next read
        return {"ticket": result.ticket, "replied": True}

    @tools.tool(title="Asks waiting on you", read_only=True, output=outputs.Inbox)
    def inbox(brain, session: Session = None) -> dict:
        """The questions other sessions are waiting on you to answer, oldest first; answer each with reply.
        Structured content: {items: [{ticket, from, question}]}."""
        items = brain.coord.inbox(connection_session(brain, session))
        return {"items": [{"ticket": i["ticket"], "from": i["from"], "question": i["question"]} for i in items]}

    @tools.tool(title="Read live state", read_only=True, output=outputs.LiveItems)
    def workstate_read(brain, key: Annotated[str | None, Field(description="Only this key."), ReadsBoard()] = None
                       ) -> ToolOutput:
        """The lean project state: per key (a session, a role, a workstream) its intent, progress, last
        delegation and status, with busy/queue computed from the asks waiting on it.
        Structured content: {items: [...]}."""
        from ...livestate.store import render_lean

        entries = brain.livestate.read(key)
        brain.coord.heartbeat(connection_session(brain))  # a read is also this connection's heartbeat
        return ToolOutput(render_lean(entries, brain.coord.clock(), limit=50) or "no live state",
                          {"items": [e.to_dict() for e in entries]})

    @tools.tool(title="Set live state", output=outputs.LiveEntry)
    def workstate_set(
        brain,
        key: Annotated[str | None, Field(description="The key; default: your session id."), ActsAs(LIVE_KEY)] = None,
        intent: Annotated[str | None, Field(description="What you intend to do (≤ 200 bytes).")] = None,
        progress: Annotated[str | None, Field(description="How far you are (≤ 400 bytes).")] = None,
        delegation: Annotated[str | None, Field(description="The last thing you delegated (≤ 300 bytes).")] = None,
        status: Annotated[Literal["idle", "working", "done", "blocked", "stalled"] | None,
                          Field(description="Your status.")] = None,
        expected_revision: Annotated[int | None, Field(description="Write only if the key is still at this "
                                                                   "revision (0: a new key).")] = None,
    ) -> dict:
        """Record your intent / progress / last delegation (last writer wins; never a log). Keep it to one
        line each: it goes into every session's boot. Structured content: the entry with its revision."""
        sid = connection_session(brain)
        return brain.livestate.set(key or sid, intent=intent, progress=progress, delegation=delegation,
                                   status=status, expected_revision=expected_revision, writer=sid).to_dict()
