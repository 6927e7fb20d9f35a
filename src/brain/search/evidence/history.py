"""Evidence of the project's history: the files past commits like the task changed (``history``).

Read from the history tables of the index (``search.history``: HEAD's commits only, bounded). A task
text of one line (a title alone) has it scaled by the ``history_one_line`` param (the decision "A
one-line task's history counts more"). The co-change of the best files is not direct evidence (it
depends on which files are the best), so it is read with the neighbours (``neighbours.collect_links``)
and lent by ``ranking.combine``.
"""

from __future__ import annotations

from ..history import history_evidence

__all__ = ["collect"]


def collect(task) -> None:
    # a one-line task is a title alone, the shape of the past commits' subjects history matches it against, and
    # its few words say little to the text measures: its history counts more (``history_one_line``)
    scale = task.params["history_one_line"] if task.sig.one_line else 1.0
    history_evidence(task.view, task.sig.words,
                     lambda path, value, reason: task.add(path, "history", scale * value, reason))
