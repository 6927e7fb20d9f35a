"""The function ranking split into gather (evidence at unit weight) and combine (weights applied).

Why: so the function weights can be fitted like the file weights. The split must rank exactly as the
ranking did before it: the golden rankings below were recorded from the unsplit code (same fixtures,
same texts) and are compared score for score (with the evidence added since at weight zero)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.errors import InvalidInput
from test_functions import _without, kinds, shop  # noqa: F401  (fixtures)

GOLDEN = json.loads((Path(__file__).parent / "data" / "function_ranking_golden.json").read_text())
TEXTS = {
    "shop": [
        "Checkout fails for Monaco\nTraceback (most recent call last):\n"
        '  File "/srv/venv/lib/site-packages/shop/orders.py", line 6, in total\n'
        '  File "/srv/venv/lib/site-packages/shop/tax.py", line 3, in vat_for\nValueError: unknown country code\n',
        "render() drops the brackets of lists in lists\n\nCalling `render([1, [2, 3]])` gives '1, 2, 3'.",
        "Order.total ignores the VAT rate",
        "Outer.method calls plain and helper wrongly; decorated cache",
    ],
    "kinds": [
        "squash_spaces() is applied twice to a label with tabs",
        "TextChoice and NumberChoice members print as the enum name instead of the value",
        "StaticMixin.fetch_page_async returns a coroutine where a response is expected",
        "Amount.__lt__ ordering is wrong for negative values",
        "Amount._rounded rounds half to even instead of up",
    ],
}


# file-ranking evidence added after the golden rankings were recorded: at zero, the file prior is the one they saw
# (and history at the weight it had then, counted in full whatever the closest commit's likeness: decision 0063)
FILE_EVIDENCE_SINCE = {"path_words": 0.0, "history": 6.0}


def _parts(brain, text):
    from brain.search.functions import FunctionView
    from brain.search.locate import locate
    from brain.search.service import boot_code_view
    from brain.search.weights import shipped_weights

    brain.locate(text)  # refreshes the index as a boot does
    cview = boot_code_view(brain.index)
    found = locate(cview, text, limit=brain.settings.get("search.boot_files") or 20,
                   weights=shipped_weights().replace(FILE_EVIDENCE_SINCE))
    return FunctionView(brain.index.db), cview, found


def _ranking(hits):
    return [[h.key, h.score] for h in hits]


@pytest.mark.parametrize("name", ["shop", "kinds"])
def test_the_split_ranks_exactly_as_the_unsplit_ranking_did(name, request, monkeypatch):
    from brain.search.rank_functions import rank_functions

    monkeypatch.setattr("brain.search.history.LIKENESS_FULL", 1e-12)  # any likeness counts in full, as before it
    brain = request.getfixturevalue(name)
    # evidence added after the split (body_size, the shared attributes): at zero, and `body` at the value the
    # unsplit code had (4; fitted to 2 since, decision 0053), the ranking is the unsplit one
    before = _without("body_size").replace(functions={"attr": 0.0, "body": 4.0})
    for text, golden in zip(TEXTS[name], GOLDEN[name]):
        fview, cview, found = _parts(brain, text)
        assert _ranking(rank_functions(fview, cview, text, found, limit=20, weights=before)) == golden, text


@pytest.mark.parametrize("name", ["shop", "kinds"])
def test_combining_recorded_evidence_needs_no_index_and_ranks_the_same(name, request):
    from brain.search.function_evidence import FunctionEvidence
    from brain.search.rank_functions import combine_functions, gather_functions, rank_functions

    brain = request.getfixturevalue(name)
    for text in TEXTS[name]:
        fview, cview, found = _parts(brain, text)
        recorded = FunctionEvidence.from_json(json.loads(json.dumps(gather_functions(fview, cview, text, found).to_json())))
        assert _ranking(combine_functions(recorded, limit=20)) == _ranking(rank_functions(fview, cview, text, found))
        assert not recorded.graph.missing
        # other weights over the same evidence: what a fitter does (these change no seed, so the record suffices)
        for weights in (_without("twin"), _without("body"), _without("self_caller")):
            assert _ranking(combine_functions(recorded, weights, limit=20)) == \
                _ranking(rank_functions(fview, cview, text, found, weights=weights))


def test_a_feature_at_zero_weight_drops_out_of_the_combination(kinds):
    from brain.search.rank_functions import combine_functions, gather_functions

    text = "squash_spaces() is applied twice to a label with tabs"
    fview, cview, found = _parts(kinds, text)
    evidence = gather_functions(fview, cview, text, found)
    hits = {h.key: h for h in combine_functions(evidence)}
    assert "calls `squash_spaces`" in hits["kit/text.py::clean_label"].reasons
    without = {h.key: h for h in combine_functions(evidence, _without("caller"))}
    assert "calls `squash_spaces`" not in without["kit/text.py::clean_label"].reasons


def test_evidence_of_the_wrong_shape_is_refused():
    from brain.search.function_evidence import FunctionEvidence

    with pytest.raises(InvalidInput):
        FunctionEvidence.from_json({"schema": 99})
    with pytest.raises(InvalidInput):
        FunctionEvidence.from_json({"schema": 1, "rows": [], "defs": {"7": [["name", 1.0, "named `x`", 0]]}})
    with pytest.raises(InvalidInput):
        FunctionEvidence.from_json({"schema": 1, "graph": {"files": {"a.py": [3]}}})


def test_a_long_definition_matching_the_text_loses_less_to_a_short_one(brain):
    """body_size: BM25 favours short bodies; a fix lands where there are lines to change."""
    from test_functions import _hits, _write
    from conftest import git

    steps = "".join(f"    total += step_{i}(frame)\n" for i in range(30))
    _write(brain.repo, "pack/io.py", "def verify_short(frame):\n    raise ValueError('checksum mismatch')\n\n\n"
                                     f"def verify_long(frame):\n    total = 0\n{steps}"
                                     "    if total != frame.expected:\n        raise ValueError('checksum mismatch')\n"
                                     "    return total\n")
    git(brain.repo, "add", "-A")
    git(brain.repo, "commit", "-q", "-m", "pack")
    brain.reindex()
    text = "Reading a frame fails with checksum mismatch"
    hits, without = _hits(brain, text), _hits(brain, text, _without("body_size"))
    ratio = hits["pack/io.py::verify_long"].score / hits["pack/io.py::verify_short"].score
    assert ratio > without["pack/io.py::verify_long"].score / without["pack/io.py::verify_short"].score
