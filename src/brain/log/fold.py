"""The handoff fold: (previous summary state, one turn) -> new state. Pure and deterministic.

A handoff is what a successor needs to resume a thread without reading it: the
questions still open, the answers given, the decisions taken, the files touched and
the next step. It is folded turn by turn (never recomputed from the whole log), and
bounded: items past their per-kind limit, then the oldest items of any kind, are
distilled away into counts until the rendered markdown fits ``max_bytes``. The same
turns in the same order always give the same bytes (no clock, no randomness).

An ask of the coordination store (kind ``ask`` with its ticket as ``ref``) is one open
question carrying the ticket; it closes only through that ticket: its ``reply`` (answered)
or its ``ask_end`` (timed out, target stalled, asker gone), and becomes one line of the
answers saying how it ended. It is never left open because the ask ended without a reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .turns import Turn

__all__ = ["Limits", "Item", "HandoffState", "fold", "render", "bound", "split_sentences", "MIN_MAX_BYTES"]

MIN_MAX_BYTES = 1024
ITEM_CHARS = 240
ANALYZE_CHARS = 20000  # the fold reads at most this much of a turn (its head and last 4,000 characters)

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(r"^\s*(?:[-*]\s*)?decision\s*:|\b(?:we )?decided\b|\bwe(?:'ll| will) (?:use|go with|keep|drop)\b|"
                       r"\bagreed\b|\bgoing with\b|\bsettled on\b|\blet'?s go with\b|\bchose\b", re.IGNORECASE)
_NEXT = re.compile(r"^\s*(?:[-*]\s*)?(?:next(?: step)?\s*[:,-]|todo\s*:|then\b|i(?:'ll| will)\b|we(?:'ll| will) next\b|"
                   r"next,? i\b|remaining\s*:)", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/.@-])((?:[\w.-]+/)*[\w.-]*\w\.(?:py|pyi|ts|tsx|js|jsx|mjs|md|json|ya?ml|toml|rs|go|java|kt|"
                   r"c|h|cc|cpp|hpp|rb|php|sql|sh|css|scss|html|txt|cfg|ini|lock))(?![\w/])")
_WORD = re.compile(r"\w+")
_KINDS = ("answers", "files", "decisions", "open_questions")  # the order ties are distilled away in


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 4096
    open_questions: int = 8
    answers: int = 8
    decisions: int = 10
    files: int = 24
    item_chars: int = ITEM_CHARS

    def __post_init__(self) -> None:
        if self.max_bytes < MIN_MAX_BYTES:
            raise ValueError(f"handoff max_bytes must be at least {MIN_MAX_BYTES}")


STATE_VERSION = 2  # 2: open questions of asks carry their ticket (a state of version 1 is rebuilt from the log)


@dataclass(frozen=True)
class Item:
    """One distilled line, with the turn number it came from (its age), who said it, and for the
    question of an ask its ticket (``ref``: the reply or the end of that ticket closes it)."""

    seq: int
    by: str
    text: str
    ref: str | None = None

    def to_list(self) -> list:
        return [self.seq, self.by, self.text] + ([self.ref] if self.ref else [])


@dataclass(frozen=True)
class HandoffState:
    thread: str = ""
    parties: tuple[str, ...] = ()
    turns: int = 0
    open_questions: tuple[Item, ...] = ()
    answers: tuple[Item, ...] = ()  # text: "Q … → A …"
    decisions: tuple[Item, ...] = ()
    files: tuple[Item, ...] = ()  # text: a path; most recently touched last
    next_step: Item | None = None
    distilled: tuple[tuple[str, int], ...] = ()  # (kind, count) of items distilled away, sorted by kind

    def to_dict(self) -> dict:
        return {"v": STATE_VERSION, "thread": self.thread, "parties": list(self.parties), "turns": self.turns,
                **{kind: [i.to_list() for i in getattr(self, kind)] for kind in _KINDS},
                "next_step": self.next_step.to_list() if self.next_step else None,
                "distilled": dict(self.distilled)}

    @classmethod
    def from_dict(cls, data: dict) -> "HandoffState":
        if data.get("v") != STATE_VERSION:
            raise ValueError(f"handoff state version {data.get('v')!r}: rebuild it from the log")

        def items(raw) -> tuple[Item, ...]:
            return tuple(Item(int(i[0]), str(i[1]), str(i[2]), str(i[3]) if len(i) > 3 and i[3] else None)
                         for i in raw or ())

        nxt = data.get("next_step")
        return cls(thread=str(data.get("thread", "")), parties=tuple(data.get("parties") or ()),
                   turns=int(data.get("turns", 0)),
                   **{kind: items(data.get(kind)) for kind in _KINDS},
                   next_step=Item(int(nxt[0]), str(nxt[1]), str(nxt[2])) if nxt else None,
                   distilled=tuple(sorted((str(k), int(v)) for k, v in (data.get("distilled") or {}).items())))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s and s.strip()]


def _add_distilled(distilled: dict[str, int], kind: str, n: int = 1) -> None:
    if n:
        distilled[kind] = distilled.get(kind, 0) + n


def _gist(text: str) -> str:
    """What a line says, case, punctuation, markdown and spacing aside: "We decided to use SQLite." and
    "- we decided to use **SQLite**!" are one decision."""
    return " ".join(_WORD.findall(text.casefold())) or text


def _distinct_latest(items: list[Item]) -> list[Item]:
    """One item per gist, each at the place (and with the wording and turn) of its latest repetition: an agent
    that restates a decision every turn no longer pushes the other decisions out of the per-kind limit."""
    latest: dict[str, Item] = {}
    for item in items:
        key = _gist(item.text)
        latest.pop(key, None)
        latest[key] = item
    return list(latest.values())


def fold(state: HandoffState, turn: Turn, limits: Limits = Limits()) -> HandoffState:
    """Fold one turn into the summary. Pure: no I/O, no clock."""
    seq = state.turns + 1
    who = turn.speaker
    clip = limits.item_chars
    text = turn.text if len(turn.text) <= ANALYZE_CHARS else (
        turn.text[: ANALYZE_CHARS - 4000] + "\n" + turn.text[-4000:])  # a long turn: its head and its end
    sentences = split_sentences(text)
    questions = [s for s in sentences if s.endswith("?")][:3]
    statements = [s for s in sentences if not s.endswith("?")]

    parties = list(state.parties)
    for party in (turn.speaker, turn.to):
        if party and party not in parties and len(parties) < 8:
            parties.append(party)

    open_q = list(state.open_questions)
    answers = list(state.answers)
    ticketed = turn.ref if turn.kind in ("ask", "reply", "ask_end") and turn.ref else None
    asked_item = next((q for q in open_q if ticketed and q.ref == ticketed), None)
    if turn.kind == "ask_end":  # the ask ended without a reply: its question closes, saying how
        if asked_item is not None:
            open_q.remove(asked_item)
            answers.append(Item(seq, who, _clip(f"Q ({asked_item.by}): {asked_item.text} → {text}", clip)))
        return bound(replace(state, thread=state.thread or turn.thread, parties=tuple(parties), turns=seq,
                             open_questions=tuple(open_q), answers=tuple(answers)), limits)
    if turn.kind == "reply" and asked_item is not None:  # the answer to that ticket, whatever its shape
        open_q.remove(asked_item)
        reply = " ".join(statements[:2]) or " ".join(text.split())
        answers.append(Item(seq, who, _clip(f"Q ({asked_item.by}): {asked_item.text} → A: {reply}", clip)))
    else:
        theirs = [q for q in open_q if q.by != who and q.ref is None]  # an ask's question waits for its ticket
        if theirs and statements and (turn.kind != "ask"):
            asked = " / ".join(q.text for q in theirs)
            reply = " ".join(statements[:2])
            answers.append(Item(seq, who, _clip(f"Q ({theirs[0].by}): {asked} → A: {reply}", clip)))
            open_q = [q for q in open_q if q.by == who or q.ref is not None]
    if turn.kind == "ask" and not questions and sentences:
        questions = [sentences[0]]
    if ticketed and turn.kind == "ask":
        open_q.append(Item(seq, who, _clip(text, clip), ticketed))  # one question per ask, however many "?"
    else:
        open_q.extend(Item(seq, who, _clip(q, clip)) for q in questions)

    decisions = _distinct_latest([*state.decisions,
                                  *(Item(seq, who, _clip(s, clip)) for s in statements if _DECISION.search(s))])

    paths = list(dict.fromkeys([*turn.files, *(m.group(1) for m in _PATH.finditer(text))]))
    files = [f for f in state.files if f.text not in paths]
    files.extend(Item(seq, who, _clip(p, clip)) for p in paths)

    next_step = state.next_step
    nexts = [s for s in statements if _NEXT.search(s)]
    if nexts:
        next_step = Item(seq, who, _clip(nexts[-1], clip))
    elif turn.kind in ("prompt", "ask") and sentences and not questions:
        next_step = Item(seq, who, _clip("requested: " + sentences[0], clip))

    new = HandoffState(thread=state.thread or turn.thread, parties=tuple(parties), turns=seq,
                       open_questions=tuple(open_q), answers=tuple(answers), decisions=tuple(decisions),
                       files=tuple(files), next_step=next_step, distilled=state.distilled)
    return bound(new, limits)


def bound(state: HandoffState, limits: Limits) -> HandoffState:
    """Distil away oldest detail until every per-kind limit holds and the markdown fits."""
    distilled = dict(state.distilled)
    lists = {kind: list(getattr(state, kind)) for kind in _KINDS}
    for kind in _KINDS:
        extra = len(lists[kind]) - getattr(limits, kind)
        if extra > 0:
            _add_distilled(distilled, kind, extra)
            lists[kind] = lists[kind][extra:]

    def current() -> HandoffState:
        return replace(state, distilled=tuple(sorted(distilled.items())), **{k: tuple(v) for k, v in lists.items()})

    result = current()
    size = len(render(result).encode("utf-8"))
    while size > limits.max_bytes:
        # drop oldest items until their lines cover the excess (plus room for a longer distilled line),
        # then render once to check: a few renders per fold instead of one per dropped item
        excess, freed = size - limits.max_bytes + 48, 0
        while freed < excess:
            candidates = [(lists[k][0].seq, rank, k) for rank, k in enumerate(_KINDS) if lists[k]]
            if not candidates:
                break
            _, _, kind = min(candidates)
            item = lists[kind].pop(0)
            _add_distilled(distilled, kind)
            freed += len(item.text.encode("utf-8")) + len(item.by.encode("utf-8")) + 6
        if freed:
            result = current()
            size = len(render(result).encode("utf-8"))
            continue
        if result.next_step and len(result.next_step.text) > 20:  # last resort: shorten the one line left
            step = result.next_step
            result = replace(result, next_step=Item(step.seq, step.by, _clip(step.text, len(step.text) // 2)))
            state = replace(state, next_step=result.next_step)
            size = len(render(result).encode("utf-8"))
            continue
        break
    return result


_TITLES = {"open_questions": "Open questions", "answers": "Answers given", "decisions": "Decisions",
           "files": "Files touched"}
_DISTILLED_NAMES = {"open_questions": "questions", "answers": "answers", "decisions": "decisions", "files": "files"}


def render(state: HandoffState) -> str:
    """The handoff markdown (deterministic: no dates, stable order)."""
    shown = ", ".join(_clip(p, 30) for p in state.parties[:2]) or "—"
    more = f" (+{len(state.parties) - 2})" if len(state.parties) > 2 else ""
    out = [f"# Handoff: {_clip(state.thread, 60)}", "", f"Between {shown}{more}"]
    for kind in ("open_questions", "answers", "decisions"):
        items = getattr(state, kind)
        if items:
            out += ["", f"## {_TITLES[kind]}"]
            out += [f"- ({_clip(i.by, 24)}) {i.text}" for i in items]
    if state.files:
        out += ["", "## Files touched", ", ".join(f"`{i.text}`" for i in state.files)]
    if state.next_step:
        out += ["", "## Next step", f"({_clip(state.next_step.by, 24)}) {state.next_step.text}"]
    if state.distilled:
        older = ", ".join(f"{n} {_DISTILLED_NAMES.get(k, k)}" for k, n in state.distilled)
        out += ["", f"_Older detail distilled away: {older}._"]
    return "\n".join(out) + "\n"
