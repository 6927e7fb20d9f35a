"""Recording a turn: append it to the thread's log, then fold it into the thread's handoff.

``Conversations`` is the one write path for conversations. Under the thread's lock it
loads the summary state, appends the turn (one O_APPEND line), folds the turn in and
writes the handoff markdown `handoffs/local/<thread>.md` through the atomic ``MemoryStore``
(bounded, distilled, readable by agents). A thread's handoff is the working memory of
its sessions, on this machine: `handoffs/local/` ignores itself in git (its own
`.gitignore`), so per-session handoffs never pile up in the versioned `handoffs/`. Team
memory is what someone promotes (``promote``): a copy at `handoffs/<thread>.md`, versioned. The state itself is kept beside the
log in `runtime/conversations/<thread>/handoff.json`; it is derived (the fold is
deterministic), so when it is missing it is rebuilt by replaying the log.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass

from ..errors import Conflict, InvalidInput, NotFound
from ..memory.files import Document, MemoryStore
from .fold import HandoffState, Limits, render
from .store import ConversationLog, Page, ThreadInfo
from .summarizer import AsyncSummarizer, HeuristicSummarizer, Summarizer
from .turns import Turn, check_thread_id, thread_between

__all__ = ["Conversations", "Recorded", "handoff_path", "promoted_path", "mark_promoted", "LOCAL_FOLDER",
           "PROMOTED_MARK"]

STATE = "handoff.json"
LOCAL_FOLDER = "handoffs/local"
_SELF_IGNORING = b"# brain: per-session handoffs of this machine, not versioned (`brain handoff T --promote`)\n*\n"


def handoff_path(thread: str) -> str:
    """Where a thread's handoff is kept as it is folded: machine-local, not versioned."""
    return f"{LOCAL_FOLDER}/{check_thread_id(thread)}.md"


def promoted_path(thread: str) -> str:
    """Where a promoted handoff goes: the versioned `handoffs/`, shared with the team."""
    return f"handoffs/{check_thread_id(thread)}.md"


# The last line of a promoted copy. Before `handoffs/local/` existed the fold wrote every thread's handoff
# into the versioned `handoffs/` with the same text; this line is what tells team memory from those.
PROMOTED_MARK = "_Promoted to team memory (`brain handoff THREAD --promote`)._"
_FOLD_HEADING = "# Handoff: "


def mark_promoted(text: str) -> str:
    """The text of a promoted copy: the handoff, then ``PROMOTED_MARK`` (once)."""
    body = text.rstrip("\n")
    return body + "\n" if body.endswith(PROMOTED_MARK) else f"{body}\n\n{PROMOTED_MARK}\n"


@dataclass(frozen=True)
class Recorded:
    thread: str
    bytes: int
    turns: int  # turns folded into the handoff so far
    handoff: str  # memory path of the handoff

    def to_dict(self) -> dict:
        return {"thread": self.thread, "bytes": self.bytes, "turns": self.turns, "handoff": self.handoff}


