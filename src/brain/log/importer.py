"""Importing a client transcript's person/agent turns into the conversation log.

Only new lines are read (from the byte offset of the previous import), so the hooks
can import at every stop in time proportional to what was added. A person's prompt
is one turn; the assistant's text blocks and the files it edited until the next
prompt are folded into one agent turn. Tool results and tool inputs stay out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .handoff import Conversations
from .transcripts import Counters, read_transcript

__all__ = ["Imported", "import_transcript"]

MAX_AGENT_TEXT = 20000


@dataclass(frozen=True)
class Imported:
    thread: str
    turns: int
    offset: int
    skipped: int
    edited: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"thread": self.thread, "turns": self.turns, "offset": self.offset, "skipped": self.skipped,
                "edited": list(self.edited)}


def import_transcript(conv: Conversations, path: Path, *, thread: str, person: str, agent: str, offset: int = 0,
                      fmt: str | None = None, root: Path | None = None, chunk: int = 200,
                      on_progress: Callable[[int], None] | None = None) -> Imported:
    """Import from byte ``offset``; turns are recorded ``chunk`` at a time (one handoff write each), and
    ``on_progress(offset)`` is called after each chunk with the offset to resume from, so an import
    that is interrupted (a hook killed by its timeout) never records a turn twice."""
    counters = Counters()
    base = str(Path(root).resolve()).rstrip("/") + "/" if root is not None else None

    def rel(name: str) -> str:
        return name[len(base):] if base and name.startswith(base) else name

    texts: list[str] = []
    files: list[str] = []
    edited: list[str] = []
    batch: list = []
    turns = 0

    def flush_agent(at) -> None:
        nonlocal texts, files
        if texts or files:
            text = "\n\n".join(texts)[:MAX_AGENT_TEXT] or "(edited files)"
            batch.append(conv.make_turn(thread, agent, text, to=person, kind="answer", files=files, at=at))
        texts, files = [], []

    def commit(resume_at: int) -> None:
        nonlocal batch, turns
        if batch:
            conv.record_many(batch)
            turns += len(batch)
            batch = []
        if on_progress is not None:
            on_progress(resume_at)

    last_at = None
    for event in read_transcript(Path(path), counters, fmt, start=offset):
        last_at = event.at if event.at is not None else last_at
        if event.kind == "prompt":
            flush_agent(last_at)
            if len(batch) >= chunk:
                commit(counters.line_start)  # resume at this prompt's line
            batch.append(conv.make_turn(thread, person, event.text[:MAX_AGENT_TEXT], to=agent, kind="prompt",
                                        at=event.at))
        elif event.kind == "text" and event.text.strip():
            texts.append(event.text.strip())
        elif event.kind == "edit":
            for f in map(rel, event.files):
                if f not in files:
                    files.append(f)
                if f not in edited:
                    edited.append(f)
    flush_agent(last_at)
    commit(counters.position)
    return Imported(thread, turns, counters.position, counters.skipped, tuple(edited))
