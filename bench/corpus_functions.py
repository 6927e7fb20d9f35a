"""Function gold for the corpus: the definitions a commit changed, so the function ranking is scored on
repositories nobody tuned it on (issue 23, "function Acc@k reported on every set").

The corpus names files, not functions. For a task, the gold functions are the definitions (functions,
methods, classes, as the product's own function index names them: ``path::Qualified.name``) enclosing
the lines the commit changed or deleted in its gold files, read at the base commit: the old side of
``git diff -U0 BASE COMMIT -- FILE``, each line given to the innermost definition holding it in the
index of the checked-out base tree. A hunk that only adds lines, after old line N, changes the innermost
definition holding both N and N+1 (lines added inside a body change it; a method added between two
others changes their class, as the Django gold names a class a member was added to), or the one
whose last line is N when the first added line is indented deeper than that definition's first line
(a statement appended to a Python body; after a closing brace the added line is not deeper). A task
none of whose changes falls inside a definition has no function gold and is left out of the function figures.

The diff parsing (``old_lines``, ``insertions``) is pure, apart from git and the index, so the tests check
it on a literal diff, and the whole gold on a real commit of a temporary repository and its index.
"""

from __future__ import annotations

import re

__all__ = ["old_lines", "insertions", "changed_lines", "enclosing", "gold_functions", "function_ranks", "FN_KEYS"]

FN_KEYS = ("fbrain", "fbm25")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def old_lines(diff: str) -> set[int]:
    """The old-side line numbers a unified diff (any context) changes or deletes."""
    out: set[int] = set()
    line = 0
    for text in diff.splitlines():
        m = _HUNK.match(text)
        if m:
            line = int(m.group(1))
            continue
        if not line or text.startswith(("+", "\\")):
            continue
        if text.startswith("-") and not text.startswith("--- "):
            out.add(line)
            line += 1
        elif text.startswith(" "):
            line += 1
    return out


def insertions(diff: str) -> dict[int, str]:
    """Old-side line N -> the first added line, for each hunk of a ``-U0`` diff that only adds lines after N
    (``@@ -N,0 ...``)."""
    out: dict[int, str] = {}
    pending = None
    for text in diff.splitlines():
        m = _HUNK.match(text)
        if m:
            pending = int(m.group(1)) if m.group(2) == "0" else None
        elif pending is not None and text.startswith("+") and not text.startswith("+++ "):
            out[pending] = text[1:]
            pending = None
    return out


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def inserted_into(rows, after: int, added: str, lines: list[str]):
    """The definition lines added after old line ``after`` change (see the module), or None."""
    inside = enclosing(rows, after, after + 1)
    ending = [r for r in rows if r.end == after and (inside is None or inside.start <= r.start)]
    if ending and added.strip():
        row = min(ending, key=lambda r: r.end - r.start)
        if 0 < row.start <= len(lines) and _indent(added) > _indent(lines[row.start - 1]):
            return row
    return inside


def changed_lines(git, tree, base: str, commit: str, path: str) -> tuple[set[int], dict[int, str]]:
    """(lines of ``path`` at ``base`` that ``commit`` changed or deleted, old lines after which it only added)
    (``git`` runs git in ``tree``)."""
    diff = git("diff", "-U0", "--no-color", "--no-ext-diff", base, commit, "--", path, cwd=tree)
    return old_lines(diff), insertions(diff)


def enclosing(rows, line: int, last: int | None = None):
    """The innermost definition of ``rows`` (DefRow) holding ``line`` (and ``last``, when given), or None."""
    last = line if last is None else last
    best = None
    for row in rows:
        if row.start <= line and last <= row.end and (best is None or row.end - row.start < best.end - best.start):
            best = row
    return best


def gold_functions(fview, git, tree, base: str, commit: str, gold_files: list[str]) -> list[str]:
    """The keys of the definitions enclosing the lines the commit changed in ``gold_files`` (sorted)."""
    keys: set[str] = set()
    for path in gold_files:
        rows = fview.in_file(path)
        if not rows:
            continue
        changed, added_after = changed_lines(git, tree, base, commit, path)
        try:
            lines = (tree / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = []
        found = [enclosing(rows, line) for line in changed]
        found += [inserted_into(rows, n, text, lines) for n, text in added_after.items() if n]
        keys.update(row.key for row in found if row is not None)
    return sorted(keys)


def function_ranks(gold: list[str], brain_ids: list[str], fview, query: list[str], limit: int = 50) -> dict:
    """{"fbrain", "fbm25"}: each gold function's 1-based rank in the boot's functions and in BM25 over bodies."""
    import corpus_score as cs

    ids = [i for i, _ in fview.bm25(query, limit)]
    defs = fview.by_ids(ids)
    bm25 = [defs[i].key for i in ids if i in defs]
    return {"fbrain": cs.gold_ranks(gold, brain_ids), "fbm25": cs.gold_ranks(gold, bm25)}
