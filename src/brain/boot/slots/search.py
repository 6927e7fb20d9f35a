"""Search hits: memory documents (notes, decisions, cards, handoffs, workflows) that match the task.

Bounded: a few hits, each its path, kind and a one-line snippet, never a whole file;
the agent reads what it needs with `brain_read`. Only when a task is given and the
index exists (the files slot builds it for a task), so a plain boot stays cheap.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "MAX_HITS", "SKIP_KINDS"]

MAX_HITS = 6
SKIP_KINDS = {"code", "now", "focus", "profile"}  # code has its own slot; now, focus and profiles are in the boot already
QUERY_CHARS = 400


def collect(brain, request) -> list[Part]:
    if not request.task or not request.task.strip() or not brain.settings.get("search.enabled"):
        return []
    index = brain.index
    if not index.exists:
        return []
    text = request.task.strip()
    title = text.split("\n", 1)[0][:QUERY_CHARS]
    query = title if len(title) >= 40 else text[:QUERY_CHARS]
    try:
        hits = [h for h in index.search(query, limit=MAX_HITS * 3) if h.kind not in SKIP_KINDS][:MAX_HITS]
    except Exception as exc:  # derived help: never cost the agent its boot
        from ...workspace import _debug

        _debug("boot search failed: %s", exc)
        return []
    if not hits:
        return []
    lines = [f"- `{h.path}` ({h.kind}): {h.snippet}" for h in hits]
    return [Part("search", "search hits", "Memory matching the task (search)", "\n".join(lines),
                 "brain search TERMS")]
