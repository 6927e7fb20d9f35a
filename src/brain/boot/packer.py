"""Budget packing: pure, deterministic, and the cut always declared.

The text is the header, then each included part as a `## title` section, then a
"Left out" manifest naming every part that did not fit. The manifest is paid from
the same budget, so the final text is re-measured whole and parts are dropped from
the end until it fits.
"""

from __future__ import annotations

from ..tokens import estimate_tokens
from .parts import BootResult, Omitted, Part

__all__ = ["pack", "render_section", "render_manifest", "MANIFEST_LISTED"]

MANIFEST_LISTED = 25  # beyond this many, the text manifest sums up per slot; --json lists all
TRUNCATION_NOTE = "\n\n[cut here to fit the budget: read the rest with `{fetch}`]\n"


def render_section(part: Part) -> str:
    body = part.text.rstrip("\n")
    return f"## {part.title}\n\n{body}\n\n"


def render_manifest(omitted: list[Omitted]) -> str:
    if not omitted:
        return ""
    lines = ["## Left out (budget)", ""]
    for item in omitted[:MANIFEST_LISTED]:
        lines.append(f"- {item.source} ({item.tokens} tokens): `{item.fetch}`")
    rest = omitted[MANIFEST_LISTED:]
    if rest:
        by_slot: dict[str, list[Omitted]] = {}
        for item in rest:
            by_slot.setdefault(item.slot or "other", []).append(item)
        for slot, items in by_slot.items():
            total = sum(i.tokens for i in items)
            lines.append(f"- {len(items)} more from {slot} ({total} tokens): `brain boot --json` lists each")
    return "\n".join(lines) + "\n"


def _truncate_to(part: Part, tokens: int) -> Part:
    """Keep whole leading lines of a required part so that it fits in ``tokens``."""
    note = TRUNCATION_NOTE.format(fetch=part.fetch)
    room = tokens - estimate_tokens(render_section(Part(part.slot, part.source, part.title, "", part.fetch)) + note)
    kept: list[str] = []
    used = 0
    for line in part.text.splitlines(keepends=True):
        cost = estimate_tokens(line)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    return Part(part.slot, part.source, part.title, "".join(kept).rstrip("\n") + note, part.fetch, True, part.files)


def pack(header: str, parts: list[Part], budget: int, footer: str = "") -> BootResult:
    included: list[Part] = []
    omitted: list[Omitted] = []
    used = estimate_tokens(header) + estimate_tokens(footer)
    cost = {id(p): estimate_tokens(render_section(p)) for p in parts}

    def manifest_cost(extra: int = 0) -> int:
        sample = omitted + [Omitted("x" * 40, 99999, "y" * 60)] * extra
        return estimate_tokens(render_manifest(sample))

    for part in parts:
        tokens = cost[id(part)]
        if part.required:
            room = budget - used - manifest_cost(1)
            if tokens > room:
                whole = tokens
                part = _truncate_to(part, room)
                tokens = estimate_tokens(render_section(part))
                omitted.append(Omitted(f"{part.source} (rest)", max(whole - tokens, 0), part.fetch, part.slot))
            included.append(part)
            used += tokens
            continue
        if used + tokens + manifest_cost(1) <= budget:
            included.append(part)
            used += tokens
        else:
            omitted.append(Omitted(part.source, tokens, part.fetch, part.slot))

    def assemble() -> str:
        manifest = render_manifest(omitted)
        return header + "".join(render_section(p) for p in included) + manifest + ("\n" if manifest else "") + footer

    text = assemble()
    while estimate_tokens(text) > budget:
        victims = [i for i, p in enumerate(included) if not p.required]
        if not victims:
            break
        dropped = included.pop(victims[-1])
        omitted.append(Omitted(dropped.source, estimate_tokens(render_section(dropped)), dropped.fetch, dropped.slot))
        text = assemble()

    files: list[str] = []
    for part in included:
        for f in part.files:
            if f not in files:
                files.append(f)
    sections = [{"slot": p.slot, "source": p.source, "tokens": estimate_tokens(render_section(p))} for p in included]
    return BootResult(text=text, tokens=estimate_tokens(text), budget=budget, sections=sections, files=files, omitted=omitted)
