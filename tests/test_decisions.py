"""Decision records: parsing layouts, lifecycle, supersession chains, index, filters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.decisions import load_decisions, new_decision, parse_record, render_index
from brain.errors import InvalidInput, NotFound


def test_parse_common_layouts():
    a = parse_record("# 7. Use Postgres\n\n- Status: accepted\n- Modules: coord, backends\n- Date: 2026-01-02\n", "0007-use-postgres.md", "d/0007.md")
    assert (a.number, a.title, a.status, a.modules, a.date) == (7, "Use Postgres", "accepted", ["coord", "backends"], "2026-01-02")
    b = parse_record("---\nstatus: superseded by 9\nmodules: [x]\n---\n# Old way\n", "0003-old.md", "d/0003.md")
    assert (b.status, b.superseded_by, b.modules, b.title) == ("superseded", 9, ["x"], "Old way")
    c = parse_record("# 2. Record architecture decisions\n\nDate: 2020\n\n## Status\n\nAccepted\n\n## Context\n", "0002-record.md", "p")
    assert c.status == "accepted"
    d = parse_record("ADR 0293\n\n  • Status: proposto\n", "0293-memoria.md", "p")
    assert d.status == "proposed" and d.title == "memoria"
    assert parse_record("# x", "notes.md", "p") is None


@given(st.text())
def test_parser_never_raises(text):
    record = parse_record(text, "0001-x.md", "p")
    assert record.number == 1 and record.status in ("proposed", "accepted", "rejected", "deprecated", "superseded")


def test_lifecycle_chain_and_index(brain):
    one = new_decision(brain, "Store cards in git", modules=["cards"], today="2026-11-30")
    assert "- Date: 2026-11-30" in (brain.repo / one["path"]).read_text()
    assert one["status"] == "proposed" and one["path"] == ".brain/decisions/0001-store-cards-in-git.md"
    brain.set_decision_status(1, "accepted")
    brain.new_decision("Store cards in SQLite", supersedes=1)
    brain.new_decision("Store cards in markdown again", supersedes="0002", modules=["cards"])
    records = {r.number: r for r in load_decisions(brain)}
    assert records[1].status == "superseded" and records[1].superseded_by == 2 and records[1].current == 3
    assert records[3].current == 3 and records[3].active
    index = (brain.dir / "decisions.md").read_text()
    assert "- 0001 [superseded by 0002 → 0003] Store cards in git — modules: cards" in index
    assert "- 0003 [proposed] Store cards in markdown again" in index
    assert [d["number"] for d in brain.decisions()] == [3]
    assert [d["number"] for d in brain.decisions(include_inactive=True)] == [1, 2, 3]
    assert [d["number"] for d in brain.decisions(query="sqlite")] == [2]
    assert [d["number"] for d in brain.decisions(module="cards/render")] == [3]
    with pytest.raises(NotFound):
        brain.new_decision("x", supersedes=99)
    with pytest.raises(InvalidInput):
        brain.new_decision("two\nlines")
    with pytest.raises(InvalidInput):
        brain.set_decision_status(3, "superseded")


def test_cycles_and_missing_successors_are_reported(brain):
    folder = brain.dir / "decisions"
    (folder / "0001-a.md").write_text("# A\n- Status: superseded by 2\n")
    (folder / "0002-b.md").write_text("# B\n- Status: superseded by 1\n")
    (folder / "0003-c.md").write_text("# C\n- Status: superseded by 8\n")
    records = {r.number: r for r in load_decisions(brain)}
    assert records[1].chain_error == "supersession cycle" and records[1].current is None
    assert records[3].chain_error.startswith("successor 0008")
    assert "0003 [superseded by 0008]" in render_index(list(records.values()))


def test_configured_folder(brain):
    (brain.dir / "brain.yml").write_text("version: 1\ndecisions:\n  dir: docs/adr\n")
    import brain as brainlib

    b = brainlib.open(brain.repo)
    rec = b.new_decision("Use ADR folder")
    assert rec["path"] == "docs/adr/0001-use-adr-folder.md" and (brain.repo / rec["path"]).is_file()
    assert "0001 [proposed] Use ADR folder" in (brain.dir / "decisions.md").read_text()


def test_map_keeps_the_index_in_step_with_hand_written_records(brain):
    (brain.dir / "decisions" / "0001-by-hand.md").write_text("# 1. Written by hand\n\n- Status: accepted\n")
    check = brain.map(check=True)
    assert check.decisions_index == "stale" and not check.ok
    assert brain.map().decisions_index == "rewritten"
    assert "- 0001 [accepted] Written by hand" in (brain.dir / "decisions.md").read_text()
    assert brain.map(check=True).ok


def test_hand_kept_index_without_records_is_left_alone(brain):
    (brain.dir / "decisions.md").write_text("# Decisions\n\n- 0001 accepted: use SQLite\n")
    assert brain.map().decisions_index == "current"
    assert [d["line"] for d in brain.decisions(query="sqlite")] == ["- 0001 accepted: use SQLite"]
