"""Search hits: memory documents (notes, decisions, cards, handoffs, workflows) that match the task.

Bounded: a few hits, each its path, kind and a one-line snippet, never a whole file;
the agent reads what it needs with `brain_read`. The memory files the hits link to, or
that link to them (``[[wiki links]]``, one hop in the graph), follow as one line each
(at most MAX_LINKED). Only when a task is given and the
index exists (the files slot builds it for a task), so a plain boot stays cheap.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "MAX_HITS", "MAX_LINKED", "SKIP_KINDS"]

MAX_HITS = 6
MAX_LINKED = 4
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
        from ...team.identity import memory_visible  # a token never sees another thread's local handoff

        from ...search.answers import remembered

        found = remembered(index, ("search", query, MAX_HITS * 3),  # hits are the same for every caller:
                           lambda: index.search(query, limit=MAX_HITS * 3, code_snippets=False))  # then filtered
        hits = [h for h in found if h.kind not in SKIP_KINDS
                and (h.kind == "code" or memory_visible(brain, h.path))][:MAX_HITS]
    except Exception as exc:  # derived help: never cost the agent its boot
        from ...workspace import _debug

        _debug("boot search failed: %s", exc)
        return []
    if not hits:
        return []
    lines = [f"- `{h.path}` ({h.kind}): {h.snippet}" for h in hits]
    lines += _linked(brain, index, [h.path for h in hits if h.kind != "code"])
    return [Part("search", "search hits", "Memory matching the task (search)", "\n".join(lines),
                 "brain search TERMS")]


def _linked(brain, index, paths: list[str]) -> list[str]:
    """One hop along [[wiki links]] from the hits, both ways: `- path (links from/to hit): title`."""
    if not paths:
        return []
    from ...team.identity import memory_visible

    out: list[str] = []
    seen = set(paths)
    try:
        for path in paths:
            rows = index.db.execute(
                "SELECT 'linked from', e.src, d.title FROM edges e LEFT JOIN docs d ON d.path = substr(e.src, 8) "
                "WHERE e.dst = ? AND e.kind = 'links' UNION ALL "
                "SELECT 'linked to', e.dst, d.title FROM edges e LEFT JOIN docs d ON d.path = substr(e.dst, 8) "
                "WHERE e.src = ? AND e.kind = 'links' ORDER BY 1, 2", (f"memory:{path}", f"memory:{path}")).fetchall()
            for how, node, title in rows:
                other = node.removeprefix("memory:")
                if other in seen or not memory_visible(brain, other):
                    continue
                seen.add(other)
                out.append(f"- `{other}` ({how} `{path}`): {(title or other)[:120]}")
                if len(out) >= MAX_LINKED:
                    return out
    except Exception as exc:  # derived help: never cost the agent its boot
        from ...workspace import _debug

        _debug("boot link hop failed: %s", exc)
    return out
