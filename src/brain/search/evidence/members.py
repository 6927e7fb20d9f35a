"""Evidence of a fix's user files: the files writing the names a best file declares (issue 23, decision 0085).

A fix's second file is often a *user* of what the first one changes: a deparser or visitor given a new field,
the interface a trait's methods come from, the help printer of a flag's struct. The text names neither; the
code ties them: the user writes the names the changed file declares. ``writers`` reads, from the code index
alone (the symbol rows of one file, the FTS vocabulary and a phrase look-up per name), the files that write at
least ``min_names`` code-like names the seed file's symbols record, each name written by at most ``max_df``
indexed files (the seed included): names that specific tie two files, not a convention. ``ranking.combine``
lends the ``members`` share of the best file's score to them (``lending.lend_to_writers``).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter

__all__ = ["writers", "code_like"]

_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_MIN_LEN = 4
_MAX_NAMES = 400  # a file declaring more names than this is read for its first ones (rows in source order)


def code_like(name: str) -> bool:
    """A name shaped as code, long enough to be specific: `isAfter`, `longest_filter`, `FlagEnvHintFunc`."""
    inner = name.strip("_")
    return len(inner) >= _MIN_LEN and ("_" in inner or bool(_CAMEL.search(inner)) or any(c.isdigit() for c in inner))


def writers(view, seed: str, max_df: int, min_names: int) -> list[str]:
    """The non-test files writing ``min_names`` or more of the specific names ``seed`` declares."""
    db = view.db
    try:
        names = [n for (n,) in db.execute("SELECT DISTINCT name FROM code_symbols WHERE path = ? ORDER BY line",
                                          (seed,)) if code_like(n)][:_MAX_NAMES]
        terms = sorted({n.lower() for n in names})
        df: dict[str, int] = {}
        for i in range(0, len(terms), 500):
            chunk = terms[i:i + 500]
            df.update(db.execute(f"SELECT term, doc FROM code_vocab WHERE term IN ({','.join('?' * len(chunk))})",
                                 chunk).fetchall())
    except sqlite3.OperationalError:  # no vocabulary table (an SQLite without fts5vocab): no link
        return []
    count: Counter = Counter()
    for term in sorted(t for t in terms if 2 <= df.get(t, 0) <= max_df):
        for path in view.files_writing(term, max_df + 1):
            if path != seed and not view.is_test(path):
                count[path] += 1
    return sorted(p for p, n in count.items() if n >= min_names)
