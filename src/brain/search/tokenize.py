"""Identifier-aware tokens, computed in Python on both sides of the index.

SQLite here cannot load a custom FTS5 tokenizer, so the index is fed text that is
already split: every word is lowercased, and an identifier yields itself whole plus
its parts (``parseHTTPResponse`` -> parsehttpresponse, parse, http, response;
``bulk_create`` -> bulk_create, bulk, create; ``django.db.models`` -> django.db.models,
django, db, models). The same function runs on queries, so a search for either the
whole name or one of its parts finds the document.
"""

from __future__ import annotations

import re

from ..lazyre import lazy

__all__ = ["tokens", "token_text", "split_identifier", "split_parts", "index_extra", "query_terms", "WORD", "STOPWORDS",
           "FTS_TOKENIZE"]

# FTS5 splits stored text itself (case-folded, `_` kept inside words); Python adds the identifier parts
FTS_TOKENIZE = "unicode61 remove_diacritics 0 tokenchars '_'"

# a run of identifier characters, optionally joined by dots, slashes or dashes
WORD = lazy(r"[^\W_][\w]*(?:[./\-:][^\W_][\w]*)*|_+[^\W_]\w*", re.UNICODE)
_CASE = lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SEPARATORS = lazy(r"[./\-:_]+")
_JOINERS = lazy(r"[./\-:]+")

STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i if in into is it its of on or so such that the their "
    "then there these this to was were will with not no can do does did should would could when which while "
    "we you he she they them my me our your self cls def return none true false".split()
)

MAX_TOKEN = 80


def split_identifier(word: str) -> list[str]:
    """Parts of one identifier, lowercased, in order, without the whole (see ``tokens``)."""
    parts: list[str] = []
    for chunk in _SEPARATORS.split(word):
        if chunk:
            if chunk.isascii():
                parts += map(str.lower, _CASE.findall(chunk))
            else:
                parts.append(chunk.lower())
    return parts


def tokens(text: str, *, parts: bool = True, stop: bool = False) -> list[str]:
    """Lowercased tokens of ``text``: each identifier whole, then its parts.

    ``stop`` drops common English and keyword stop words (used for queries built
    from long free text, never for the indexed side).
    """
    out: list[str] = []
    cache = _CACHE[(parts, stop)]
    for word in WORD.findall(text):
        got = cache.get(word)
        if got is None:
            got = _word_tokens(word, parts, stop)
            if len(cache) > 200_000:
                cache.clear()
            cache[word] = got
        out.extend(got)
    return out


_CACHE: dict[tuple[bool, bool], dict[str, tuple[str, ...]]] = {(a, b): {} for a in (True, False) for b in (True, False)}


def _word_tokens(word: str, parts: bool, stop: bool) -> tuple[str, ...]:
    word = word.strip("_")
    if not word:
        return ()
    if "." in word or "/" in word or "-" in word or ":" in word:
        # a dotted or slashed path: the whole path, each identifier in it, and their parts (each identifier's
        # from the same cache as a word's: a stripped word without joiners is its own WORD match's tokens)
        whole = word.lower()[:MAX_TOKEN]
        out = [] if stop and whole in STOPWORDS else [whole]
        cache = _CACHE[(parts, stop)]
        for piece in _JOINERS.split(word):
            piece = piece.strip("_")
            if piece:
                got = cache.get(piece)
                if got is None:
                    got = cache[piece] = tuple(_ident(piece, parts, stop))
                out += got
        return tuple(out)
    return tuple(_ident(word, parts, stop))


def _ident(word: str, parts: bool, stop: bool) -> list[str]:
    whole = word.lower()[:MAX_TOKEN]
    got = [] if stop and whole in STOPWORDS else [whole]
    if parts and not word.isalpha() or (parts and not word.islower() and not word.isupper()):
        pieces = split_identifier(word)
        if pieces != [whole]:
            got += dict.fromkeys(pieces) if not stop else [p for p in dict.fromkeys(pieces) if p not in STOPWORDS]
    return got


