"""Module-card MCP tools: brain_report_done.

One call to the library (``Brain.report_done``) plus formatting, like every tool group.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .. import outputs
from ..registry import ToolOutput, ToolRegistry

__all__ = ["register"]


def register(tools: ToolRegistry) -> None:
    @tools.tool(title="Report a task done", destructive=True, idempotent=True, output=outputs.CardReport)
    def brain_report_done(
        brain,
        module: Annotated[str, Field(description="The module your task changed, as its folder path (the name the "
                                                 "boot showed in 'Module card: `...`'), e.g. src/shop/orders.")],
        how_to_use: Annotated[str | None, Field(description="New text of the card's 'How to use' section (markdown): "
                                                            "how to call the module, invariants, pitfalls. Give it "
                                                            "when your task changed what the module exposes; leave "
                                                            "it out to keep the current text.")] = None,
        summary: Annotated[str | None, Field(description="One paragraph on what you did, kept for the audit.")] = None,
    ) -> ToolOutput:
        """Call this when you finish a task, before you commit: it regenerates the module's card
        (.brain/modules/<module>.md: what the module exposes, its dependencies, routes, contract divergence)
        from the code as it is now, so the card goes into the same commit as your change, and when you give
        how_to_use it replaces only the card's human 'How to use' section. Nothing else in the card is yours
        to edit. Returns the card path; commit it with your code."""
        from ...team.identity import current_principal, writer_role
        from .coord import own_session

        session = own_session(brain) if current_principal() is None else None
        role = writer_role(brain)
        result = brain.report_done(module, how_to_use=how_to_use, summary=summary, writer=session or role, role=role)
        text = f"{'refreshed' if result['refreshed'] else 'checked (already up to date)'} {result['card']}"
        if result["how_to_use_replaced"]:
            text += "; its How to use section was replaced"
        return ToolOutput(text + ". Commit the card with your code.", result)
