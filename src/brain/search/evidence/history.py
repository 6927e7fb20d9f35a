"""Evidence of the project's history: the files past commits like the task changed (``history``).

Read from the history tables of the index (``search.history``: HEAD's commits only, bounded). The
co-change of the best files is not direct evidence (it depends on which files are the best), so it
is read with the neighbours (``neighbours.collect_links``) and lent by ``ranking.combine``.
"""

from __future__ import annotations

from ..history import history_evidence

__all__ = ["collect"]


def collect(task) -> None:
    history_evidence(task.view, task.sig.words, lambda path, value, reason: task.add(path, "history", value, reason))
