"""The session's thread handoffs: the distilled summary of each conversation it takes part in.

Only the bounded handoff markdown (`handoffs/local/<thread>.md`, else a promoted
`handoffs/<thread>.md`) comes in — never the log
itself (DESIGN §1, frontier rule). Read only when the boot names a session and a
conversation was ever recorded; nothing is created when there is none. The party index
(the `index.json` of ``brain.conversations_dir``, kept by ``brain.log.store``) is read directly, so a
boot does not import the log package.
"""

from __future__ import annotations

import json

from ...errors import InvalidInput
from ..parts import Part

__all__ = ["collect"]


def collect(brain, request) -> list[Part]:
    if not request.session:
        return []
    try:
        index = json.loads((brain.conversations_dir / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    threads = index.get(request.session, []) if isinstance(index, dict) else []
    found = []
    for thread in threads if isinstance(threads, list) else []:
        if not isinstance(thread, str) or "/" in thread or thread.startswith("."):
            continue
        for path in (f"handoffs/local/{thread}.md", f"handoffs/{thread}.md"):  # the live one, else a promoted copy
            try:
                mtime = brain.memory.resolve(path).stat().st_mtime
            except (OSError, InvalidInput):  # a link or a name the path rule refuses is no handoff
                continue
            found.append((-mtime, path))
            break
    parts = []
    for _, path in sorted(found)[: brain.settings["handoff.max_threads"]]:  # most recently updated first
        doc = brain.memory.read_or_none(path)
        if doc is not None and doc.text.strip():
            parts.append(Part("handoff", doc.path, f"Thread handoff (.brain/{doc.path})", doc.text,
                              f"brain read {doc.path}"))
    return parts
