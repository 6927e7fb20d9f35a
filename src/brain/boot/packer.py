"""Budget packing: pure, deterministic, and the cut always declared.

The text is the header, then each included part as a `## title` section, then a
"Left out" manifest naming the parts left out and why (over the budget, the rest of a
cut part, a cold profile, a profile that does not parse, a whole card whose cut is
shown), then the footer. The manifest is paid from the same budget: it names every
left-out part with its size, its reason and how to fetch it when that fits, else sums them up per slot, else in one line
(`brain boot --json` always lists each). The final text is measured whole; parts
are dropped from the end, and the required part (now.md) is cut at a line
boundary only as a last resort, with the cut declared. A deferred part is never
included, only named (a slot showed a cut of it).
"""

from __future__ import annotations

from ..tokens import estimate_tokens, joins_cleanly, token_pieces, tokens_of_count
from .parts import LEFT_OUT_REASONS, BootResult, Omitted, Part

__all__ = ["pack", "render_section", "render_manifest", "MANIFEST_LISTED"]

MANIFEST_LISTED = 25  # the detailed manifest names at most this many parts, then sums up per slot
TRUNCATION_NOTE = "\n\n[cut here to fit the budget: read the rest with `{fetch}`]\n"
_DETAILED, _PER_SLOT, _ONE_LINE = 0, 1, 2


def render_section(part: Part) -> str:
    body = part.text.rstrip("\n")
    return f"## {part.title}\n\n{body}\n\n"


def _why(item: Omitted) -> str:
    label = LEFT_OUT_REASONS.get(item.reason, item.reason)
    return f"{label} ({item.detail})" if item.detail else label


def _per_slot_lines(items: list[Omitted]) -> list[str]:
    by_slot: dict[tuple[str, str], list[Omitted]] = {}
    for item in items:
        by_slot.setdefault((item.slot or "other", item.reason), []).append(item)
    return [f"- {len(group)} part(s) from {slot}, {LEFT_OUT_REASONS.get(reason, reason)} "
            f"({sum(i.tokens for i in group)} tokens), e.g. `{group[0].fetch}`"
            for (slot, reason), group in by_slot.items()]


def render_manifest(omitted: list[Omitted], level: int = _DETAILED) -> str:
    if not omitted:
        return ""
    lines = ["## Left out", ""]
    if level == _DETAILED:
        lines += [f"- {o.source} ({o.tokens} tokens), {_why(o)}: `{o.fetch}`" for o in omitted[:MANIFEST_LISTED]]
        lines += _per_slot_lines(omitted[MANIFEST_LISTED:])
    elif level == _PER_SLOT:
        lines += _per_slot_lines(omitted)
    else:
        total = sum(o.tokens for o in omitted)
        counts: dict[str, int] = {}
        for o in omitted:
            counts[o.reason] = counts.get(o.reason, 0) + 1
        why = "; ".join(f"{n} {LEFT_OUT_REASONS.get(r, r)}" for r, n in counts.items())
        lines.append(f"- {len(omitted)} part(s), {total} tokens ({why}): `brain boot --json` lists each with its "
                     "reason and how to fetch it")
    return "\n".join(lines) + "\n\n"


def _truncate(part: Part, tokens: int) -> Part:
    """Keep the leading whole lines of ``part`` so that its section costs at most ``tokens``."""
    note = TRUNCATION_NOTE.format(fetch=part.fetch)
    room = tokens - estimate_tokens(render_section(Part(part.slot, part.source, part.title, "", part.fetch)) + note)
    kept: list[str] = []
    used = 0
    for line in part.text.splitlines(keepends=True):
        cost = estimate_tokens(line) + 1
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    return Part(part.slot, part.source, part.title, "".join(kept).rstrip("\n") + note, part.fetch, True, part.files)


def pack(header: str, parts: list[Part], budget: int, footer: str = "") -> BootResult:
    pieces: dict[str, int] = {}  # text -> its token pieces: each section is counted once, and a text made of
    # sections is counted from theirs (``measure``); the same figures as ``estimate_tokens`` of each text

    def counted(text: str) -> int:
        n = pieces.get(text)
        if n is None:
            n = pieces[text] = token_pieces(text)
        return n

    def measure(chunks: list[str]) -> tuple[str, int]:
        text = "".join(chunks)
        chunks = [c for c in chunks if c]
        if all(joins_cleanly(a, b) for a, b in zip(chunks, chunks[1:])):
            return text, tokens_of_count(sum(counted(c) for c in chunks), text)
        return text, estimate_tokens(text)

    cost = lambda p: tokens_of_count(counted(section := render_section(p)), section)  # noqa: E731
    fixed = estimate_tokens(header) + estimate_tokens(footer)
    reserve = estimate_tokens(render_manifest([Omitted("x", 10 ** 6, "y", reason=r) for r in LEFT_OUT_REASONS],
                                              _ONE_LINE)) + 4

    included: list[Part] = []
    omitted: list[Omitted] = []
    cut: dict[str, int] = {}  # source of a truncated required part -> its whole size
    originals = {p.source: p for p in parts if p.required}
    used = fixed
    for part in parts:
        tokens = cost(part) if part.text else 0
        if part.listed_only:
            omitted.append(Omitted(part.source, tokens, part.fetch, part.slot, part.why, part.detail))
            continue
        if part.required:
            room = budget - used - reserve
            if tokens > room:
                cut[part.source] = tokens
                part = _truncate(part, room)
                tokens = cost(part)
            included.append(part)
            used += tokens
        elif used + tokens + reserve <= budget:
            included.append(part)
            used += tokens
        else:
            omitted.append(Omitted(part.source, tokens, part.fetch, part.slot))

    def declared() -> list[Omitted]:
        rests = [Omitted(f"{p.source} (rest)", max(cut[p.source] - cost(p), 0), p.fetch, p.slot, "cut")
                 for p in included if p.source in cut]
        return rests + omitted

    def assemble() -> tuple[str, int] | None:
        body = [header] + [render_section(p) for p in included]
        for level in (_DETAILED, _PER_SLOT, _ONE_LINE):
            text, tokens = measure(body + [render_manifest(declared(), level), footer])
            if tokens <= budget:
                return text, tokens
        return None

    packed = assemble()
    while packed is None:
        victims = [i for i, p in enumerate(included) if not p.required]
        if victims:
            dropped = included.pop(victims[-1])
            omitted.append(Omitted(dropped.source, cost(dropped), dropped.fetch, dropped.slot))
        else:  # only required parts left: cut the last one shorter
            index = len(included) - 1
            current = included[index]
            cut.setdefault(current.source, cost(current))
            included[index] = _truncate(originals[current.source], max(cost(current) - 20, 0))
        packed = assemble()

    text, tokens = packed
    files: list[str] = []
    for part in included:
        for f in part.files:
            if f not in files:
                files.append(f)
    sections = [{"slot": p.slot, "source": p.source, "tokens": cost(p)} for p in included]
    return BootResult(text=text, tokens=tokens, budget=budget, sections=sections, files=files,
                      omitted=declared())
