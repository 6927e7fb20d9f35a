"""Evidence of type words: in languages of one type per file, the title's words a candidate's type name is made of.

Java, Kotlin, C#, PHP and Ruby name a file after the type it holds (``evidence.types``), and a commit
title names that type in prose more often than as an identifier: `Add support for partitioned rate
limiter` -> `RateLimiterResilienceStrategy.cs`, `Handle non-property parameters` -> `TargetParameter.kt`,
`Fix reading property function types` -> `kotlintypes.kt`. ``pathwords`` weighs every path's folders and
name alike, and its lift stays small because issue reports name a public concept that is also a big area's
folder (Django's `fields`, `related`); a type's own name is not a folder, so here only the file's type name
counts (`Foo.Bar.cs` -> `Foo`; folders are left to ``pathwords``), on the files of those languages only.

The value is the share of the type name's words (identifier parts, three letters or more, cut to their
first five letters as ``pathwords`` does) the title names, each weighed by how rare it is among the
candidates' type names; a lift (``ranking.LIFT_FEATURES``): it multiplies a candidate's score by
``1 + weight x value``, so it reorders the files the other kinds found and makes none a candidate. A task
whose traceback has frames inside the repository gets none (the frames say where).
"""

from __future__ import annotations

import math
from collections import defaultdict

from .pathwords import _MIN_WORD, _PREFIX, _name_words
from .types import TYPE_FILE_EXTS, type_of

__all__ = ["collect", "type_words"]


def type_words(title_words, candidates) -> dict[str, tuple[float, list[str]]]:
    """path -> (value, the title's words it names) for the one-type-per-file ``candidates`` whose type name
    the title's words name (pure: the title's query tokens and the candidates' paths are all it reads)."""
    title = {w[:_PREFIX] for w in title_words if len(w) >= _MIN_WORD}
    if not title:
        return {}
    words = {p: set(_name_words(type_of(p))) for p in candidates if p.endswith(TYPE_FILE_EXTS)}
    words = {p: w for p, w in words.items() if w}
    if not any(title & w for w in words.values()):
        return {}
    seen: dict[str, int] = defaultdict(int)
    for found in words.values():
        for word in found:
            seen[word] += 1
    total = len(words)
    out = {}
    for path, found in words.items():
        named = title & found
        if named:
            weigh = {w: math.log(1.0 + total / seen[w]) for w in found}
            out[path] = (sum(weigh[w] for w in named) / sum(weigh.values()), sorted(named))
    return out


def collect(task) -> None:
    if any("frame" in f.features or "frame_last" in f.features for f in task.evidence.files.values()):
        return
    view = task.view
    candidates = [p for p in task.evidence.candidates if p.endswith(TYPE_FILE_EXTS)]
    if not candidates:
        return
    view.files.prefetch(candidates)
    candidates = [p for p in candidates if p in view.files and not view.is_test(p)]
    for path, (value, named) in type_words(task.sig.title_words, candidates).items():
        task.add(path, "type_words", value, f"its type's name is the title's words ({', '.join(named)})")
