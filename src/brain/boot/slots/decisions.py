"""Decision lines that bear on this boot: records about the task's module, or matching its words.

Only standing records (proposed, accepted) come in, one line each, as one Part; the
full index stays a `brain decisions` (MCP `brain_decisions`) away.
"""

from __future__ import annotations

import re

from ..parts import Part

__all__ = ["collect", "MAX_LINES"]

MAX_LINES = 15
_STOP = frozenset("the a an and or of to in on for with is are be this that it fix add use from by as at".split())


def collect(brain, request) -> list[Part]:
    if not request.task and not request.module:
        return []  # nothing to match decisions against: the index is a `brain decisions` away
    from ...decisions import load_decisions
    from ...errors import BrainError

    try:
        records = [r for r in load_decisions(brain) if r.active]
    except (BrainError, OSError):
        return []
    if not records:
        return []
    task_words = {w for w in re.findall(r"[a-z0-9]{3,}", (request.task or "").lower()) if w not in _STOP}
    chosen = []
    for record in records:
        about_module = bool(request.module) and any(
            m.strip("/") == request.module or request.module.startswith(m.strip("/") + "/") or m.strip("/").startswith(request.module + "/")
            for m in record.modules)
        title_words = set(re.findall(r"[a-z0-9]{3,}", (record.title + " " + " ".join(record.modules)).lower()))
        overlap = len(task_words & title_words)
        if about_module or overlap >= 2 or (overlap == 1 and len(title_words) <= 3):
            chosen.append((0 if about_module else 1, -overlap, record.number, record))
    if not chosen:
        return []
    chosen.sort(key=lambda t: t[:3])
    lines = [t[3].line() for t in chosen[:MAX_LINES]]
    if len(chosen) > MAX_LINES:
        lines.append(f"- and {len(chosen) - MAX_LINES} more: `brain decisions --query WORDS`")
    return [Part("decisions", "decisions.md", "Decisions that bear on this task", "\n".join(lines),
                 "brain decisions (MCP brain_decisions)")]
