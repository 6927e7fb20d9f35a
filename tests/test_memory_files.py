"""Memory files: atomic, hash-checked, confined, bounded, and nothing written on bad input."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from brain.errors import Conflict, InvalidInput, NotFound, PathEscape, TooLarge
from brain.memory.files import MemoryStore, content_hash


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
            and "runtime" not in p.parts}


def test_write_read_roundtrip_and_hash(brain):
    doc = brain.write("notes/setup.md", "# Setup\n\nRun make.\n")
    again = brain.read("notes/setup.md")
    assert again.text == "# Setup\n\nRun make.\n"
    assert again.hash == doc.hash == content_hash(b"# Setup\n\nRun make.\n")


def test_stale_expected_hash_is_refused_and_keeps_newer_version(brain):
    first = brain.write("now.md", "v1\n")
    brain.write("now.md", "v2\n", expected_hash=first.hash)
    with pytest.raises(Conflict) as info:
        brain.write("now.md", "v3 from a stale reader\n", expected_hash=first.hash)
    assert info.value.path == "now.md"
    assert brain.read("now.md").text == "v2\n"


def test_expected_empty_hash_means_create_only(brain):
    brain.write("notes/new.md", "a\n", expected_hash="")
    with pytest.raises(Conflict):
        brain.write("notes/new.md", "b\n", expected_hash="")


@pytest.mark.parametrize("path", ["../escape.md", "/etc/passwd", "notes/../../x.md", "~/x.md", "notes\\..\\x",
                                  "", "a\x00b"])
def test_path_escapes_are_refused_and_nothing_written(brain, path):
    before = snapshot(brain.repo)
    with pytest.raises(InvalidInput):
        brain.write(path, "x\n")
    assert snapshot(brain.repo) == before


def test_symlink_out_of_the_brain_is_refused(brain, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, brain.dir / "notes" / "link")
    with pytest.raises(PathEscape):
        brain.write("notes/link/x.md", "x\n")
    assert not (outside / "x.md").exists()


def test_size_limits(brain):
    before = snapshot(brain.repo)
    with pytest.raises(TooLarge) as info:
        brain.write("now.md", "x" * (brain.settings["limits.now_bytes"] + 1))
    assert info.value.limit == brain.settings["limits.now_bytes"]
    with pytest.raises(TooLarge):
        brain.write("notes/big.md", "x" * (brain.settings["limits.write_bytes"] + 1))
    assert snapshot(brain.repo) == before


def test_nul_bytes_refused(brain):
    with pytest.raises(InvalidInput):
        brain.write("notes/bin.md", "a\x00b")


def test_runtime_is_not_memory(brain):
    with pytest.raises(InvalidInput):
        brain.write("runtime/brain.db", "x")


def test_missing_file(brain):
    with pytest.raises(NotFound):
        brain.read("notes/absent.md")


def test_named_targets(brain):
    assert brain.target_path("now") == "now.md"
    assert brain.target_path("note", "setup") == "notes/setup.md"
    assert brain.target_path("workflow", "release.md") == "workflows/release.md"
    for target, name in (("note", None), ("note", "a/b"), ("now", "x"), ("nope", None), ("note", "..")):
        with pytest.raises(InvalidInput):
            brain.target_path(target, name)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=300))
def test_any_text_roundtrips(tmp_path_factory, text):
    store = MemoryStore(tmp_path_factory.mktemp("store"))
    store.write("notes/x.md", text)
    assert store.read("notes/x.md").text == text
