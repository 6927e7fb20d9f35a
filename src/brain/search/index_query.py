"""The queries of the search index: memory documents and code by BM25, with a snippet per hit.

A query starts from its rarest words (the FTS vocabulary tables) and falls back to a
bounded union; hits carry the most query-dense line of their text. A mixin of
``SearchIndex``: it reads through the index's connection.
"""

from __future__ import annotations

import sqlite3

from ..lazyre import lazy
from ..records import record
from .tokenize import query_terms, tokens

__all__ = ["Queries", "SearchHit", "snippet", "SNIPPET_CHARS", "UNION_DOCS"]

SNIPPET_CHARS = 240
_SPACES = lazy(r"\s+")  # a snippet's runs of white space, one space each
UNION_DOCS = 3000  # a fallback union ranks at most about this many documents
# a query ranks at most this many matches, the most recently indexed (highest rowid: a rewritten note is
# re-inserted, so it counts as new): FTS5 computes BM25 for every match before LIMIT, so a common word made
# a search's cost grow with the number of notes (docs/search.md, "Ranking a bounded candidate set")
CANDIDATES = UNION_DOCS


def snippet(text: str, query: set[str], width: int = SNIPPET_CHARS) -> str:
    """The most query-dense line of ``text`` with what follows, at most ``width`` characters."""
    lines = [ln for ln in map(str.strip, text.splitlines()) if ln]
    if not lines:
        return ""
    lowered = None
    if text.isascii():  # (ASCII lowers character by character: a word no line holds is not in the whole text)
        low_text = text.lower()
        query = [q for q in query if q in low_text]
        if query:  # the same lines, lowered at once (an ASCII line's breaks and spaces are its lowered one's)
            lowered = [ln for ln in map(str.strip, low_text.splitlines()) if ln]
    best, best_score = 0, 0
    for i, line in enumerate(lines[:2000] if query else ()):
        low = lowered[i] if lowered is not None else line.lower()
        got = 0
        for q in query:  # substring test: cheap, and good enough to pick a line
            if q in low:
                got += 1
        if got > best_score:
            best, best_score = i, got
    out = lines[best]
    j = best + 1
    while len(out) < width and j < len(lines):
        out += " / " + lines[j]
        j += 1
    out = _SPACES.sub(" ", out)
    return out if len(out) <= width else out[: width - 1].rstrip() + "…"


@record(frozen=True)
class SearchHit:
    path: str
    kind: str
    title: str
    snippet: str
    score: float

    def to_dict(self) -> dict:
        return {"path": self.path, "kind": self.kind, "title": self.title, "snippet": self.snippet,
                "score": round(self.score, 4)}


