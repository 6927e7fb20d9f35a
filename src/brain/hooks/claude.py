"""Claude Code: install brain into a project, and answer the hook events it sends.

Install (``claude_install``) writes, merging into whatever the user has:
- Claude Code's local scope (`~/.claude.json`): ``mcpServers.brain`` = `brain serve` (the MCP tools,
  `brain_boot` first);
- `.claude/settings.local.json`: hooks that run `brain hook claude-code EVENT`:
  SessionStart (startup|resume|clear|compact) injects a compact boot (under ~10,000 characters, the
  part of hook output Claude Code keeps) that points to `brain_boot` for the rest; PreCompact writes
  a checkpoint of the session; Stop imports the new turns into the log and, once per session, asks
  the agent to update now.md if it edited files but not now.md; SessionEnd imports the last turns
  and ends the brain session.

Codex's hooks (brain's Codex plugin runs `brain hook codex EVENT`) take the same events, input fields and
SessionStart output: the handler is the same, with the session's role `codex` and Codex's transcript format.

A hook never breaks the client: any failure is reported on stderr and the hook exits 0
with no output. Hook output carries the boot and short instructions only — never log
content (the frontier rule).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

from ..coord.clients import client_pid, joins_client
from ..errors import InvalidInput, NotInitialized
from .claude_install import HOOK_EVENTS, hook_command, install, uninstall
from .jsonedit import read_json_object

__all__ = ["install", "uninstall", "handle", "HOOK_EVENTS", "MAX_CONTEXT_CHARS", "hook_command", "client_pid",
           "prune_states"]

MAX_CONTEXT_CHARS = 9500  # Claude Code keeps about 10,000 characters of hook output
BOOT_BUDGET = 2200  # tokens: ~8,800 characters of boot, leaving room for the header


# -- hook events ---------------------------------------------------------------------------------------------------
def _is_file(path) -> bool:
    return isinstance(path, str) and bool(path) and os.path.isfile(path)


def prune_states(brain, older_than: float) -> int:
    """Delete the hook states (`runtime/hooks/claude-*.json`) not updated for ``older_than`` seconds: their
    Claude sessions are long over. Called by the hourly tidy pass at a session start; returns how many went."""
    folder = brain.runtime / "hooks"
    cutoff = time.time() - older_than
    gone = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith("claude-") and entry.name.endswith(".json")):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
                with contextlib.suppress(FileNotFoundError):  # its lock goes with it: the session is long over
                    os.unlink(brain.runtime / "hook-locks" / (entry.name[: -len(".json")] + ".lock"))
                gone += 1
        except OSError:
            continue
    return gone


def _safe_name(brain, sid: str) -> str:
    """The client's session id as a name brain may keep (a file, a thread party): a hash of it when it
    is shaped like a key, since names are refused, never redacted (security.redact.refuse_secret_name)."""
    name = re.sub(r'[^A-Za-z0-9_-]+', '-', sid)[:80] or 'unknown'
    if brain.redactor(name) != name:
        import hashlib

        name = "h" + hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return name


def _state_path(brain, sid: str) -> Path:
    return brain.runtime / "hooks" / f"claude-{_safe_name(brain, sid)}.json"


def _lock_path(brain, sid: str) -> Path:
    """Beside hooks/, not in it: runtime/hooks/ holds the states alone (one file per live session)."""
    return brain.runtime / "hook-locks" / f"claude-{_safe_name(brain, sid)}.lock"


def _load_state(brain, sid: str) -> dict:
    return read_json_object(_state_path(brain, sid))


def _save_state(brain, sid: str, state: dict) -> None:
    from ..memory.files import atomic_write_bytes

    from ..security.redact import redact_fields

    # the hook JSON is the client's (any field may carry a pasted key): every string passes the redactor
    atomic_write_bytes(_state_path(brain, sid), json.dumps(redact_fields(state, brain.redactor)).encode("utf-8"),
                       durable=False, private=True)


def _now_hash(brain) -> str | None:
    doc = brain.memory.read_or_none("now.md")
    return doc.hash if doc else None


def _agent_party(brain, sid: str, state: dict, *, start: bool, client_name: str = "claude-code") -> str:
    """The brain session standing for this client session (a coordination session when possible), whose role
    is the client's name (`claude-code`, `codex`): the one its MCP server's handshake gives."""
    if state.get("party"):
        return state["party"]
    prefix = "codex" if client_name == "codex" else "claude"
    party = f"{prefix}-{sid}" if brain.redactor(sid) == sid else f"{prefix}-{_safe_name(brain, sid)}"
    if start:
        try:
            client = client_pid()
            if client is None:
                party = brain.coord.start_session(client_name).id
            else:  # the session this client's MCP server started, if it did: one agent, one session
                party = brain.coord.join_or_start_session(client_name, pid=client,
                                                          joinable=joins_client(client, servers=True))[0].id
            state["coord"] = True
        except Exception as exc:  # noqa: BLE001 - coordination unavailable: the log and boot still work
            state["coord_error"] = type(exc).__name__
    state["party"] = party
    return party


def _import(brain, payload: dict, state: dict, party: str, fmt: str = "claude") -> dict:
    from ..log.importer import import_transcript

    path = payload.get("transcript_path")
    if not isinstance(path, str) or not Path(path).is_file():
        return {"turns": 0}
    if state.get("transcript") not in (path, brain.redactor(path)):  # the state keeps the path redacted
        state["transcript"], state["offset"] = path, 0
    sid = str(payload.get("session_id") or "unknown")

    def progress(offset: int) -> None:  # saved after each chunk: a hook killed by its timeout re-imports nothing
        state["offset"] = offset
        _save_state(brain, sid, state)

    result = import_transcript(brain.conversations, Path(path), thread=brain.thread_between("person", party),
                               person="person", agent=party, offset=int(state.get("offset", 0)), fmt=fmt,
                               root=brain.repo, on_progress=progress)
    state["offset"] = result.offset
    state["edited"] = sorted(set(state.get("edited", [])) | set(result.edited))[:200]
    return result.to_dict()


def compact_boot(brain, party: str | None) -> str:
    """The boot for a hook: within MAX_CONTEXT_CHARS, pointing to `brain_boot` for the rest."""
    session_arg = f' with session="{party}"' if party else ""
    head = (f"[brain] Project memory for this session (compact boot). Your brain session id: {party or 'none'}. "
            f"Call the MCP tool `brain_boot`{session_arg} for the full context, and update .brain/now.md "
            f"(tool `brain_write`) before you stop.\n\n")
    budget = max(brain.settings["boot.min_budget"], min(BOOT_BUDGET, brain.settings["boot.budget"]))
    result = brain.boot(session=party, budget=budget)
    text = result.text
    room = MAX_CONTEXT_CHARS - len(head)
    if len(text) > room:
        tail = "\n\n[cut to fit the hook output limit: call `brain_boot` for the rest]"
        cut = text[: room - len(tail)]
        cut = cut[: cut.rfind("\n")] if "\n" in cut else cut
        text = cut + tail
    return head + text


def handle(event: str, payload: dict, env: dict[str, str], client: str = "claude-code") -> tuple[str, int]:
    """Answer one hook event of ``client`` (`claude-code`, or `codex`, whose hooks take the same events, input
    fields and SessionStart output); returns (stdout, exit code). Raises nothing the caller must handle."""
    from ..workspace import open_brain

    where = env.get("CLAUDE_PROJECT_DIR") or payload.get("cwd") or os.getcwd()
    try:
        brain = open_brain(where, env=env)
    except NotInitialized as error:
        if event != "session-start" or error.main_brain is None:
            raise
        # a linked worktree whose branch lacks the repository's memory: the agent is told (its context), since
        # it works in a project that uses brain and would otherwise start without knowing what it is missing
        context = f"brain: {error.message}. What to do: {error.hint}."
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}), 0
    sid = str(payload.get("session_id") or "unknown")
    from ..memory.files import file_lock

    if event == "session-end" and not _load_state(brain, sid) and not _is_file(payload.get("transcript_path")):
        return "", 0  # a session that never started here: `claude mcp list` ends one; nothing to keep (no lock)
    # one hook of a session at a time: its state (the transcript offset) is read, the new turns imported
    # and the state saved as one step; twelve hooks fired together once imported every turn twelve times
    with file_lock(_lock_path(brain, sid)):
        return _handle(brain, event, payload, sid, client)


def _handle(brain, event: str, payload: dict, sid: str, client: str = "claude-code") -> tuple[str, int]:
    fmt = "codex" if client == "codex" else "claude"  # the transcript's format
    state = _load_state(brain, sid)
    if event == "session-end" and not state and not _is_file(payload.get("transcript_path")):
        return "", 0  # a session that never started here: `claude mcp list` ends one; nothing to keep
    if event == "session-start":
        party = _agent_party(brain, sid, state, start=True, client_name=client)
        state.setdefault("started", time.time())
        if payload.get("source") in ("startup", "clear") or "now_hash" not in state:
            state["now_hash"] = _now_hash(brain)
        state["source"] = payload.get("source")
        _save_state(brain, sid, state)
        brain.tidy_after_session_start()
        context = compact_boot(brain, party)
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}), 0
    party = _agent_party(brain, sid, state, start=event == "pre-compact", client_name=client)
    if event == "pre-compact":
        _import(brain, payload, state, party, fmt)
        _checkpoint(brain, party, state, payload)
        _save_state(brain, sid, state)
        return "", 0
    if event == "stop":
        _import(brain, payload, state, party, fmt)
        ask = (not payload.get("stop_hook_active") and not state.get("asked") and state.get("edited")
               and _now_hash(brain) == state.get("now_hash"))
        if ask:
            state["asked"] = True
        _save_state(brain, sid, state)
        if ask:
            reason = ("[brain] You edited files this session but .brain/now.md still describes the state before it. "
                      "Update it now (MCP tool `brain_write` with path \"now.md\", or `brain write now`): the current "
                      "step, the very next action, and any context a new session must know. Then stop.")
            return json.dumps({"decision": "block", "reason": reason}), 0
        return "", 0
    if event == "session-end":
        _import(brain, payload, state, party, fmt)
        if state.get("coord"):
            try:
                brain.coord.end_session(party)
            except Exception:  # noqa: BLE001
                pass
        state["ended"] = time.time()
        _save_state(brain, sid, state)
        return "", 0
    raise InvalidInput(f"unknown Claude Code hook {event!r}", field="event")


def _checkpoint(brain, party: str, state: dict, payload: dict) -> None:
    """Before compaction: the session's step and distilled context, so it resumes after the compaction."""
    thread = brain.thread_between("person", party)
    hstate = brain.conversations.state(thread)
    step = hstate.next_step.text if hstate.next_step else "context compaction"
    note_lines = [f"Written before a {payload.get('trigger') or 'context'} compaction.",
                  f"Thread handoff: .brain/handoffs/local/{thread}.md"]
    if state.get("edited"):
        note_lines.append("Files edited this session: " + ", ".join(state["edited"][:30]))
    note = "\n".join(note_lines)
    if state.get("coord"):
        try:
            brain.coord.checkpoint(party, step[:400], note=note)
            state["checkpoint"] = "coord"
            return
        except Exception as exc:  # noqa: BLE001 - fall back to a memory note
            state["coord_error"] = type(exc).__name__
    brain.write(f"notes/checkpoint-{re.sub(r'[^A-Za-z0-9_-]+', '-', party)[:80]}.md",
                f"# Checkpoint of {party}\n\nStep: {step}\n\n{note}\n")
    state["checkpoint"] = "note"
