"""Memory you can edit: `brain edit` (append, prepend, section, replace), `brain mv` rewriting [[links]],
`brain remember`, and `brain notes --stale`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import Conflict, InvalidInput, NotFound, TerritoryRefused
from brain.memory.edit import append, find_replace, prepend, replace_section, sections
from brain.search.graph import retarget_links, wiki_links


def cli(repo, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=60, input=stdin)


NOW = "# Now\n\n## Current step\nWriting tests.\n\n### Detail\nold detail\n\n## Next action\nShip.\n"


# -- the pure edits ---------------------------------------------------------------

def test_replace_section_keeps_the_heading_and_takes_subsections_with_it():
    out = replace_section(NOW, "current step", "Reviewing.\n").text
    assert out == "# Now\n\n## Current step\nReviewing.\n\n## Next action\nShip.\n"
    assert replace_section(NOW, "## Next action", "Merge.").text.endswith("## Next action\nMerge.\n")


def test_a_heading_inside_a_code_fence_is_no_section():
    text = "# T\n\n## Real\nbody\n\n```\n## Fake\n```\n"
    assert [s[2] for s in sections(text)] == ["T", "Real"]
    with pytest.raises(NotFound):
        replace_section(text, "Fake", "x")


def test_ambiguous_or_missing_sections_are_refused():
    with pytest.raises(InvalidInput) as info:
        replace_section("## A\n1\n## A\n2\n", "A", "x")
    assert info.value.field == "section"
    with pytest.raises(NotFound):
        replace_section(NOW, "Nowhere", "x")


def test_prepend_goes_after_front_matter_and_title():
    text = "---\ntitle: x\n---\n# Title\n\nBody.\n"
    assert prepend(text, "First.").text == "---\ntitle: x\n---\n# Title\n\nFirst.\n\nBody.\n"
    assert prepend("", "Only.").text == "Only.\n"
    assert append("a\n\n\n", "b").text == "a\nb\n"


def test_find_replace_counts_what_it_replaces():
    assert find_replace("a x a", "a", "b", expected=2).text == "b x b"
    with pytest.raises(InvalidInput) as info:
        find_replace("a x a", "a", "b")  # one expected, two there: never a guess
    assert info.value.field == "count"
    with pytest.raises(NotFound):
        find_replace("abc", "z", "y")
    assert find_replace("a a a", "a", "", expected=None).changes == 3


lines = st.lists(st.text(alphabet="ab #\n`x", max_size=12), max_size=8).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(text=lines, body=st.text(alphabet="xyz\n", max_size=20))
def test_replacing_a_section_leaves_everything_outside_it(text, body):
    found = sections(text)
    names = [s[2] for s in found]
    for start, _, title, end in found:
        if not title or names.count(title) != 1 or _fold(title, names):
            continue
        out = replace_section(text, title, body).text
        before = "\n".join(text.split("\n")[:start + 1])
        assert out.startswith(before)
        tail = [line for line in text.split("\n")[end:] if line.strip()]
        assert [line for line in out.split("\n") if line.strip()][-len(tail):] == tail if tail else True


def test_a_title_that_starts_with_a_hash_is_found_by_its_title():
    """Found by hypothesis: the line `# # x` heads the section titled `# x`, which `--section "# x"` names;
    the heading marks are stripped only when no title is the text as given."""
    text = "# Notes\n\n# # x\nold\n\n# x\nkept\n"
    out = replace_section(text, "# x", "new").text
    assert out == "# Notes\n\n# # x\nnew\n\n# x\nkept\n"
    assert replace_section("# x\nold\n", "# x", "new").text == "# x\nnew\n"  # the usual spelling still works


def _fold(title, names):
    return sum(n.casefold() == title.casefold() for n in names) > 1


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=60), old=st.text(min_size=1, max_size=3), new=st.text(max_size=3))
def test_find_replace_is_str_replace_when_the_count_matches(text, old, new):
    n = text.count(old)
    if n:
        assert find_replace(text, old, new, expected=n).text == text.replace(old, new)


# -- through the brain ------------------------------------------------------------

def test_edit_is_atomic_over_the_version_read(brain):
    doc = brain.write("notes/a.md", "# A\n\n## Log\nfirst\n")
    edited, changes = brain.edit("notes/a.md", "append", value="- second", expected_hash=doc.hash[:12])
    assert changes == 1 and brain.read("notes/a.md").text.endswith("first\n- second\n")
    with pytest.raises(Conflict):  # the hash read before the append is no longer the file's
        brain.edit("notes/a.md", "section", heading="Log", value="x", expected_hash=doc.hash)
    assert brain.read("notes/a.md").hash == edited.hash  # nothing written by the refused edit
    with pytest.raises(NotFound):
        brain.edit("notes/missing.md", "replace", value="a", new="b")
    created, _ = brain.edit("notes/new.md", "append", value="# New")
    assert brain.read("notes/new.md").text == "# New\n" and created.hash


def test_edit_applies_territories_and_redaction(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nterritories:\n  workflows/**: ops\n")
    import brain as brainlib

    b = brainlib.open(brain.repo)
    b.write("workflows/deploy.md", "# Deploy\n")
    with pytest.raises(TerritoryRefused):
        b.edit("workflows/deploy.md", "append", value="- by a coder", role="coder")
    assert b.read("workflows/deploy.md").text == "# Deploy\n"
    b.edit("workflows/deploy.md", "append", value="- by ops", role="ops")
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    doc, _ = b.edit("workflows/deploy.md", "append", value=f"- key {key}", role="ops")
    assert key not in b.read("workflows/deploy.md").text and doc.redacted


def test_cli_edit_each_operation(brain):
    repo = brain.repo
    out = cli(repo, "edit", "now.md", "--section", "Next action", "--text", "Review the edit command.", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["operation"] == "section" and data["path"] == "now.md"
    assert "## Next action\nReview the edit command.\n" in brain.read("now.md").text
    assert cli(repo, "edit", "now.md", "--append", "-", stdin="- from stdin\n").returncode == 0
    assert brain.read("now.md").text.endswith("- from stdin\n")
    out = cli(repo, "edit", "now.md", "--replace", "Review", "--with", "Ship", "--expect", data["hash"][:12])
    assert out.returncode == Conflict.exit_code  # the stdin append changed it since
    assert cli(repo, "edit", "now.md", "--replace", "Review", "--with", "Ship").returncode == 0
    assert "Ship the edit command." in brain.read("now.md").text
    missing = cli(repo, "edit", "now.md", "--section", "Next action")
    assert missing.returncode == InvalidInput.exit_code and "--text" in missing.stderr
    assert cli(repo, "edit", "--help").returncode == 0


def test_mv_rewrites_the_links_that_pointed_at_the_old_path(brain):
    brain.write("notes/glossary.md", "# Glossary\n")
    brain.write("notes/setup.md", "See [[glossary]], [[notes/glossary|terms]], [[glossary#fence]] and [[other]].\n")
    brain.write("workflows/deploy.md", "Terms: [[notes/glossary.md]].\n")
    brain.index.refresh()
    data = brain.move("notes/glossary.md", "notes/terms.md")
    assert sorted(data["links_rewritten"]) == ["notes/setup.md", "workflows/deploy.md"] and not data["links_left"]
    assert brain.read("notes/setup.md").text == \
        "See [[terms]], [[notes/terms|terms]], [[terms#fence]] and [[other]].\n"
    assert brain.read("workflows/deploy.md").text == "Terms: [[notes/terms.md]].\n"
    kept = cli(brain.repo, "mv", "notes/terms.md", "notes/words.md", "--no-links", "--json")
    assert kept.returncode == 0 and json.loads(kept.stdout)["links_rewritten"] == []
    assert "[[terms]]" in brain.read("notes/setup.md").text


def test_mv_keeps_the_move_when_a_linking_file_is_out_of_the_movers_territory(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nterritories:\n  workflows/**: ops\n")
    import brain as brainlib

    b = brainlib.open(brain.repo)
    b.write("notes/glossary.md", "# Glossary\n")
    b.write("workflows/deploy.md", "Terms: [[glossary]].\n")
    b.index.refresh()
    data = b.move("notes/glossary.md", "notes/terms.md", role="coder")
    assert data["links_left"][0]["path"] == "workflows/deploy.md"
    assert data["links_left"][0]["error"] == TerritoryRefused.kind
    assert b.read("notes/terms.md").text == "# Glossary\n"


def test_retarget_links_uses_the_path_when_the_new_name_is_taken():
    paths = {"notes/a.md", "workflows/b.md"}
    text, n = retarget_links("[[a]] and [[a|label]]", "notes/a.md", "notes/b.md", paths)
    assert n == 2 and wiki_links(text) == ["notes/b"]  # `b` is also workflows/b.md: the path
    text, n = retarget_links("[[x]]", "notes/a.md", "notes/c.md", paths)
    assert n == 0 and text == "[[x]]"


def test_remember_files_into_the_note_about_it_else_the_inbox(brain):
    brain.write("notes/deploy.md", "# Deploy\n\nHow the staging deploy works.\n")
    out = cli(brain.repo, "remember", "the", "staging", "deploy", "runs", "every", "Sunday", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["path"] == "notes/deploy.md"
    assert brain.read("notes/deploy.md").text.endswith("- the staging deploy runs every Sunday\n")
    data = brain.remember("lunch is at noon")
    assert data["path"] == "notes/inbox.md"
    inbox = brain.read("notes/inbox.md").text
    assert inbox.startswith("# Inbox") and inbox.endswith("- lunch is at noon\n")
    brain.remember("the coffee machine was fixed")
    assert brain.read("notes/inbox.md").text.count("\n- ") == 2
    for bad in ("", "two\nlines", "x" * 600):
        with pytest.raises(InvalidInput):
            brain.remember(bad)


def test_notes_stale_lists_unused_and_vanished(brain):
    (brain.repo / "app.py").write_text("def parse_args():\n    return 1\n\n\nclass SearchIndex:\n    pass\n")
    brain.index.refresh()
    brain.write("notes/old.md", "# Old\n\nNothing uses this.\n")
    brain.write("notes/used.md", "# Used\n\nRead often.\n")
    brain.write("notes/code.md", "# Code\n\nCall `parse_args()` then `render_card()`; see `SearchIndex`, `GoneThing`.\n")
    long_ago = time.time() - 200 * 86400
    for name in ("old", "used", "code"):
        os.utime(brain.dir / "notes" / f"{name}.md", (long_ago, long_ago))
    assert cli(brain.repo, "read", "notes/used.md").returncode == 0  # a read is a use
    out = cli(brain.repo, "notes", "--stale", "--days", "30", "--json")
    assert out.returncode == 0, out.stderr
    stale = {n["path"]: n for n in json.loads(out.stdout)["stale"]}
    assert "notes/old.md" in stale and "notes/used.md" not in stale
    assert stale["notes/code.md"]["missing_names"] == ["render_card", "GoneThing"]
    assert (brain.dir / "notes/old.md").exists()  # listed, never deleted
    brain.boot()  # a boot injects now.md and focus.md: never stale
    assert not {"now.md", "focus.md"} & set(stale)
    assert cli(brain.repo, "notes", "--stale", "--days", "0").returncode == InvalidInput.exit_code
