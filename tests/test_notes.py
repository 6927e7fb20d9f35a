"""Notes you can manage: `brain notes`, `brain rm`, `brain mv` (CLI and MCP), and [[wiki links]] in the graph."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import Conflict, InvalidInput, NotFound, TerritoryRefused
from brain.search.graph import resolve_link, wiki_links


def cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, timeout=60)


@pytest.fixture
def noted(brain):
    brain.write("notes/setup.md", "# Setting up the dev box\n\nInstall uv. See [[deploy]] and [[notes/glossary|terms]].\n")
    brain.write("notes/glossary.md", "# Glossary\n\nfence: a monotonic claim number.\n")
    brain.write("workflows/deploy.md", "# Deploy\n\n1. tag\n2. push\nBefore: [[setup]].\n")
    brain.write("modules/core.md", "# Module core\n")
    return brain


def test_notes_lists_titles_and_sizes(noted):
    out = cli(noted.repo, "notes", "--json")
    assert out.returncode == 0, out.stderr
    notes = {n["path"]: n for n in json.loads(out.stdout)["notes"]}
    assert notes["notes/setup.md"]["title"] == "Setting up the dev box"
    assert notes["notes/setup.md"]["bytes"] == (noted.dir / "notes/setup.md").stat().st_size
    assert notes["workflows/deploy.md"]["title"] == "Deploy" and "now.md" in notes
    assert "modules/core.md" not in notes
    everything = {n["path"] for n in json.loads(cli(noted.repo, "notes", "--all", "--json").stdout)["notes"]}
    assert "modules/core.md" in everything
    text = cli(noted.repo, "notes").stdout
    assert re.search(r"notes/glossary\.md +\d+ bytes +Glossary", text)


def test_rm_deletes_with_expect_and_keeps_the_index_right(noted):
    assert cli(noted.repo, "index").returncode == 0
    assert any(h["path"] == "notes/glossary.md" for h in noted.search("monotonic claim"))
    out = cli(noted.repo, "rm", "notes/glossary.md", "--expect", "0" * 16)
    assert out.returncode == Conflict.exit_code and (noted.dir / "notes/glossary.md").exists()
    digest = noted.read("notes/glossary.md").hash
    out = cli(noted.repo, "rm", "notes/glossary.md", "--expect", digest[:12], "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"removed": "notes/glossary.md", "linked_from": ["notes/setup.md"]}
    assert not (noted.dir / "notes/glossary.md").exists()
    assert not any(h["path"] == "notes/glossary.md" for h in noted.search("monotonic claim"))
    assert cli(noted.repo, "rm", "notes/glossary.md").returncode == NotFound.exit_code


@pytest.mark.parametrize("path", ["now.md", "focus.md", "runtime/brain.db", "../README.md", "/etc/passwd",
                                  "brain.yml"])
def test_rm_and_mv_refuse_what_is_not_a_note(noted, path):
    out = cli(noted.repo, "rm", path)
    assert out.returncode in (InvalidInput.exit_code, NotFound.exit_code) and "Traceback" not in out.stderr
    out = cli(noted.repo, "mv", path, "notes/x.md")
    assert out.returncode in (InvalidInput.exit_code, NotFound.exit_code) and "Traceback" not in out.stderr
    assert (noted.repo / "README.md").exists() and (noted.dir / "now.md").exists()
    assert not (noted.dir / "notes/x.md").exists()


def test_mv_renames_follows_the_index_and_refuses_an_existing_destination(noted):
    assert cli(noted.repo, "index").returncode == 0
    out = cli(noted.repo, "mv", "notes/glossary.md", "notes/terms.md", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["to"] == "notes/terms.md" and data["linked_from"] == ["notes/setup.md"]
    assert noted.read("notes/terms.md").text.startswith("# Glossary")
    hits = [h["path"] for h in noted.search("monotonic claim")]
    assert "notes/terms.md" in hits and "notes/glossary.md" not in hits
    before = noted.read("notes/setup.md").text
    out = cli(noted.repo, "mv", "notes/terms.md", "notes/setup.md")
    assert out.returncode == Conflict.exit_code
    assert noted.read("notes/setup.md").text == before and (noted.dir / "notes/terms.md").exists()
    out = cli(noted.repo, "mv", "notes/terms.md", "notes/t2.md", "--expect", "f" * 16)
    assert out.returncode == Conflict.exit_code and not (noted.dir / "notes/t2.md").exists()


def test_territories_are_checked_on_both_paths(noted):
    (noted.dir / "brain.yml").write_text("version: 1\nterritories:\n  workflows/**: ops\n")
    import brain as brainlib

    b = brainlib.open(noted.repo)
    with pytest.raises(TerritoryRefused):
        b.move("notes/glossary.md", "workflows/glossary.md", role="dev")
    with pytest.raises(TerritoryRefused):
        b.remove("workflows/deploy.md", role="dev")
    assert (b.dir / "notes/glossary.md").exists() and (b.dir / "workflows/deploy.md").exists()
    assert not (b.dir / "workflows/glossary.md").exists()
    b.move("notes/glossary.md", "workflows/glossary.md", role="ops")
    assert (b.dir / "workflows/glossary.md").exists()


def test_a_source_changed_during_the_move_is_not_duplicated(noted, monkeypatch):
    from brain.memory.files import MemoryStore

    real_delete = MemoryStore.delete

    def racing_delete(self, rel, *, expected_hash=None):
        if rel == "notes/glossary.md":  # someone writes the source between our read and our delete
            self.write(rel, "# Glossary\n\nchanged meanwhile\n")
        return real_delete(self, rel, expected_hash=expected_hash)

    monkeypatch.setattr(MemoryStore, "delete", racing_delete)
    with pytest.raises(Conflict):
        noted.move("notes/glossary.md", "notes/terms.md")
    assert not (noted.dir / "notes/terms.md").exists()
    assert "changed meanwhile" in noted.read("notes/glossary.md").text


def test_mcp_tools_list_move_and_delete(noted):
    pytest.importorskip("mcp")
    from mcp import Client

    from brain.mcp.server import build_server

    async def main():
        with anyio.fail_after(60):
            async with Client(build_server(noted, transport="http")) as client:
                listed = await client.call_tool("brain_notes", {})
                moved = await client.call_tool("brain_move", {"path": "notes/glossary.md", "to": "notes/terms.md"})
                refused = await client.call_tool("brain_delete", {"path": "now.md"})
                deleted = await client.call_tool("brain_delete", {"path": "notes/terms.md",
                                                                   "expected_hash": moved.structured_content["hash"]})
                return listed, moved, refused, deleted

    listed, moved, refused, deleted = anyio.run(main)
    glossary = "# Glossary\n\nfence: a monotonic claim number.\n"
    assert {"path": "notes/glossary.md", "title": "Glossary", "bytes": len(glossary)} in listed.structured_content["notes"]
    assert not moved.is_error and moved.structured_content["to"] == "notes/terms.md"
    assert refused.is_error and refused.structured_content["error"] == "invalid_input"
    assert not deleted.is_error and not (noted.dir / "notes/terms.md").exists()


# -- [[wiki links]] -------------------------------------------------------------------------------------------
def test_related_shows_wiki_links_both_ways(noted):
    assert cli(noted.repo, "index").returncode == 0
    out = cli(noted.repo, "related", "notes/setup.md", "--json")
    assert out.returncode == 0, out.stderr
    related = json.loads(out.stdout)["related"]
    assert {i["node"] for i in related["links"]} == {"memory:workflows/deploy.md", "memory:notes/glossary.md"}
    assert {i["node"] for i in related["links (from)"]} == {"memory:workflows/deploy.md"}
    by_name = json.loads(cli(noted.repo, "related", "glossary", "--json").stdout)["related"]
    assert [i["node"] for i in by_name["links (from)"]] == ["memory:notes/setup.md"]
    # a write that adds a link updates the graph at once
    noted.write("notes/glossary.md", "# Glossary\n\nfence: a monotonic claim number. Used in [[deploy]].\n")
    again = json.loads(cli(noted.repo, "related", "workflows/deploy.md", "--json").stdout)["related"]
    assert "memory:notes/glossary.md" in {i["node"] for i in again["links (from)"]}


def test_the_boot_search_slot_follows_links_one_hop(noted):
    assert cli(noted.repo, "index").returncode == 0
    text = noted.boot("set up the dev box with uv", record=False).text
    assert "`notes/setup.md`" in text
    assert "`notes/glossary.md` (linked to `notes/setup.md`)" in text


def test_link_resolution():
    paths = {"notes/setup.md", "workflows/deploy.md", "notes/deploy.md", "decisions/0003-use-sqlite.md"}
    by_stem = {"setup": ["notes/setup.md"], "deploy": ["notes/deploy.md", "workflows/deploy.md"],
               "0003-use-sqlite": ["decisions/0003-use-sqlite.md"]}
    assert resolve_link("workflows/deploy", paths, by_stem) == "workflows/deploy.md"
    assert resolve_link("deploy", paths, by_stem) == "notes/deploy.md"  # notes/ first
    assert resolve_link("decisions/0003-use-sqlite.md", paths, by_stem) == "decisions/0003-use-sqlite.md"
    assert resolve_link("missing", paths, by_stem) is None
    assert wiki_links("a [[x]] b [[y|label]] [[z#part]] [[x]] [[]] [[bad\nline]]") == ["x", "y", "z"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("[]|#ab/\n .-"), max_size=300))
def test_wiki_link_parser_properties(text):
    links = wiki_links(text)
    assert len(links) == len(set(links))
    for target in links:
        assert f"[[{target}" in text.replace("[[ ", "[[") or target in text
        assert "[" not in target and "]" not in target and "\n" not in target and "|" not in target