class Queries:
    """The query half of ``SearchIndex`` (see the module doc)."""

    # -- queries -----------------------------------------------------------------
    def search(self, query: str, *, kind: str | None = None, limit: int = 10,
               code_snippets: bool = True) -> list[SearchHit]:
        """Memory documents and code files matching ``query``, best first, with bounded snippets.

        ``code_snippets=False`` leaves code hits' snippets empty: a caller that drops code hits (the
        boot's search slot, whose code has its own slot) still needs their scores, which decide what
        else makes the top ``limit``, but not their text (a symbol read per hit)."""
        words = (query_terms(query) or query_terms(query, stop=False))[:32]
        if not words or limit <= 0:
            return []
        hits: list[SearchHit] = []
        if kind != "code":
            hits += self._search_docs(words, kind, limit)
        if kind in (None, "code"):
            hits += self._search_code(query, limit, code_snippets)
        if kind is None:
            hits.sort(key=lambda h: (-h.score, h.path))
        return hits[:limit]

    def _match(self, table: str, words: list[str], limit: int, weights: str, join: str = "", where: str = "",
               params: tuple = ()):
        """rowids and scores of the best matches.

        Every word first (an intersection: cheap in FTS5). When nothing has them all, the words
        no document has are dropped and the rest intersected; when the words exist but never
        together, the union of the rarest ones (up to about UNION_DOCS documents) is ranked.
        Ranking a union of common words is what would cost, and those rank last in BM25 anyway.
        Each of these ranks at most CANDIDATES matches, the newest: FTS5 computes BM25 for every
        match before LIMIT, so without the bound one common word made a search cost O(notes).
        """
        quoted = {w: '"' + w.replace('"', '""') + '"' for w in words}
        sql = (f"SELECT {table}.rowid, bm25({table}, {weights}) AS s FROM {table} {join} "
               f"WHERE {table} MATCH ? {where} ORDER BY s LIMIT ?")
        # the rowid of the CANDIDATES-th newest match (no ranking: FTS5 walks its rowid order and stops there)
        newest = (f"SELECT {table}.rowid FROM {table} {join} WHERE {table} MATCH ? {where} "
                  f"ORDER BY {table}.rowid DESC LIMIT 1 OFFSET ?")
        capped = (f"SELECT {table}.rowid, bm25({table}, {weights}) AS s FROM {table} {join} "
                  f"WHERE {table} MATCH ? {where} AND {table}.rowid >= ? ORDER BY s LIMIT ?")

        def run(terms: list[str], op: str):
            expression = op.join(quoted[t] for t in terms)
            try:
                floor = self.db.execute(newest, (expression, *params, CANDIDATES - 1)).fetchone()
                if floor is None:  # at most CANDIDATES matches: rank them all, as FTS5 does
                    return self.db.execute(sql, (expression, *params, limit)).fetchall()
                return self.db.execute(capped, (expression, *params, floor[0], limit)).fetchall()
            except sqlite3.OperationalError:
                return []

        rows = run(words, " AND ")
        if rows or len(words) == 1:
            return rows
        # documents holding each word, counted up to just above UNION_DOCS (a walk of the word's rowids
        # that stops there: fts5vocab's count reads a common word's whole posting list, 2.6 ms at 50,000 notes)
        bounded = f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)"
        counts = {}
        for w in words:
            try:
                found = self.db.execute(bounded, (quoted[w], UNION_DOCS + 1)).fetchone()[0]
            except sqlite3.OperationalError:
                found = 0
            if found:
                counts[w] = found
        present = sorted(counts, key=lambda w: (counts[w], w))
        if not present:
            return []
        if len(present) < len(words):
            rows = run(present, " AND ")
            if rows or len(present) == 1:
                return rows
        chosen, total = [], 0
        for w in present:
            if chosen and total + counts[w] > UNION_DOCS:
                break
            chosen.append(w)
            total += counts[w]
        return run(chosen, " OR ")

    def _search_docs(self, words: list[str], kind: str | None, limit: int) -> list[SearchHit]:
        join, where, params = ("JOIN docs ON docs.id = docs_fts.rowid", "AND docs.kind = ?", (kind,)) if kind else ("", "", ())
        rows = self._match("docs_fts", words, limit, "3.0, 1.0, 1.0", join, where, params)
        if not rows:
            return []
        top = -rows[0][1] or 1.0
        wanted = set(words)
        marks = ",".join("?" * len(rows))
        docs = {r[0]: r[1:] for r in self.db.execute(
            f"SELECT docs.id, docs.path, docs.kind, docs.title, docs_fts.body FROM docs "
            f"JOIN docs_fts ON docs_fts.rowid = docs.id WHERE docs.id IN ({marks})", [r[0] for r in rows])}
        hits = []
        for rowid, s in rows:
            doc = docs.get(rowid)
            if doc:
                path = doc[0] if not doc[0].startswith("@decisions/") else f"{self.decisions_dir}/{doc[0][11:]}"
                hits.append(SearchHit(path, doc[1], doc[2], snippet(doc[3], wanted), -s / top))
        return hits

    def _search_code(self, query: str, limit: int, snippets: bool = True) -> list[SearchHit]:
        if self.db.execute("SELECT 1 FROM code_fts LIMIT 1").fetchone() is None:
            return []  # no source files indexed (or only tests)
        words = list(dict.fromkeys(tokens(query, stop=True) or tokens(query)))[:32]
        rows = self._match("code_fts", words, limit, "3.0, 1.0")
        if not rows:
            return []
        top = -rows[0][1] or 1.0
        wanted = set(words)
        hits = []
        for rowid, s in rows:
            module = self.db.execute("SELECT path, module, doc FROM code_files WHERE id = ?", (rowid,)).fetchone()
            if not module:
                continue
            path = module[0]
            if not snippets:
                hits.append(SearchHit(path, "code", module[1], "", 0.9 * -s / top))
                continue
            syms = [f"{q} (line {ln})" for q, ln in self.db.execute(
                "SELECT qual, line FROM code_symbols WHERE path = ? ORDER BY line", (path,))
                if wanted & set(query_terms(q, stop=False))][:6]
            text = ("defines " + ", ".join(syms)) if syms else (module[2] or "")
            hits.append(SearchHit(path, "code", module[1], text[:SNIPPET_CHARS], 0.9 * -s / top))
        return hits
