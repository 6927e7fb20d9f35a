"""Search MCP tools: brain_search.

Bounded results only — paths, titles and short snippets, never whole files — so the
agent surface stays distilled; one call to the library (``Brain.search``) plus formatting.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .. import outputs
from ..registry import ToolOutput, ToolRegistry

__all__ = ["register"]

Kind = Literal["now", "focus", "note", "workflow", "card", "decision", "handoff", "contract", "profile", "memory",
               "code"]


def register(tools: ToolRegistry) -> None:
    @tools.tool(title="Search the memory and code symbols", read_only=True, heavy=True, output=outputs.Hits)
    def brain_search(
        brain,
        query: Annotated[str, Field(description="Words, identifiers (camelCase, snake_case, dotted.paths are "
                                                "split and kept whole), or an error message.")],
        kind: Annotated[Kind | None, Field(description="Only this kind of document: note, card, decision, "
                                                       "workflow, handoff, code (symbols), ...")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="How many hits at most.")] = 10,
    ) -> ToolOutput:
        """Full-text search over the project's memory (now, focus, notes, workflows, module cards, decisions,
        handoffs) and the code symbols the cards list. Returns paths with short snippets, best first; read a
        hit whole with brain_read (memory) or your file tools (code). Use it before exploring the code file by
        file: a card or a decision often answers the question."""
        from ...search.service import MAX_LIMIT
        from ...team.identity import memory_visible

        # another thread's local handoffs are hidden from a token: ask the index for more until `limit`
        # visible hits are found (or the index has no more), so hidden files never shorten the answer
        want, hits = limit, []
        while True:
            found = brain.search(query, kind=kind, limit=want)
            hits = [h for h in found if h.get("kind") == "code" or memory_visible(brain, h.get("path"))][:limit]
            if len(hits) >= limit or len(found) < want or want >= MAX_LIMIT:
                break
            want = min(want * 4, MAX_LIMIT)
        brain.record_use("search", [h["path"] for h in hits if h.get("kind") != "code"])  # `brain notes --stale`
        if not hits:
            return ToolOutput(f"no match for {query!r}", {"hits": []})
        lines = [f"{i}. [{h['kind']}] {h['path']} — {h.get('title') or ''}\n   {h.get('snippet') or ''}".rstrip()
                 for i, h in enumerate(hits, 1)]
        return ToolOutput("\n".join(lines), {"hits": hits})
