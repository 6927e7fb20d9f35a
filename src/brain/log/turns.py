"""A turn of a conversation, and how it is written as one JSON line.

A conversation (a *thread*) is between two parties: two agent sessions (every
ask/reply pair), or a person and an agent session (turns imported from the
client's transcript). Thread ids are file-system safe and stable, so the same
pair of sessions always lands in the same folder.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from ..bounds import MAX_TURN_BYTES  # one turn line; larger texts are refused, not split
from ..errors import InvalidInput
from ..inputs import loads_json

__all__ = ["Turn", "encode_turn", "decode_turn", "check_thread_id", "thread_between", "MAX_TURN_BYTES"]

_THREAD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]+")


@dataclass(frozen=True)
class Turn:
    """One message of a thread: who said it, to whom, what, and when."""

    thread: str
    speaker: str
    text: str
    at: float = field(default_factory=time.time)
    to: str | None = None
    kind: str = "message"  # message | ask | reply | ask_end (an ask ended without a reply) | prompt | answer | note
    files: tuple[str, ...] = ()
    ref: str | None = None  # e.g. the ask ticket a reply answers

    def to_dict(self) -> dict:
        data = {"at": round(self.at, 6), "thread": self.thread, "speaker": self.speaker, "kind": self.kind,
                "text": self.text}
        if self.to:
            data["to"] = self.to
        if self.files:
            data["files"] = list(self.files)
        if self.ref:
            data["ref"] = self.ref
        return data


def check_thread_id(thread: str) -> str:
    if not isinstance(thread, str) or not _THREAD_RE.match(thread) or ".." in thread:
        raise InvalidInput(f"thread id {thread!r} must be 1-200 letters, digits or ._@+- (no '..')", field="thread",
                           hint="use Brain.thread_between(a, b) to name the thread of two parties")
    return thread


def thread_between(a: str, b: str) -> str:
    """The stable thread id of two parties, whatever the order they are given in."""
    if not a or not b:
        raise InvalidInput("a thread needs two parties", field="thread")
    left, right = sorted((_UNSAFE.sub("-", a).strip("-.") or "x", _UNSAFE.sub("-", b).strip("-.") or "x"))
    return check_thread_id(f"{left}+{right}"[:200].rstrip("-.+") or "thread")


def encode_turn(turn: Turn) -> bytes:
    """One whole line, newline included, ready for a single O_APPEND write."""
    if not isinstance(turn.text, str) or not isinstance(turn.speaker, str) or not turn.speaker.strip():
        raise InvalidInput("a turn needs a speaker and a text", field="text")
    data = (json.dumps(turn.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    if len(data) > MAX_TURN_BYTES:
        raise InvalidInput(f"turn is {len(data)} bytes, above {MAX_TURN_BYTES}", field="text")
    return data


def decode_turn(line: bytes | str) -> Turn | None:
    """The turn of one log line, or None for a torn or foreign line."""
    try:
        data = loads_json(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    speaker, text, thread = data.get("speaker"), data.get("text"), data.get("thread")
    if not isinstance(speaker, str) or not isinstance(text, str) or not isinstance(thread, str):
        return None
    at = data.get("at")
    files = data.get("files") or ()
    return Turn(thread=thread, speaker=speaker, text=text,
                at=float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else 0.0,
                to=data.get("to") if isinstance(data.get("to"), str) else None,
                kind=data.get("kind") if isinstance(data.get("kind"), str) else "message",
                files=tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else (),
                ref=data.get("ref") if isinstance(data.get("ref"), str) else None)
