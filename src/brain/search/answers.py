"""The index remembers its answers until it changes: a repeated boot with the same task ranks once.

Why: on a team server every agent boots with a task, often the same one (a team splits one issue),
and a boot's rankings (the files, the definitions on them, the memory hits) are most of its CPU:
computed again for every boot, they kept the server's heavy lane busy (``bench/bench_team.py``).
A ranking is a function of its inputs and of the index's rows only, so it is kept per connection
(one per thread) under the state of the database that connection sees: SQLite's ``PRAGMA
data_version`` (changes when any other connection, of any process, commits) and the connection's
own ``total_changes`` (its own writes). Any commit to the index (a refresh, a heal's new file,
another process's `brain index`) empties the thread's answers; an answer computed while the state
changed is not kept. An answer is kept pickled and every caller gets its own copy (a pickle round
trip, several times cheaper than ``copy.deepcopy``), so nothing a caller does to it reaches the next.
What the rankings read outside the index (git's changed files, the session's claims) is part of the
key, never of the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

__all__ = ["remembered", "keep_answers", "MAX_ANSWERS"]

MAX_ANSWERS = 64  # answers kept per thread's connection (least recently used dropped first)
_keeping = False  # off in a one-shot process (the CLI boots once): nothing kept, pickle never imported


def keep_answers(on: bool = True) -> None:
    """Keep answers in this process from now on (the MCP servers, stdio and HTTP, which boot again and
    again); a one-shot command leaves it off and asks the index every time."""
    global _keeping
    _keeping = on


def _state(db) -> tuple[int, int]:
    return db.execute("PRAGMA data_version").fetchone()[0], db.total_changes


def remembered(index, key: Hashable, compute: Callable[[], object]) -> object:
    """``compute()``, or a copy of its answer from an earlier call with ``key`` on this thread's connection
    while the index has not changed since (when this process keeps answers: ``keep_answers``)."""
    if not _keeping:
        return compute()
    import pickle

    db = index.db
    held = index._local.held  # this thread's connection (a new one, after a reopen or heal: no answers yet)
    state = _state(db)
    answers = held.answers
    if answers is None or held.answers_state != state:
        answers = held.answers = OrderedDict()
        held.answers_state = state
    if key in answers:
        answers.move_to_end(key)
        return pickle.loads(answers[key])
    value = compute()
    if index._local.held is held and _state(db) == state:  # nothing committed meanwhile: the answer holds
        answers[key] = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        while len(answers) > MAX_ANSWERS:
            answers.popitem(last=False)
    return value