def token_text(text: str) -> str:
    """The space-joined token string stored in an FTS5 column (``" ".join(tokens(text))``).

    The index build calls this on every line of every source file, so an ASCII text (nearly all
    code) takes a path with no Python work per word: one ``bytes.translate`` turns every byte that
    cannot be part of a ``WORD`` into a space, ``split`` cuts the runs, and each distinct run's
    token string comes from a cache (its ``WORD`` matches are those of the text at that place:
    a match never holds a byte the translation blanked, and the pattern looks behind nothing).
    A text with other characters takes that path for its ASCII lines (a match never spans a line
    break), ``tokens`` for the others."""
    if not text.isascii():
        if "\n" not in text:
            return " ".join(tokens(text))
        return " ".join(filter(None, map(_line_text, text.split("\n"))))
    runs = text.encode("ascii").translate(_RUN_BYTES).split()
    cache = _RUN_CACHE
    got = list(map(cache.get, runs))
    if None in got:
        if len(cache) > 200_000:
            cache.clear()
        words = _CACHE[(True, False)]  # ``tokens``' own loop, inline: a run's first sight costs one call less
        for i, run in enumerate(runs):
            if got[i] is None:
                out: list[str] = []
                for word in WORD.findall(run.decode("ascii")):
                    toks = words.get(word)
                    if toks is None:
                        toks = _word_tokens(word, True, False)
                        if len(words) > 200_000:
                            words.clear()
                        words[word] = toks
                    out += toks
                got[i] = cache[run] = " ".join(out)
    return " ".join(filter(None, got))


def _line_text(line: str) -> str:
    return token_text(line) if line.isascii() else " ".join(tokens(line))


# the ASCII bytes a WORD match can hold: letters, digits, `_` and the joiners `./-:`; every other byte is a space
_RUN_BYTES = bytes(c if (chr(c).isalnum() or chr(c) in "_./-:") and c < 128 else 32 for c in range(256))
_RUN_CACHE: dict[bytes, str] = {}


# camelCase and ACRONYMWord boundaries, undone by C-level substitutions (no Python loop per word)
_LOWER_UPPER = lazy(r"(?<=[a-z0-9])(?=[A-Z])")
_ACRONYM = lazy(r"(?<=[A-Z])(?=[A-Z][a-z])")
_ACRONYM_HINT = lazy(r"[A-Z][A-Z][a-z]")
_RUN = lazy(r"\w+")


def split_parts(text: str) -> str:
    """``text`` with every identifier broken into its parts (``getHTTPResponse_v2`` -> ``get HTTP Response v2``).

    Only `_` needs replacing: the FTS5 tokenizer already splits on `.`, `/`, `-`, `:`.
    """
    text = _LOWER_UPPER.sub(" ", text)
    if _ACRONYM_HINT.search(text):
        text = _ACRONYM.sub(" ", text)
    return text.replace("_", " ")


def index_extra(text: str) -> str:
    """The text to store beside ``text`` so identifier parts are searchable.

    FTS5 (unicode61, `_` a word character) already yields whole words and
    identifiers from the raw text (``bulk_create``, ``parsehttpresponse``); this
    column adds their parts (``bulk``, ``create``, ``parse``, ``http``, ``response``).
    Two C-level passes, no Python loop per word: bulk indexing stays fast.
    """
    return split_parts(text)


def query_terms(text: str, *, stop: bool = True) -> list[str]:
    """Terms to look up for a free-text query: plain words whole; compounds by the same parts as
    ``index_extra`` plus their whole (a search falls back to fewer terms when no document has them all)."""
    out: list[str] = []
    for word in WORD.findall(text):
        if word.isalnum() and (word.islower() or word.isupper() or word.istitle()):
            terms = [word.lower()]
        else:
            # the parts, and the identifier whole as FTS5 stored it from the raw text (`bulk_create`)
            terms = _RUN.findall(split_parts(word).lower()) + _RUN.findall(word.lower())
        out.extend(t for t in terms if not (stop and t in STOPWORDS))
    return list(dict.fromkeys(out))
