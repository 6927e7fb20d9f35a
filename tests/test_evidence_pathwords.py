"""Place words (``evidence.pathwords``): a candidate whose folders and name are the title's words is lifted,
in a real repository's ranking; the path splitter is a pure parser of any path."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from brain.search.evidence.pathwords import LAYOUT_WORDS, path_words
from brain.search.ranking import combine, gather
from brain.search.weights import shipped_weights


@pytest.mark.parametrize("path, words", [
    ("src/locale/tr/_lib/match/index.ts", {"local", "match"}),  # `tr` is too short, `_lib`, `index` are layout
    ("jinja2/asyncsupport.py", {"jinja", "async"}),
    ("packages/vue-query/src/queryClient.ts", {"vue", "query", "clien"}),
    ("src/Interval/index.ts", {"inter"}),
    ("lib/index.js", set()),
    ("README", {"readm"}),
])
def test_path_words(path, words):
    assert path_words(path) == words


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abAB_-./09é", max_size=80))
def test_path_words_of_any_path_are_short_lower_case_place_words(path):
    for word in path_words(path):
        assert 3 <= len(word) <= 5
        assert word == word.lower() and word not in LAYOUT_WORDS


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def locales(brain):
    repo = brain.repo
    # the same four modules for two locales: the title's words say which file of which locale
    for locale in ("turkish", "ukrainian"):
        for part in ("match", "formatLong", "formatRelative"):
            _write(repo, f"src/locale/{locale}/_lib/{part}/index.ts",
                   "export const weekday = {\n  narrow: /^(p|s|ç|c|p|c|c)/i,\n  short: /^(paz|pzt|sal|çar|per|cum|cts)/i,\n}\n"
                   + ("export function buildMatchFn(args) {\n  return args\n}\n" if part == "match" else ""))
        _write(repo, f"src/locale/{locale}/index.ts", "import match from './_lib/match'\nexport default { match }\n")
    brain.reindex()
    return brain


def test_the_title_words_of_a_path_lift_that_file(locales):
    view = locales.index.code_view()
    text = "fix weekday matcher in the turkish locale"
    evidence = gather(view, text)
    found = evidence.files["src/locale/turkish/_lib/match/index.ts"]
    assert found.features["path_words"] > evidence.files["src/locale/turkish/_lib/formatLong/index.ts"].features["path_words"]
    assert found.features["path_words"] > evidence.files["src/locale/ukrainian/_lib/match/index.ts"].features["path_words"]
    ranked = combine(evidence).paths
    first = ranked.index("src/locale/turkish/_lib/match/index.ts")
    assert first < ranked.index("src/locale/ukrainian/_lib/match/index.ts")
    assert first < ranked.index("src/locale/turkish/_lib/formatLong/index.ts")
    unlifted = combine(evidence, shipped_weights().replace({"path_words": 0.0})).paths
    assert unlifted.index("src/locale/turkish/_lib/match/index.ts") > unlifted.index("src/locale/ukrainian/_lib/match/index.ts") or \
        unlifted.index("src/locale/turkish/_lib/match/index.ts") > first
    # the lift multiplies the score the file has: at weight 0 the files tie and the order is by path
    flat = combine(evidence, shipped_weights().replace({"path_words": 0.0}))
    lifted = {h.path: h.score for h in combine(evidence).files}
    for hit in flat.files:
        assert lifted[hit.path] >= hit.score
    hit = next(h for h in combine(evidence).files if h.path == "src/locale/turkish/_lib/match/index.ts")
    assert any("title's words" in r for r in hit.reasons)


def test_place_words_alone_make_no_candidate(locales):
    view = locales.index.code_view()
    evidence = gather(view, "matcher locale")  # words no file writes: no BM25 match, so no candidate to lift
    assert not any("path_words" in f.features and not set(f.features) - {"path_words"}
                   for f in evidence.files.values())


def test_a_traceback_inside_the_repository_leaves_place_words_out(locales):
    view = locales.index.code_view()
    text = ("weekday matcher crashes in the turkish locale\n\nTypeError: x is undefined\n"
            "    at buildMatchFn (/srv/app/src/locale/ukrainian/_lib/match/index.ts:5:3)\n")
    evidence = gather(view, text)
    assert not any("path_words" in f.features for f in evidence.files.values())
    assert combine(evidence).paths[0] == "src/locale/ukrainian/_lib/match/index.ts"
