"""now.md: the guaranteed push channel, first in every boot and whole."""

from __future__ import annotations

from ..parts import Part


def collect(brain, request) -> list[Part]:
    doc = brain.memory.read_or_none("now.md")
    text = doc.text if doc and doc.text.strip() else "(now.md is empty: nothing was handed over. Write it before you stop: `brain write now`.)"
    return [Part("now", "now.md", "Now (.brain/now.md)", text, "brain read now.md", required=True)]
