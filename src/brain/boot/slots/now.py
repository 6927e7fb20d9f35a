"""now.md: the guaranteed push channel, first in every boot and whole."""

from __future__ import annotations

from ..parts import Part


def collect(brain, request) -> list[Part]:
    doc = brain.memory.read_or_none("now.md")
    text = doc.text if doc and doc.text.strip() else "(now.md is empty: nothing was handed over. Write it before you stop: `brain write now`.)"
    if "<<<<<<<" in text:
        from ...memory.merge_marks import conflict_regions, describe_regions

        regions = conflict_regions(text)
        if regions:  # two worktrees or clones both wrote it: git kept both sides
            text = (f"(now.md holds an unresolved git merge, lines {describe_regions(regions)}: both sides are below. "
                    "Keep what is still true, drop the markers and write it back: `brain write now`.)\n\n" + text)
    return [Part("now", "now.md", "Now (.brain/now.md)", text, "brain read now.md", required=True)]
