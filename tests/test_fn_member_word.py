"""`member_word`: of a class the task names, the methods whose name parts are words of the task.

Why: on Django a report about `KeyTransformIsNull` "on SQLite and Oracle" is fixed in its `as_sqlite` and
`as_oracle`; the `member` evidence spreads the class's name evenly over all its methods. Shipped at weight 0
(decision 0069: a Django gain, a held-out loss); these tests pin what the gathering records and that the weight
moves the ranking when set."""

from __future__ import annotations

from test_functions import kinds  # noqa: F401  (fixture)


def test_name_share_counts_the_parts_of_three_letters_or_more():
    from brain.search.rank_functions import _name_share

    assert _name_share("as_sqlite", {"sqlite", "oracle"}) == 1.0  # `as` is too short to count
    assert _name_share("base_url", {"base"}) == 0.5
    assert _name_share("fetchPage", {"page"}) == 0.5
    assert _name_share("as_sql", {"sqlite"}) == 0.0
    assert _name_share("__eq__", {"eq"}) == 0.0


def test_the_method_the_words_name_gets_the_evidence_and_ranks_first_when_weighed(kinds):
    from brain.search.functions import FunctionView
    from brain.search.rank_functions import combine_functions, gather_functions
    from brain.search.service import boot_code_view
    from brain.search.weights import shipped_weights

    text = "StaticMixin gives the wrong base url behind a proxy"
    found = kinds.locate(text)
    ev = gather_functions(FunctionView(kinds.index.db), boot_code_view(kinds.index), text, found)
    by_qual = {ev.rows[i].qual: d.reasons for i, d in ev.defs.items()}
    words = {q: [r for r in reasons if r[0] == "member_word"] for q, reasons in by_qual.items()}
    member = {q: [r for r in reasons if r[0] == "member"] for q, reasons in by_qual.items()}
    assert words["StaticMixin.base_url"] and words["StaticMixin.base_url"][0][1] == member["StaticMixin.base_url"][0][1]
    assert not words.get("StaticMixin.fetch_page") and member["StaticMixin.fetch_page"]
    weights = shipped_weights()
    assert weights.functions["member_word"] == 0.0  # shipped off
    on = {h.qual: h.score for h in combine_functions(ev, weights.replace(functions={"member_word": 0.8}))}
    off = {h.qual: h.score for h in combine_functions(ev, weights)}
    assert on["StaticMixin.base_url"] > off["StaticMixin.base_url"]  # lifted by what the words name
    assert on["StaticMixin.fetch_page"] == off["StaticMixin.fetch_page"]  # a method they do not name is not
