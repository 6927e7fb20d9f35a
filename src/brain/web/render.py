"""Safe rendering for the human surface: markdown to sanitized HTML, highlighted search snippets.

Pure functions. Memory files are written by agents and may carry anything, so raw HTML
in markdown is never passed through: markdown-it runs with ``html`` disabled (a
``<script>`` in a note comes out as text), and its link validator refuses
``javascript:``/``vbscript:``/``data:`` targets. Snippets are escaped before the query
terms are wrapped in ``<mark>``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape

__all__ = ["render_markdown", "highlight", "terms_of"]


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md


def render_markdown(text: str) -> Markup:
    """``text`` as HTML with any raw HTML shown as text; safe to place in a page."""
    return Markup(_parser().render(text or ""))


def terms_of(query: str) -> list[str]:
    """The words of a search query worth highlighting (the index's own query terms, plus the raw words)."""
    from ..search.tokenize import query_terms

    words = {w.lower() for w in re.findall(r"\w+", query or "") if len(w) > 1}
    words.update(t for t in query_terms(query or "") if len(t) > 1)
    return sorted(words, key=lambda w: (-len(w), w))


def highlight(text: str, terms: list[str]) -> Markup:
    """``text`` escaped, with every case-insensitive occurrence of a term wrapped in <mark>."""
    text = text or ""
    if not terms:
        return Markup(escape(text))
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    out, last = [], 0
    for m in pattern.finditer(text):
        out.append(escape(text[last:m.start()]))
        out.append(Markup("<mark>") + escape(m.group(0)) + Markup("</mark>"))
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)
