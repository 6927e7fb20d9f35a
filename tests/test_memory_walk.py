"""The memory walk of a refresh: the fast name check agrees with the full one; a no-op takes no write lock."""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata
from pathlib import Path

from hypothesis import given, strategies as st

import brain as brainlib
from brain.memory.paths import _BAD_CATEGORIES, _bad_character
from brain.search import memory_walk


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


# -- the kept listing: an unchanged folder is not read again, its files still stat'ed ----------------------

def docs(brain) -> dict[str, str]:
    return dict(brain.index.db.execute("SELECT path, hash FROM docs"))


def kept(brain) -> dict:
    row = brain.index.db.execute("SELECT value FROM meta WHERE key='memory_listing'").fetchone()
    return json.loads(row[0]) if row else {}


def settle(brain, folder: Path, old_ns: int) -> None:
    """Date the folder back (its mtime; its ctime is now) and refresh, so its listing is kept and reused."""
    os.utime(folder, ns=(old_ns, old_ns))
    brain.reindex(code=False)
    assert kept(brain)[str(folder)][2] == old_ns


def test_an_edit_an_add_a_delete_and_a_rename_are_noticed_with_the_listing_kept(brain, monkeypatch):
    monkeypatch.setattr(memory_walk, "RACY_NS", -10**15)  # every folder counts as settled: listings are kept
    notes = brain.dir / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "alpha.md").write_text("# alpha\n\nfirst words\n")
    (notes / "beta.md").write_text("# beta\n\nsecond words\n")
    settle(brain, notes, 1_600_000_000 * 10**9)
    assert {"notes/alpha.md", "notes/beta.md"} <= docs(brain).keys()
    listed = []  # every folder the walk reads again, by the names it found there
    real_list = memory_walk._list
    monkeypatch.setattr(memory_walk, "_list", lambda *a: listed.append(real_list(*a)) or listed[-1])

    before = os.stat(notes)
    with open(notes / "alpha.md", "r+") as f:  # an edit in place: the folder's stamps do not move
        f.write("# alpha\n\nzeppelin words rewritten in place\n")
    after = os.stat(notes)
    assert (after.st_ctime_ns, after.st_mtime_ns) == (before.st_ctime_ns, before.st_mtime_ns)
    stats = brain.reindex(code=False)
    assert stats["memory"]["changed"] == 1
    assert not [names for _, names in listed if "alpha.md" in names]  # notes/ was not read again
    assert [h["path"] for h in brain.search("zeppelin")] == ["notes/alpha.md"]

    settle(brain, notes, 1_600_000_001 * 10**9)
    (notes / "gamma.md").write_text("# gamma\n\nquokka arrives\n")  # an add
    assert brain.reindex(code=False)["memory"]["changed"] == 1
    assert [h["path"] for h in brain.search("quokka")] == ["notes/gamma.md"]

    settle(brain, notes, 1_600_000_002 * 10**9)
    (notes / "beta.md").unlink()  # a delete
    assert brain.reindex(code=False)["memory"]["removed"] == 1
    assert "notes/beta.md" not in docs(brain)

    settle(brain, notes, 1_600_000_003 * 10**9)
    (notes / "gamma.md").rename(notes / "delta.md")  # a rename
    stats = brain.reindex(code=False)["memory"]
    assert (stats["changed"], stats["removed"]) == (1, 1)
    assert [h["path"] for h in brain.search("quokka")] == ["notes/delta.md"]

    settle(brain, notes, 1_600_000_004 * 10**9)
    (notes / "sub").mkdir()  # a new folder, and a note in it
    (notes / "sub" / "epsilon.md").write_text("# epsilon\n\nwombat\n")
    assert brain.reindex(code=False)["memory"]["changed"] == 1
    assert [h["path"] for h in brain.search("wombat")] == ["notes/sub/epsilon.md"]

    fresh = brainlib.open(brain.repo)  # the same documents as a walk that keeps nothing
    fresh.index.db.execute("DELETE FROM meta WHERE key='memory_listing'")
    assert fresh.reindex(code=False)["memory"]["changed"] == 0 and docs(fresh) == docs(brain)


def test_a_folder_changed_within_the_racy_window_is_listed_again(brain, monkeypatch):
    notes = brain.dir / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# a\n")
    st = os.stat(notes)
    newest = max(st.st_ctime_ns, st.st_mtime_ns)
    monkeypatch.setattr(memory_walk.time, "time_ns", lambda: newest + memory_walk.RACY_NS)  # just inside
    brain.reindex(code=False)
    assert str(notes) not in kept(brain)
    monkeypatch.setattr(memory_walk.time, "time_ns", lambda: newest + memory_walk.RACY_NS + 1)  # just outside
    brain.reindex(code=False)
    assert kept(brain)[str(notes)][:3] == [st.st_ino, st.st_ctime_ns, st.st_mtime_ns]


def test_a_folder_replaced_by_a_link_is_not_read_through_its_kept_listing(brain, monkeypatch, tmp_path):
    monkeypatch.setattr(memory_walk, "RACY_NS", -10**15)
    notes = brain.dir / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# a\n\nkestrel\n")
    brain.reindex(code=False)
    assert str(notes) in kept(brain)
    outside = tmp_path / "outside"
    notes.rename(outside)
    notes.symlink_to(outside, target_is_directory=True)
    brain.reindex(code=False)
    assert "notes/a.md" not in docs(brain) and brain.search("kestrel") == []


def test_a_write_through_the_library_is_not_hidden_by_the_kept_stamps(brain, monkeypatch):
    """The walk matching the kept stamps proves nothing once the index's own stamps moved: a note indexed
    through the library, then put back on disk as it was (same size, same mtime), is read again."""
    monkeypatch.setattr(memory_walk, "RACY_NS", -10**15)
    notes = brain.dir / "notes"
    notes.mkdir(exist_ok=True)
    path = notes / "a.md"
    path.write_text("# a\n\nplatypus\n")
    os.utime(path, ns=(1_600_000_000 * 10**9,) * 2)
    brain.reindex(code=False)
    brain.reindex(code=False)
    assert brain.index.db.execute("SELECT value FROM meta WHERE key='memory_listing_exact'").fetchone() == ("1",)
    path.write_text("# a\n\nnarwhal\n")  # in place (the folder's stamps stay), indexed through the library
    brain.index.update_memory("notes/a.md")
    assert [h["path"] for h in brain.search("narwhal")] == ["notes/a.md"]
    path.write_text("# a\n\nplatypus\n")  # the old text back in place, with its old stamps
    os.utime(path, ns=(1_600_000_000 * 10**9,) * 2)
    brain.reindex(code=False)
    assert [h["path"] for h in brain.search("platypus")] == ["notes/a.md"] and brain.search("narwhal") == []
