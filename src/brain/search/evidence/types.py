"""Evidence of types: in languages that keep one type per file, the files a best file's type is tied to.

Java, Kotlin, C#, PHP (PSR-4) and Ruby (Zeitwerk) name a file after the type it holds, so a file is a
type and the links between types are links between files, whether or not an import line says so (a
type of the same package or namespace needs none). Read on the corpus (issue 23): when the top five
hold one file a commit changed but not the others, the others are often

* its **kin**: the types its class header extends or implements, and the types whose headers name it
  (an interface and its implementations, a visitor and its visitors: adding a method to one changes all),
  through the header links the import graph records (Java's `extends`/`implements`);
* its **family**: files whose type name extends its own at a word boundary, or that it extends
  (`CreateIndex` -> `CreateIndexDeParser`, `CreateIndexValidator`; `RetryStrategyOptions` ->
  `RetryStrategyOptions.TResult.cs`; `parse_context.rb` -> `parse_context_helper.rb`): the same concept's
  parts, each in its own file;
* its **users**: the files whose code writes its type name (its callers and holders), when few do.

``neighbours.collect_links`` records the three lists in each candidate's ``Links``; the ``kin``,
``family`` and ``users`` shares of ``weights.json`` decide what ``ranking.combine`` lends along them.
"""

from __future__ import annotations

import bisect
import posixpath
import weakref

from ..code import is_nonproduct_path
from ..ranking import TYPE_FILE_EXTS

__all__ = ["TYPE_FILE_EXTS", "type_of", "kin", "family", "users"]

_MIN_NAME = 4  # a shorter type name is too common a word to tie files by (`Id`, `Map`)
_STEMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def type_of(path: str) -> str:
    """The type a file holds by its name: `Foo.java` -> Foo, `Foo.Async.cs` -> Foo, `foo_bar.rb` -> foo_bar."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


def _stems(view) -> tuple[list[str], dict[str, list[str]]]:
    """(sorted type names, type name -> its product files) of the repository's type-per-file sources, once per view."""
    found = _STEMS.get(view)
    if found is None:
        by_name: dict[str, list[str]] = {}
        for path in view.files:
            if path.endswith(TYPE_FILE_EXTS) and not view.is_test(path) and not is_nonproduct_path(path):
                by_name.setdefault(type_of(path), []).append(path)
        found = (sorted(by_name), by_name)
        _STEMS[view] = found
    return found


def _boundary(longer: str, shorter: str) -> bool:
    """Whether ``longer`` goes on from ``shorter`` at a word boundary (`CreateIndex|DeParser`, `parse_context|_x`)."""
    if len(longer) == len(shorter):
        return True
    nxt = longer[len(shorter)]
    return nxt.isupper() or nxt == "_"


def family(view, seed: str, most: int) -> list[str]:
    """The files of ``seed``'s language whose type name is its own, goes on from it at a word boundary, or
    that its own goes on from; empty when more than ``most`` (a name every file starts with)."""
    if not seed.endswith(TYPE_FILE_EXTS):
        return []
    name, ext = type_of(seed), posixpath.splitext(seed)[1]
    if len(name) < _MIN_NAME:
        return []
    names, by_name = _stems(view)
    out: list[str] = []
    at = bisect.bisect_left(names, name)
    while at < len(names) and names[at].startswith(name):  # the names going on from it
        if _boundary(names[at], name):
            out.extend(by_name[names[at]])
            if len(out) > most + 1:
                return []
        at += 1
    for cut in range(_MIN_NAME, len(name)):  # the names it goes on from
        if _boundary(name, name[:cut]) and name[:cut] in by_name:
            out.extend(by_name[name[:cut]])
    out = sorted({p for p in out if p != seed and p.endswith(ext)})
    return out if len(out) <= most else []


def kin(view, seed: str, forward, backward, names_type, most: int) -> list[str]:
    """The files of the types ``seed``'s class header names (`extends`, `implements`, `: Base`, `< Base`) and
    of the types whose headers name it, through the import graph; empty when more than ``most``."""
    if not seed.endswith(TYPE_FILE_EXTS):
        return []
    out = {q for q in forward.get(seed, ()) if names_type(view, seed, q)}
    out |= {q for q in backward.get(seed, ()) if names_type(view, q, seed)}
    out = sorted(q for q in out if q != seed and not view.is_test(q))
    return out if len(out) <= most else []


def users(view, seed: str, most: int) -> list[str] | None:
    """The product files of ``seed``'s language whose code writes its type name; None when more than ``most``
    do (a type used all over says nothing about one of its users)."""
    if not seed.endswith(TYPE_FILE_EXTS):
        return []
    name, ext = type_of(seed), posixpath.splitext(seed)[1]
    if len(name) < _MIN_NAME:
        return None
    if ext == ".rb":  # a Ruby file holds `ParseContext`, written so by its users
        name = "".join(part.capitalize() for part in name.split("_"))
    writing = view.files_writing(name, 4 * most + 1)
    if len(writing) > 4 * most:
        return None
    found = [q for q in writing if q != seed and q.endswith(ext) and not view.is_test(q) and not is_nonproduct_path(q)]
    return sorted(found) if len(found) <= most else None
