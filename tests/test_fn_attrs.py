"""Shared attributes (``brain.search.fn_attrs``): methods of one class linked by the `self.x` they read or write."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.search.functions import python_functions
from conftest import git

REPORT = '''\
class Report:
    def __init__(self, rows):
        self.rows = rows
        self.title = "report"

    def values(self, *fields):
        clone = Report(self.rows)
        clone._fields = fields
        return clone

    def iterate(self):
        names = self._fields
        for row in self.rows:
            yield {name: row[name] for name in names}

    def count(self):
        return len(self.rows)

    def heading(self):
        return self.title.upper()

    @property
    def empty(self):
        return not self.rows

    def first(self):
        return None if self.empty else self.rows[0]
'''


@pytest.fixture
def report(brain):
    path = brain.repo / "kit" / "report.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    (brain.repo / "kit" / "__init__.py").write_text("")
    path.write_text(REPORT)
    git(brain.repo, "add", "-A")
    git(brain.repo, "commit", "-q", "-m", "a report")
    brain.reindex()
    return brain


def _hits(brain, text: str, weights=None) -> dict:
    from brain.search.rank_functions import locate_functions

    _, hits = locate_functions(brain, text, limit=20, weights=weights)
    return {h.key: h for h in hits}


def _attr_off():
    from brain.search.weights import shipped_weights

    return shipped_weights().replace(functions={"attr": 0.0})


def test_the_index_records_attribute_writes_apart_from_calls():
    defs = {d.qual: d for d in python_functions(REPORT)}
    assert ("_fields", "set") in {(c.name, c.via) for c in defs["Report.values"].calls}
    assert ("_fields", "self") in {(c.name, c.via) for c in defs["Report.iterate"].calls}
    assert ("rows", "set") in {(c.name, c.via) for c in defs["Report.__init__"].calls}


def test_a_method_reading_what_a_named_method_writes_ranks(report):
    text = "Report.values(): the fields chosen are ignored"
    hits = _hits(report, text)
    reader, other = "kit/report.py::Report.iterate", "kit/report.py::Report.heading"
    assert "shares `._fields` with `Report.values`" in hits[reader].reasons
    assert hits[reader].score > hits[other].score
    assert hits[reader].score < hits["kit/report.py::Report.values"].score  # never past the method it shares with
    off = _hits(report, text, _attr_off())
    assert off[reader].score < hits[reader].score


def test_a_rare_attribute_links_more_than_a_common_one_and_methods_are_not_attributes(report):
    from brain.search.fn_attrs import attr_link, find_attr_sharers
    from brain.search.function_evidence import LiveGraph
    from brain.search.functions import FunctionView
    from brain.search.service import boot_code_view
    from brain.search.weights import shipped_weights

    report.locate("Report")
    fview = FunctionView(report.index.db)
    graph = LiveGraph(fview, boot_code_view(report.index), shipped_weights().functions)
    rows = {r.qual: r for r in graph.in_file("kit/report.py")}
    F = shipped_weights().functions
    found = {r.qual: attr_link(shared, F) for r, shared in find_attr_sharers(fview, graph, rows["Report.values"], F)}
    # `_fields` is used by one other method, `rows` by five others: iterate is linked by both, count by `rows` only
    assert found["Report.iterate"][0] > found["Report.count"][0]
    assert found["Report.iterate"][1] == "_fields"
    # `self.empty` is a property of the class: a call (the call graph's), not a shared attribute
    first = {r.qual: shared for r, shared in find_attr_sharers(fview, graph, rows["Report.first"], F)}
    assert all("empty:" not in shared for shared in first.values())
    # a write is not a call: nothing calls `_fields`
    assert graph.callers(rows["Report.values"]) == []
    assert all(r.qual != "Report._fields" for r, _ in graph.callees(rows["Report.values"]))


def test_recorded_attribute_links_rank_the_same_without_the_index(report):
    from brain.search.function_evidence import FunctionEvidence
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import combine_functions, gather_functions
    from brain.search.service import boot_code_view

    text = "Report.values(): the fields chosen are ignored"
    found = report.locate(text)
    ev = gather_functions(FunctionView(report.index.db), boot_code_view(report.index), text, found)
    again = FunctionEvidence.from_json(ev.to_json())
    assert again.graph.attr_sharers_of
    live = [(h.key, h.score) for h in combine_functions(ev)]
    recorded = [(h.key, h.score) for h in combine_functions(again)]
    assert live == recorded and not again.graph.missing


def test_only_an_attribute_one_of_the_two_writes_links_them_and_only_from_a_named_method():
    from brain.search.fn_attrs import attr_link
    from brain.search.weights import shipped_weights

    F = shipped_weights().functions
    written = "_fields:2:1010"  # the top-ranked method writes it, the other reads it
    read_twice = "rows:6:0101"  # both only read it: a shared input, not a result
    assert attr_link(written, F) == (1.0, "_fields")
    assert attr_link(read_twice, F)[0] == 0.0
    assert attr_link(read_twice, {**F, "attr_data": 0})[0] == 0.2
    assert attr_link(f"{read_twice};{written}", F) == (1.0, "_fields")


def test_a_method_ranked_by_text_alone_lends_nothing(report):
    text = "the chosen fields are ignored when walking through the report"
    hits = _hits(report, text)
    assert all(not any(r.startswith("shares `") for r in h.reasons) for h in hits.values())
    from brain.search.weights import shipped_weights

    unnamed_too = _hits(report, text, shipped_weights().replace(functions={"attr_named": 0}))
    assert any(any(r.startswith("shares `") for r in h.reasons) for h in unnamed_too.values())
