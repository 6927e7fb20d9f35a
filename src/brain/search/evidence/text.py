"""Evidence of the text's words: BM25 of the whole text and of the title, and quoted text found verbatim.

BM25 over the files' identifier tokens, relative to the best file, is the tie-breaker and the
fallback when the text names no code (``bm25``; inflected words also reach their stems);
the title alone says most (``bm25_title``), and its words no file writes as they are reach
their stems in a lighter pass (``bm25_title_stem``). Text the report quotes (a pasted message,
a usage line) found in a few files, as phrases of three words (``quote``, see ``quotes``).
"""

from __future__ import annotations

from collections import defaultdict

from ..quotes import phrase_windows
from ..tokenize import tokens

__all__ = ["collect", "quoted_evidence"]


def collect(task) -> None:
    view, sig, add, p = task.view, task.sig, task.add, task.params
    # (inflected words of the whole text reach their stems; the title's few words are taken as written, and those
    # the code never writes as they are reach their stems in a lighter pass of their own: `coloring` -> color*,
    # while `formatting`, written in a formatting library, stays itself)
    for words, feature, stems in ((sig.words, "bm25", p["stem_prefixes"]), (sig.title_words, "bm25_title", False),
                                  (sig.title_words, "bm25_title_stem", "only-absent")):
        ranked = view.bm25(words, 60, stems=stems, names_weight=p["names_weight"])
        if ranked:
            top = ranked[0][1] or 1.0
            for path, s in ranked:
                add(path, feature, s / top, "full-text match")
    quoted_evidence(view, sig.quoted, add, p)


def quoted_evidence(view, quoted: list[tuple[str, ...]], add, params: dict) -> None:
    """Each window of a quoted text's words is looked up as a phrase; a file holding windows that
    few files hold gets evidence ``sum(1 / files)``, its value growing linearly to 1 at ``quote_full``.
    The reason shows the longest stretch of a quote the file holds (overlapping matched windows)."""
    most, queries = params["quote_max_files"], params["quote_max_queries"]
    looked: dict[tuple[str, ...], list[str]] = {}
    evidence: dict[str, float] = defaultdict(float)
    held: dict[str, list[tuple[int, int, int]]] = defaultdict(list)  # file -> (quote, start, end) of its windows
    for q, words in enumerate(quoted):
        for start, window in phrase_windows(words):
            again = window in looked  # a window quoted twice counts once
            if not again:
                if len(looked) >= queries:
                    break
                looked[window] = view.phrase_files(tokens(" ".join(window)), most + 1)
            files = looked[window]
            if not files or len(files) > most:
                continue
            strength = 0.0 if again else params["quote_option"] if window[0].startswith("--") else 1.0
            for path in files:
                evidence[path] += strength / len(files)
                held[path].append((q, start, start + len(window)))
    for path, found in evidence.items():
        best, run = (0, 0, 0), None
        for q, lo, hi in sorted(held[path]):
            run = (q, run[1], max(run[2], hi)) if run and run[0] == q and lo <= run[2] else (q, lo, hi)
            if run[2] - run[1] > best[2] - best[1]:
                best = run
        shown = " ".join(quoted[best[0]][best[1] : best[2]])[:80]
        add(path, "quote", min(found, params["quote_full"]) / params["quote_full"], f"quoted text `{shown}` found here")
