"""focus.md: the human-owned statement of what matters now."""

from __future__ import annotations

from ..parts import Part


def collect(brain, request) -> list[Part]:
    doc = brain.memory.read_or_none("focus.md")
    if doc is None or not doc.text.strip():
        return []
    return [Part("focus", "focus.md", "Focus (.brain/focus.md)", doc.text, "brain read focus.md")]
