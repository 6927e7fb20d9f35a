"""Evidence of the area a commit-style title names: `fix(router): ...`, `[Serializer] ...`, `Selector: ...` (``scope``).

The prefix names the part of the project the change is in (``commit_text.title_scopes``), by the
name of a folder (`vue-query` -> `packages/vue-query/`), a file (`Selector` -> `src/selector.js`) or
both (`client/types` -> `src/client/types.ts`). It says where, not what: many files share a folder,
so ``scope`` is a boost (``ranking.BOOST_FEATURES``) that counts only on a file with other evidence,
and a lift (``ranking.LIFT_FEATURES``): it multiplies that file's score by ``1 + weight x value``, so the
files of the area rise against the others without reordering among themselves; the value is full for a
file the name names (its stem), half for a file inside a folder it names. (The title's areas are
``Signals.scopes``, read by ``commit_text.title_scopes``.) Names are
compared without case and punctuation (`eslint-plugin` = `eslintPlugin`), a name of four letters or
more also as the head of a longer one (`codemod` -> `codemods/`, `angular-query` ->
`angular-query-experimental/`). A name that matches nothing in the repository says nothing.
"""

from __future__ import annotations

from ...lazyre import lazy

__all__ = ["collect", "scope_matches"]

_PUNCT = lazy(r"[^0-9a-z]+")
_MIN_HEAD = 4  # a scope this long or longer also matches as the head of a longer name


def _norm(word: str) -> str:
    return _PUNCT.sub("", word.lower())


def _same(name: str, part: str) -> bool:
    return part == name or (len(name) >= _MIN_HEAD and part.startswith(name))


def scope_matches(scope: str, path: str) -> float:
    """1.0 when ``scope`` names the file ``path`` (its stem, with its folders for a slashed scope), 0.5 when it
    names a folder holding it, else 0. Every slashed part of the scope must be met, in order."""
    names = [n for n in (_norm(p) for p in scope.split("/")) if n]
    if not names:
        return 0.0
    folders = path.split("/")
    leaf = folders.pop()
    parts = [_norm(f) for f in folders]
    stem_parts = [_norm(p) for p in leaf.split(".")[:-1] or [leaf]]
    stem = _norm(leaf.rsplit(".", 1)[0]) if "." in leaf else _norm(leaf)
    *heads, last = names
    at = 0
    for name in heads:  # the leading parts name folders, in order
        while at < len(parts) and not _same(name, parts[at]):
            at += 1
        if at == len(parts):
            return 0.0
        at += 1
    if stem == last or any(p == last for p in stem_parts):
        return 1.0
    if any(_same(last, p) for p in parts[at:]):
        return 0.5
    return 0.0


def collect(task) -> None:
    """Read last of ``KINDS``: only the files the other kinds found can be boosted, so only they are looked at."""
    scopes = task.sig.scopes
    if not scopes:
        return
    for path in task.evidence.candidates:
        if path not in task.view.files or task.view.is_test(path):
            continue
        best, named = 0.0, ""
        for scope in scopes:
            value = scope_matches(scope, path)
            if value > best:
                best, named = value, scope
        if best > 0:
            task.add(path, "scope", best, f"in the area `{named}` the title names")
