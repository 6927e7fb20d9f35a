"""Summarizers: how a turn is folded into a thread's handoff.

The default, ``HeuristicSummarizer``, is the pure deterministic fold of ``fold.py``
and needs nothing. An LLM summarizer can plug in behind ``AsyncSummarizer``: it is
asynchronous, optional and never required — ``LLMSummarizer`` takes any async
``complete(prompt) -> str`` callable (no SDK is imported here), and falls back to
the heuristic fold whenever the model fails or answers something unusable. Whatever
it returns is bounded by the same ``bound`` as the heuristic fold, so the size cap
holds for every summarizer.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Awaitable, Callable, Protocol, runtime_checkable

from .fold import HandoffState, Item, Limits, bound, fold, render
from .turns import Turn

__all__ = ["Summarizer", "AsyncSummarizer", "HeuristicSummarizer", "LLMSummarizer", "build_prompt"]


@runtime_checkable
class Summarizer(Protocol):
    name: str

    def fold(self, state: HandoffState, turn: Turn) -> HandoffState: ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    name: str

    async def afold(self, state: HandoffState, turn: Turn) -> HandoffState: ...


class HeuristicSummarizer:
    """The default: the pure fold (questions, answers, decisions, files, next step)."""

    name = "heuristic"

    def __init__(self, limits: Limits = Limits()) -> None:
        self.limits = limits

    def fold(self, state: HandoffState, turn: Turn) -> HandoffState:
        return fold(state, turn, self.limits)

    async def afold(self, state: HandoffState, turn: Turn) -> HandoffState:
        return self.fold(state, turn)


_SCHEMA_HINT = ('{"open_questions": [[speaker, text]], "answers": [[speaker, text]], "decisions": [[speaker, text]], '
                '"files": [path], "next_step": [speaker, text] | null}')


def build_prompt(state: HandoffState, turn: Turn) -> str:
    """The request sent to a model: the previous summary plus the one new turn, nothing else."""
    return (
        "You maintain a bounded handoff summary of a conversation between two parties, so a successor can "
        "resume without reading it. Fold the new turn into the summary: close questions it answers, keep "
        "decisions, files touched and the single next step. Answer with JSON only, shaped as " + _SCHEMA_HINT
        + ".\n\n## Current summary\n" + render(state) + "\n## New turn\n"
        + json.dumps({"speaker": turn.speaker, "kind": turn.kind, "text": turn.text, "files": list(turn.files)},
                     ensure_ascii=False)
    )


class LLMSummarizer:
    """Folds with a language model through ``complete``; the heuristic fold is the fallback."""

    name = "llm"

    def __init__(self, complete: Callable[[str], Awaitable[str]], limits: Limits = Limits()) -> None:
        self.complete = complete
        self.limits = limits
        self.fallback = HeuristicSummarizer(limits)
        self.failures = 0

    def fold(self, state: HandoffState, turn: Turn) -> HandoffState:  # the synchronous path never waits on a model
        return self.fallback.fold(state, turn)

    async def afold(self, state: HandoffState, turn: Turn) -> HandoffState:
        if turn.ref and turn.kind in ("ask", "reply", "ask_end"):  # an ask's ticket opens and closes its question:
            return self.fallback.fold(state, turn)                 # exact bookkeeping, not a model's reading
        try:
            answer = await self.complete(build_prompt(state, turn))
            return self._parse(state, turn, answer)
        except Exception:  # noqa: BLE001 - a model failure must never cost the thread its handoff
            self.failures += 1
            return self.fallback.fold(state, turn)

    def _parse(self, state: HandoffState, turn: Turn, answer: str) -> HandoffState:
        data = json.loads(answer)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        seq = state.turns + 1
        clip = self.limits.item_chars

        def items(key: str) -> tuple[Item, ...]:
            raw = data.get(key) or []
            out = []
            for entry in raw:
                by, text = (entry[0], entry[1]) if isinstance(entry, list) and len(entry) == 2 else (turn.speaker, entry)
                if not isinstance(text, str) or not isinstance(by, str):
                    raise ValueError(f"bad {key} entry")
                out.append(Item(seq, by, text[:clip]))
            return tuple(out)

        files = data.get("files") or []
        if not all(isinstance(f, str) for f in files):
            raise ValueError("bad files")
        nxt = data.get("next_step")
        next_step = None
        if isinstance(nxt, list) and len(nxt) == 2 and all(isinstance(x, str) for x in nxt):
            next_step = Item(seq, nxt[0], nxt[1][:clip])
        parties = tuple(dict.fromkeys([*state.parties, *(p for p in (turn.speaker, turn.to) if p)]))[:8]
        tickets = {(i.by, i.text): i.ref for i in state.open_questions if i.ref}  # kept through the model's rewrite
        open_questions = tuple(replace(i, ref=tickets.get((i.by, i.text))) for i in items("open_questions"))
        new = HandoffState(thread=state.thread or turn.thread, parties=parties, turns=seq,
                           open_questions=open_questions, answers=items("answers"),
                           decisions=items("decisions"), files=tuple(Item(seq, turn.speaker, f[:clip]) for f in files),
                           next_step=next_step, distilled=state.distilled)
        return bound(new, self.limits)