class Conversations:
    """The conversation log and the handoff summaries of one brain."""

    def __init__(self, log: ConversationLog, memory: MemoryStore, summarizer: Summarizer | None = None,
                 limits: Limits = Limits()) -> None:
        self.log = log
        self.memory = memory
        self._heuristic = HeuristicSummarizer(limits)
        self.summarizer: Summarizer = summarizer or self._heuristic

    # -- recording -------------------------------------------------------------
    def make_turn(self, thread: str | None, speaker: str, text: str, *, to: str | None = None, kind: str = "message",
                  files=(), ref: str | None = None, at: float | None = None) -> Turn:
        if not isinstance(speaker, str) or not speaker.strip():
            raise InvalidInput("a turn needs a speaker", field="speaker")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("a turn needs a non-empty text", field="text")
        if thread is None:
            if not to:
                raise InvalidInput("give a thread, or the other party (to=) to name the thread", field="thread")
            thread = thread_between(speaker, to)
        check_thread_id(thread)
        return Turn(thread=thread, speaker=speaker, text=text, at=time.time() if at is None else at, to=to,
                    kind=kind or "message", files=tuple(files or ()), ref=ref)

    def record(self, turn: Turn) -> Recorded:
        turn = self.log.redacted(turn)  # secrets reach neither the log, the fold state nor the handoff
        with self.log.lock(turn.thread):
            state = self.state(turn.thread)
            written = self.log.append(turn, redact=False)  # redacted above
            state = self.summarizer.fold(state, turn)
            self._save(turn.thread, state)
        return Recorded(turn.thread, written, state.turns, handoff_path(turn.thread))

    def record_many(self, turns: list[Turn]) -> Recorded | None:
        """Record turns of one thread in one go: each appended and folded, the handoff written once."""
        if not turns:
            return None
        thread = turns[0].thread
        if any(t.thread != thread for t in turns):
            raise InvalidInput("record_many takes the turns of one thread", field="thread")
        written = 0
        turns = [self.log.redacted(turn) for turn in turns]  # a refused name is refused before any folder is made
        with self.log.lock(thread):
            state = self.state(thread)
            for turn in turns:
                written += self.log.append(turn, redact=False)
                state = self.summarizer.fold(state, turn)
            self._save(thread, state)
        return Recorded(thread, written, state.turns, handoff_path(thread))

    async def arecord(self, turn: Turn, summarizer: AsyncSummarizer | None = None) -> Recorded:
        """Record with an asynchronous (e.g. LLM) summarizer; the append never waits on it.

        If another turn was folded while the model was thinking, the heuristic fold is used
        instead, so no turn is ever lost from the handoff.
        """
        turn = self.log.redacted(turn)
        if summarizer is None and isinstance(self.summarizer, AsyncSummarizer):
            summarizer = self.summarizer
        with self.log.lock(turn.thread):
            before = self.state(turn.thread)
            self._write_state(turn.thread, before)  # so the state is not replayed with our turn in it
            written = self.log.append(turn, redact=False)  # redacted above
        folded = await summarizer.afold(before, turn) if summarizer is not None else None
        with self.log.lock(turn.thread):
            current = self.state(turn.thread)
            if folded is None or current.turns != before.turns:
                folded = self._heuristic.fold(current, turn)  # folded out of order, but never lost
            self._save(turn.thread, folded)
        return Recorded(turn.thread, written, folded.turns, handoff_path(turn.thread))

    # -- state -----------------------------------------------------------------
    def state(self, thread: str) -> HandoffState:
        path = self.log.folder(thread) / STATE
        try:
            wrapper = json.loads(path.read_bytes())
            body = wrapper["state"]
            if hashlib.sha256(body.encode("utf-8")).hexdigest() == wrapper["sha256"]:
                return HandoffState.from_dict(json.loads(body))
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            pass  # a damaged cache: rebuild it
        state = HandoffState(thread=thread)
        for turn in self.log.iter_turns(thread):
            state = self.summarizer.fold(state, turn)
        return state

    def _write_state(self, thread: str, state: HandoffState) -> None:
        """Overwrite the state cache in place, with a checksum.

        Written under the thread's lock, without rename or truncation to zero (on ext4 both force
        a flush that costs milliseconds): a crash mid-write leaves a file whose checksum fails,
        and the state is then rebuilt from the log.
        """
        from ..memory.private import ensure_private_dir, open_private

        folder = self.log.folder(thread)
        ensure_private_dir(folder)
        body = json.dumps(state.to_dict(), ensure_ascii=False, sort_keys=True)
        data = json.dumps({"sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(), "state": body}).encode("utf-8")
        fd = open_private(folder / STATE, os.O_RDWR)
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    def _save(self, thread: str, state: HandoffState) -> None:
        self._write_state(thread, state)
        text = render(state)
        rel = handoff_path(thread)
        current = self.memory.read_or_none(rel)
        if current is None:
            self._ignore_local()
        if current is None or current.text != text:
            # derived from the log (`brain handoff --rebuild` refolds it): atomic, without two fsyncs a turn
            self.memory.write(rel, text, durable=False)

    def prune_local(self, keep: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """Delete the local handoffs not updated within the log's retention (``log.retention_days``; 0 keeps
        them): the sessions they summed up are long over. A thread one of whose parties is in ``keep`` (the
        live sessions) stays however old. Promoted copies in `handoffs/` stay. Returns the threads whose
        handoff went; `brain handoff T --rebuild` refolds one while its log remains."""
        if not self.log.retention_seconds:
            return []
        cutoff = self.log.clock() - self.log.retention_seconds
        gone = []
        for rel in self.memory.list(LOCAL_FOLDER):
            thread = rel[len(LOCAL_FOLDER) + 1:-3]
            try:
                if self.memory.resolve(rel).stat().st_mtime >= cutoff:
                    continue
                if keep and (set(thread.split("+")) | set(self.log.parties(thread))) & keep:
                    continue
                self.memory.delete(rel)
            except (OSError, NotFound):
                continue  # removed meanwhile
            gone.append(thread)
        return gone

    def legacy_handoffs(self) -> list[str]:
        """Threads whose handoff the fold wrote into the versioned `handoffs/` before `handoffs/local/` existed:
        a file there with the fold's heading and without ``PROMOTED_MARK`` (files people wrote stay theirs)."""
        found = []
        for rel in self.memory.list("handoffs"):
            thread = rel[len("handoffs/"):-3]
            try:
                check_thread_id(thread)
                with open(self.memory.resolve(rel), "rb") as handle:
                    head = handle.read(len(_FOLD_HEADING.encode()))
                    handle.seek(0, os.SEEK_END)
                    handle.seek(max(handle.tell() - 200, 0))
                    tail = handle.read().decode("utf-8", errors="replace")
            except (OSError, InvalidInput, NotFound):
                continue
            if head.decode("utf-8", errors="replace") == _FOLD_HEADING and PROMOTED_MARK not in tail:
                found.append(thread)
        return sorted(found)

    def migrate_legacy(self) -> tuple[list[str], list[str]]:
        """Move the ``legacy_handoffs`` to `handoffs/local/` (a local one already there is newer: kept) and
        delete the versioned copies. Returns (threads migrated, memory paths deleted) for the caller to commit."""
        moved, deleted = [], []
        for thread in self.legacy_handoffs():
            rel = promoted_path(thread)
            with self.log.lock(thread):
                doc = self.memory.read_or_none(rel)
                if doc is None:
                    continue
                if self.memory.read_or_none(handoff_path(thread)) is None:
                    self._ignore_local()
                    self.memory.write(handoff_path(thread), doc.text, expected_hash="")
                try:
                    self.memory.delete(rel, expected_hash=doc.hash)
                except (NotFound, Conflict):  # gone or changed meanwhile: left for the next run
                    continue
            moved.append(thread)
            deleted.append(rel)
        return moved, deleted

    def _ignore_local(self) -> None:
        """`handoffs/local/.gitignore` = `*`: the folder ignores itself, in any repository, old or new."""
        marker = self.memory.folder(LOCAL_FOLDER) / ".gitignore"
        if not marker.exists():
            from ..memory.files import atomic_write_bytes

            marker.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(marker, _SELF_IGNORING)

    def rebuild(self, thread: str) -> HandoffState:
        """Recompute a handoff from what is left of the log (after a summarizer change, say)."""
        with self.log.lock(thread):
            (self.log.folder(thread) / STATE).unlink(missing_ok=True)
            state = self.state(thread)
            self._save(thread, state)
        return state

    # -- reading (human surface, except the handoff) ---------------------------
    def page(self, thread: str, page: int | None = None, size: int = 50) -> Page:
        return self.log.page(thread, page, size)

    def threads(self) -> list[ThreadInfo]:
        return self.log.threads()

    def handoff(self, thread: str) -> Document | None:
        """The thread's handoff: the local one being folded, else a promoted copy."""
        return self.memory.read_or_none(handoff_path(thread)) or self.memory.read_or_none(promoted_path(thread))

    def handoff_names(self) -> dict[str, list[str]]:
        """Thread ids with a handoff: {"local": [...], "promoted": [...]}."""
        return {"local": [p[len(LOCAL_FOLDER) + 1:-3] for p in self.memory.list(LOCAL_FOLDER)],
                "promoted": [p[len("handoffs/"):-3] for p in self.memory.list("handoffs")]}

    def handoffs_for(self, party: str) -> list[Document]:
        """The handoffs of every thread ``party`` takes part in, most recently updated first."""
        docs = []
        for thread in self.log.threads_of(party):
            doc = self.handoff(thread)
            if doc is not None:
                try:
                    mtime = self.memory.resolve(doc.path).stat().st_mtime
                except OSError:
                    mtime = 0.0
                docs.append((-mtime, doc.path, doc))
        return [doc for _, _, doc in sorted(docs, key=lambda d: (d[0], d[1]))]
