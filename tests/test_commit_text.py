"""Commit-message text: boilerplate dropped, the title's area (scope) read, `Type#member` read, and the
``scope`` evidence lifting the files of that area in a real repository's ranking."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from brain.search.commit_text import member_refs, strip_boilerplate, title_scopes
from brain.search.evidence.scope import scope_matches
from brain.search.signals import extract_signals


@pytest.mark.parametrize("title, scopes", [
    ("fix(router): trailing slash is lost", ["router"]),
    ("feat(vue-query)!: drop the old api", ["vue-query"]),
    ("fix(client/types): make args optional (#1618)", ["client/types"]),
    ("fix(core, cli): two places", ["core", "cli"]),
    ("[Serializer] keep the order", ["Serializer"]),
    ("[bugfix] core: circular import", ["core"]),
    ("[locale] (en-li) Support ss (#5399)", ["locale"]),
    ("Selector: Re-introduce selector-native.js", ["Selector"]),
    ("net/http: close idle connections", ["net/http"]),
    # kinds, issue keys and versions are not areas; a sentence with a colon later has no prefix
    ("fix: handle empty input", []),
    ("feat(deps): bump", []),
    ("3.x: Add doOnLifecycle to M/S/C (#6877)", []),
    ("LANG-1721: Fix StringUtils", []),
    ("[bugfix] Add 'w' to supported time units", []),
    ("Add a policy for the ascii literal behavior: see #392", []),
    ("", []),
])
def test_title_scopes(title, scopes):
    assert title_scopes(title) == scopes


def test_boilerplate_is_dropped_but_the_title_is_kept():
    text = ("Bug: the parser drops the last token (#77)\n\n* keep the token\n\n---------\n\n"
            "Merge pull request #7211 from someone/branch\n"
            "Co-authored-by: A Person <a@example.com>\nSigned-off-by: B <b@example.com>\n"
            "PiperOrigin-RevId: 123456\nRELNOTES=n/a\nFixes owner/repo#12 and (#88)")
    out = strip_boilerplate(text)
    assert out.split("\n", 1)[0].startswith("Bug: the parser drops the last token")
    for gone in ("---", "Merge pull request", "Co-authored", "Signed-off", "PiperOrigin", "RELNOTES"):
        assert gone not in out
    assert "keep the token" in out and "Fixes owner/repo#12 and (#88)" in out  # references in prose stay
    words = extract_signals(text).words
    assert not {"merge", "pull", "signed", "piperorigin", "revid"} & set(words)


def test_member_refs_read_as_dotted_names():
    assert member_refs("Fix Chain#withConnectTimeout and Liquid::ParseContext#parse_expression") == [
        "Chain.withConnectTimeout", "Liquid.ParseContext.parse_expression"]
    assert member_refs("Fixes #123, C# code, see page#") == []
    assert "Chain.withConnectTimeout" in extract_signals("Fix Chain#withConnectTimeout").dotted


@pytest.mark.parametrize("scope, path, value", [
    ("Selector", "src/selector.js", 1.0),
    ("client/types", "src/client/types.ts", 1.0),
    ("client/types", "src/types.ts", 0.0),
    ("vue-query", "packages/vue-query/src/useQuery.ts", 0.5),
    ("codemod", "packages/codemods/src/utils/index.js", 0.5),
    ("angular-query", "packages/angular-query-experimental/src/inject-query.ts", 0.5),
    ("Attribution", "src/control/Control.Attribution.js", 1.0),
    ("eslintPlugin", "packages/eslint-plugin/src/rule.ts", 0.5),
    ("api", "src/apiary/x.ts", 0.0),  # a short name matches only whole names
    ("router", "src/route.ts", 0.0),
])
def test_scope_matches(scope, path, value):
    assert scope_matches(scope, path) == value


_TEXT = st.lists(st.sampled_from(list("ab:()[]!#/-_ .,\n\tAZ09=*") + ["fix", "Merge pull request ",
                                                                      "Signed-off-by:", "(#1)", "feat("]),
                 max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_the_parsers_never_fail_and_only_drop_lines(text):
    out = strip_boilerplate(text)
    assert len(out) <= len(text)
    kept = out.split("\n")
    assert len(kept) <= len(text.split("\n"))
    for scope in title_scopes(text):
        assert scope and scope.lower() not in ("fix", "feat") and "\n" not in scope
        assert scope in text
    for dotted in member_refs(text):
        assert "." in dotted and "#" not in dotted


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab/.-_A", max_size=40), st.text(alphabet="ab/.-_A", max_size=60))
def test_scope_matches_is_a_value_in_range(scope, path):
    assert scope_matches(scope, path) in (0.0, 0.5, 1.0)


def test_long_inputs_are_read_in_linear_time():
    # no pattern backtracks: these finish at once (a quadratic pattern would take minutes)
    for text in ("a(" * 20_000, "[" * 40_000, "a/" * 30_000 + ":", "a#" * 30_000, "Signed-off-by" * 5000):
        strip_boilerplate(text)
        title_scopes(text)
        member_refs(text)


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_titles_area_lifts_its_files(brain):
    repo = brain.repo
    # two packages with the same words: only the title's scope says which one the change is in
    for pkg in ("vue-query", "react-query"):
        _write(repo, f"packages/{pkg}/src/useQuery.ts",
               "export function useQuery(options) {\n  // watch the query key and refetch\n  return watcher(options)\n}\n")
        _write(repo, f"packages/{pkg}/src/index.ts", "export { useQuery } from './useQuery'\n")
    text = "fix(vue-query): avoid sync watchers that cause frequent refetch requests (#6043)"
    ranked = brain.locate(text).paths
    assert ranked[0] == "packages/vue-query/src/useQuery.ts"
    hit = brain.locate(text).files[0]
    assert any("vue-query" in r for r in hit.reasons)
    other = brain.locate("fix(react-query): avoid sync watchers that cause frequent refetch requests").paths
    assert other[0] == "packages/react-query/src/useQuery.ts"
