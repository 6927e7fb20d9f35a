"""The session's thread handoffs: the distilled summary of each conversation it takes part in.

Only the bounded handoff markdown (`handoffs/<thread>.md`) comes in — never the log
itself (DESIGN §1, frontier rule). Read only when the boot names a session and a
conversation was ever recorded; nothing is created when there is none.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect"]


def collect(brain, request) -> list[Part]:
    if not request.session or not (brain.runtime / "conversations" / "index.json").is_file():
        return []
    limit = brain.settings["handoff.max_threads"]
    parts = []
    for doc in brain.conversations.handoffs_for(request.session)[:limit]:
        if doc.text.strip():
            parts.append(Part("handoff", doc.path, f"Thread handoff (.brain/{doc.path})", doc.text,
                              f"brain read {doc.path}"))
    return parts
