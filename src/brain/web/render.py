"""Safe rendering for the human surface: markdown to sanitized HTML, highlighted search snippets.

Pure functions. Memory files are written by agents and may carry anything, so raw HTML
in markdown is never passed through: markdown-it runs with ``html`` disabled (a
``<script>`` in a note comes out as text), and its link validator refuses
``javascript:``/``vbscript:``/``data:`` targets. Snippets are escaped before the query
terms are wrapped in ``<mark>``.

Why big notes are bounded. markdown-it-py is pure Python and its inline pass costs about
2.5 microseconds a byte: a 100-400 KB note took 1.5-7 s to show on a busy machine (issue
20; bench/bench_web.py). So the first ``RENDER_MAX_BYTES`` of a text are rendered (cut at a
paragraph break), followed by a line saying how much was left out and a link to the raw
file; and every rendering is kept in a small cache keyed by the text's hash
(``RenderCache``: bounded in entries and in bytes), so a page shown again costs a lookup.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from functools import lru_cache

from markupsafe import Markup, escape

__all__ = ["render_markdown", "highlight", "terms_of", "RenderCache", "RENDER_CACHE", "RENDER_MAX_BYTES"]

RENDER_MAX_BYTES = 48 * 1024  # about 0.1 s of markdown-it on a busy machine


class RenderCache:
    """Rendered HTML by (sha256 of the text, raw link): least recently used out first, at most
    ``entries`` renderings and ``max_bytes`` bytes of HTML. Thread-safe (pages render in a thread pool)."""

    def __init__(self, entries: int = 256, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._held = 0
        self._items: OrderedDict[tuple[str, str | None], Markup] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key, html: Markup) -> None:
        size = len(html)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._held -= len(old)
            self._items[key] = html
            self._held += size
            while len(self._items) > self.entries or self._held > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._held -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = self.hits = self.misses = 0


RENDER_CACHE = RenderCache()


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md


def render_markdown(text: str, raw: str | None = None) -> Markup:
    """``text`` as HTML with any raw HTML shown as text; safe to place in a page.

    Above RENDER_MAX_BYTES only the head is rendered, then a note of what was left out, with a
    link to ``raw`` (the file as plain text) when given. Cached by the text's hash."""
    text = text or ""
    key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), raw)
    found = RENDER_CACHE.get(key)
    if found is not None:
        return found
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= RENDER_MAX_BYTES:
        html = Markup(_parser().render(text))
    else:
        head = _head(text, RENDER_MAX_BYTES)
        shown = len(head.encode("utf-8", "surrogatepass"))
        note = Markup('<p class="truncated">Only the first {0} KB of {1} KB are shown here.{2}</p>').format(
            shown // 1024, -(-size // 1024),
            Markup(' <a href="{0}">View the whole file as raw text</a>.').format(raw) if raw else "")
        html = Markup(_parser().render(head)) + note
    RENDER_CACHE.put(key, html)
    return html


def _head(text: str, limit: int) -> str:
    """The longest start of ``text`` within ``limit`` UTF-8 bytes that ends at a paragraph break (else a line
    break, else anywhere), so the rendered part does not stop inside a block."""
    head = text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")
    for mark in ("\n\n", "\n"):
        cut = head.rfind(mark)
        if cut > limit // 2:
            return head[:cut + 1]
    return head


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
