"""Evidence of place words: the title's words that a file's path is made of (``path_words``).

A title often names where the change is by the words its folders and file are named with (`fix
weekday matcher in the tr locale` -> `locale/tr/_lib/match/index.ts`, `async support for blocks`
-> `asyncsupport.py`) rather than by any identifier the code defines. Each file the other kinds
found (a candidate) is split into its path words (folders and file name, identifier parts,
lower-case, three letters or more, without the words every project's layout repeats: `src`,
`lib`, `index`, `packages`...); a word counts as named when its first five letters are those of a
title word (`matcher` names `match`, `formatting` names `formatter`... and `internal` names `interval`:
crude, and cheap). The value is the share of the file's path words the title names, each word
weighed by how rare it is among the candidates' paths (a folder all candidates share says little),
so a file whose own name and folder are the title's words gets up to 1.0. Only candidates are
looked at: place words alone do not make a file a candidate, and the value is a lift (``ranking.LIFT_FEATURES``,
as ``scope``): it multiplies the file's score by ``1 + weight x value``. Issue reports name a public
concept whose word is also a big area's folder (`fields`, `related`) more often than commit titles
do, so the lift is small: on Django's reports a larger one (or an addition) put such a folder's files
over the right one. A task whose traceback has frames inside the repository gets none: the frames
say where, and the deepest must stay first.
"""

from __future__ import annotations

import math
from collections import defaultdict

from ..tokenize import split_identifier

__all__ = ["collect", "path_words", "LAYOUT_WORDS"]

# words of a layout, not of a place: every project has them, so they name nothing
LAYOUT_WORDS = frozenset("src lib index packages package source main mod init js ts tsx jsx mjs py".split())
_PREFIX = 5
_MIN_WORD = 3


_NAME_WORDS: dict[str, tuple[str, ...]] = {}  # a folder or file name -> its place words (names repeat across paths)


def _name_words(name: str) -> tuple[str, ...]:
    found = _NAME_WORDS.get(name)
    if found is None:
        if len(_NAME_WORDS) > 50_000:
            _NAME_WORDS.clear()
        found = _NAME_WORDS[name] = tuple(w[:_PREFIX] for w in split_identifier(name)
                                          if len(w) >= _MIN_WORD and w not in LAYOUT_WORDS)
    return found


def path_words(path: str) -> set[str]:
    """The place words of ``path``: its folders' and its file name's identifier parts, cut to their first five letters."""
    parts = path.split("/")
    parts[-1] = parts[-1].split(".", 1)[0]
    return {w for name in parts for w in _name_words(name)}


def collect(task) -> None:
    view = task.view
    if any("frame" in f.features or "frame_last" in f.features for f in task.evidence.files.values()):
        return  # a traceback inside the repository says where: place words would only blur its order
    title = {w[:_PREFIX] for w in task.sig.title_words if len(w) >= _MIN_WORD}
    if not title:
        return
    view.files.prefetch(task.evidence.candidates)
    candidates = [p for p in task.evidence.candidates if p in view.files and not view.is_test(p)]
    words = {p: path_words(p) for p in candidates}
    if not any(title & w for w in words.values()):
        return
    seen: dict[str, int] = defaultdict(int)
    for found in words.values():
        for word in found:
            seen[word] += 1
    total = len(candidates)
    for path in candidates:
        named = title & words[path]
        if not named:
            continue
        weigh = {w: math.log(1.0 + total / seen[w]) for w in words[path]}
        value = sum(weigh[w] for w in named) / sum(weigh.values())
        task.add(path, "path_words", value, f"its path is the title's words ({', '.join(sorted(named))})")
