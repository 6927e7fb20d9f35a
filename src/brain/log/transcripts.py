"""Streaming readers of client transcripts: Claude Code and Codex session files.

Both clients write JSON Lines. Each reader walks one file line by line (memory does
not grow with the file), turns the lines it understands into a few normalized
``Event``s and counts the rest: a line that is torn (no final newline), not JSON, or
not a JSON object with a ``type`` is *skipped* and counted, never fatal; a valid
line of a kind that carries nothing we measure is simply passed over.

Claude Code (`~/.claude/projects/<slug>/<session>.jsonl`): lines of ``type`` user /
assistant / system / summary...; ``message.content`` blocks (text, tool_use with a
``name`` such as Read or Bash and an ``input``, tool_result); ``message.usage`` with
input_tokens, cache_read_input_tokens, cache_creation_input_tokens, output_tokens —
repeated on every line of one API response, so calls are counted once per
``message.id``; ``{"type":"system","subtype":"compact_boundary"}`` marks a compaction.

Codex (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): lines ``{timestamp, type,
payload}`` with type session_meta (id, cwd), response_item (message, function_call
with a name and JSON ``arguments``, local_shell_call, custom_tool_call),
event_msg (user_message, token_count with ``info.last_token_usage``,
context_compacted) and compacted.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterator

from ..inputs import bounded_lines, loads_json

__all__ = ["Event", "Counters", "read_transcript", "read_claude", "read_codex", "detect_format", "head_objects", "is_read_command",
           "parse_time"]

READ_TOOLS = {"Read", "NotebookRead", "read_file", "view_file", "open_file"}
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
SHELL_TOOLS = {"Bash", "shell", "container.exec", "shell_command", "exec_command", "local_shell"}
_READ_PROGRAMS = {"cat", "head", "tail", "less", "more", "nl", "bat", "view", "tac"}
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# A longer line (a transcript cut without newlines, a planted multi-GB file) is counted as skipped, not read
# into memory; a client's own lines with a large tool result or image stay well below it.
MAX_LINE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Event:
    """One normalized happening of a session.

    kind: session (id known) | prompt (a person's message) | text (assistant text) | call (one model
    call, ``tokens`` = its context size) | read (a file-read tool call) | edit | compact | compact_event
    """

    kind: str
    at: float | None = None
    tokens: int = 0
    text: str = ""
    files: tuple[str, ...] = ()
    session: str = ""


@dataclass
class Counters:
    lines: int = 0
    skipped: int = 0  # torn or foreign lines
    bytes: int = 0
    position: int = 0  # offset just past the last complete line read
    line_start: int = 0  # offset of the line the last event came from
    session: str = ""
    cwd: str = ""


def parse_time(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / (1000.0 if value > 1e11 else 1.0)
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_read_command(command) -> bool:
    """Whether a shell command reads a file the way the Read tool would (cat, head, sed -n...)."""
    if isinstance(command, list):
        words = [str(w) for w in command]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
            command = words[2]
        else:
            command = " ".join(shlex.quote(w) for w in words)
    if not isinstance(command, str):
        return False
    for segment in _SEGMENTS.split(command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in _READ_PROGRAMS and len(words) > 1:
            return True
        if program == "sed" and any(w == "-n" or w.startswith("-n") for w in words[1:]):
            return True
    return False


def _lines(path: Path, start: int, counters: Counters) -> Iterator[dict]:
    counters.position = start
    with open(path, "rb") as handle:
        handle.seek(start)
        for raw, size, whole in bounded_lines(handle, MAX_LINE_BYTES):
            counters.bytes += size
            if raw is None:  # longer than any line worth reading: skipped without being held
                if not whole:
                    counters.skipped += 1  # torn (see below): read again once complete
                    break
                counters.line_start = counters.position
                counters.position += size
                counters.lines += 1
                counters.skipped += 1
                continue
            if not raw.endswith(b"\n"):
                if raw.strip():
                    counters.skipped += 1  # torn: being written, or cut by a crash
                break
            counters.line_start = counters.position
            counters.position += len(raw)
            if not raw.strip():
                continue
            counters.lines += 1
            try:
                obj = loads_json(raw)
            except ValueError:
                counters.skipped += 1
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
                counters.skipped += 1
                continue
            yield obj


def _block_files(value) -> tuple[str, ...]:
    if isinstance(value, dict):
        for key in ("file_path", "notebook_path", "path"):
            if isinstance(value.get(key), str):
                return (value[key],)
    return ()


def read_claude(path: Path, counters: Counters | None = None, start: int = 0) -> Iterator[Event]:
    counters = counters if counters is not None else Counters()
    last_message = None
    for obj in _lines(Path(path), start, counters):
        kind = obj["type"]
        if not counters.session and isinstance(obj.get("sessionId"), str):
            counters.session = obj["sessionId"]
            counters.cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else ""
            yield Event("session", parse_time(obj.get("timestamp")), session=counters.session)
        if kind == "system":
            if obj.get("subtype") == "compact_boundary":
                yield Event("compact", parse_time(obj.get("timestamp")))
            continue
        message = obj.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            continue
        at = parse_time(obj.get("timestamp"))
        content = message.get("content")
        if kind == "user":
            if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isSidechain"):
                continue
            if isinstance(content, str):
                text = content
            elif isinstance(content, list):
                if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                    continue
                text = "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
            else:
                continue
            if text.strip() and not text.lstrip().startswith(("<command-", "<local-command-")):
                yield Event("prompt", at, text=text)
            continue
        if obj.get("isSidechain"):
            continue
        usage = message.get("usage")
        mid = message.get("id") or obj.get("requestId") or obj.get("uuid")
        if isinstance(usage, dict) and mid != last_message:
            last_message = mid
            tokens = 0
            for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    tokens += value
            yield Event("call", at, tokens=tokens)
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                yield Event("text", at, text=block["text"])
            elif block.get("type") == "tool_use":
                name, args = block.get("name"), block.get("input")
                if name in READ_TOOLS:
                    yield Event("read", at, files=_block_files(args))
                elif name in EDIT_TOOLS:
                    yield Event("edit", at, files=_block_files(args))
                elif name in SHELL_TOOLS and isinstance(args, dict) and is_read_command(args.get("command")):
                    yield Event("read", at)


def read_codex(path: Path, counters: Counters | None = None, start: int = 0) -> Iterator[Event]:
    counters = counters if counters is not None else Counters()
    last_total = None
    for obj in _lines(Path(path), start, counters):
        kind, payload = obj["type"], obj.get("payload")
        if not isinstance(payload, dict):
            continue
        at = parse_time(obj.get("timestamp"))
        if kind == "session_meta":
            counters.session = str(payload.get("id") or counters.session or Path(path).stem)
            counters.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else ""
            yield Event("session", parse_time(payload.get("timestamp")) or at, session=counters.session)
        elif kind == "compacted":
            yield Event("compact", at)
        elif kind == "event_msg":
            sub = payload.get("type")
            if sub == "user_message" and isinstance(payload.get("message"), str):
                yield Event("prompt", at, text=payload["message"])
            elif sub == "agent_message" and isinstance(payload.get("message"), str):
                yield Event("text", at, text=payload["message"])
            elif sub == "context_compacted":
                yield Event("compact_event", at)
            elif sub == "token_count" and isinstance(payload.get("info"), dict):
                info = payload["info"]
                total, last = info.get("total_token_usage"), info.get("last_token_usage")
                if total == last_total or not isinstance(last, dict):
                    continue  # the same figures re-announced (rate-limit updates)
                last_total = total
                tokens = last.get("input_tokens")
                if isinstance(tokens, int) and not isinstance(tokens, bool):
                    yield Event("call", at, tokens=tokens)
        elif kind == "response_item":
            sub = payload.get("type")
            if sub in ("function_call", "custom_tool_call"):
                name = payload.get("name")
                raw = payload.get("arguments", payload.get("input"))
                args = raw
                if isinstance(raw, str):
                    try:
                        args = loads_json(raw)
                    except ValueError:
                        args = raw
                if name in READ_TOOLS:
                    yield Event("read", at, files=_block_files(args))
                elif name == "apply_patch":
                    text = args if isinstance(args, str) else (args.get("input", "") if isinstance(args, dict) else "")
                    yield Event("edit", at, files=tuple(_PATCH_FILE.findall(text or "")))
                elif name in SHELL_TOOLS and isinstance(args, dict) and is_read_command(args.get("command") or args.get("cmd")):
                    yield Event("read", at)
            elif sub == "local_shell_call":
                action = payload.get("action")
                if isinstance(action, dict) and is_read_command(action.get("command")):
                    yield Event("read", at)


def head_objects(path: Path, lines: int) -> Iterator[dict]:
    """The JSON objects among the first ``lines`` lines of a file (unreadable file or lines skipped)."""
    try:
        with open(path, "rb") as handle:
            for _, (raw, _size, _whole) in zip(range(lines), bounded_lines(handle, MAX_LINE_BYTES)):
                if raw is None:
                    continue
                try:
                    obj = loads_json(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    yield obj
    except OSError:
        return


def detect_format(path: Path) -> str | None:
    """`claude` or `codex` from the first lines of a file, or None if neither."""
    for obj in head_objects(path, 50):
        if "payload" in obj and obj.get("type") in ("session_meta", "response_item", "event_msg", "turn_context",
                                                   "compacted"):
            return "codex"
        if "sessionId" in obj or obj.get("type") in ("user", "assistant", "summary"):
            return "claude"
    return None


def read_transcript(path: Path, counters: Counters | None = None, fmt: str | None = None, start: int = 0) -> Iterator[Event]:
    fmt = fmt or detect_format(path)
    if fmt == "codex":
        return read_codex(path, counters, start)
    return read_claude(path, counters, start)
