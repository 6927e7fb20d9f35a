"""Workflows: named procedures; the boot lists them as pointers, never their bodies."""

from __future__ import annotations

from ..parts import Part

LISTED = 30


def collect(brain, request) -> list[Part]:
    names = brain.memory.list("workflows")
    if not names:
        return []
    lines = [f"- `{name}`" for name in names[:LISTED]]
    if len(names) > LISTED:
        lines.append(f"- and {len(names) - LISTED} more: `brain search --kind workflow QUERY`")
    lines.append("")
    lines.append("Read one with `brain read workflows/NAME.md` (MCP `brain_workflows`).")
    return [Part("workflows", "workflows/", "Workflows", "\n".join(lines), "brain_workflows")]
