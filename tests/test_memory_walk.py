"""The memory walk of a refresh: the fast name check agrees with the full one; a no-op takes no write lock."""

from __future__ import annotations

import sqlite3
import unicodedata

from hypothesis import given, strategies as st

from brain.memory.paths import _BAD_CATEGORIES, _bad_character


def slow_bad_character(name: str) -> str | None:
    for ch in name:
        code = ord(ch)
        if unicodedata.category(ch) in _BAD_CATEGORIES or 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE:
            return f"U+{code:04X}"
    return None


@given(st.text(max_size=40) | st.text(st.characters(max_codepoint=0x7F), max_size=40))
def test_the_printable_ascii_shortcut_agrees_with_every_character_checked(name):
    assert _bad_character(name) == slow_bad_character(name)


def test_a_no_op_refresh_of_the_memory_takes_no_write_lock(brain):
    for i in range(5):
        brain.write(f"notes/n{i}.md", f"# {i}\n\nsee [[n{(i + 1) % 5}]]\n")
    brain.reindex()
    other = sqlite3.connect(brain.index.path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock the whole time
        stats = brain.index.refresh(code=False)
        assert stats["memory"]["changed"] == 0 and stats["graph"]["work"] == "none"
    finally:
        other.execute("ROLLBACK")
        other.close()
