"""Globs from brain.yml (territories, module globs) match in time linear in the path, with the meaning
they had as regular expressions (property tests against the old translation, kept here as the oracle)."""

from __future__ import annotations

import re
import warnings
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import brain as brainlib
from brain.cards.grouping import glob_to_regex
from brain.errors import SettingsError, TerritoryRefused
from brain.security.globs import MAX_GLOB_CHARS, compile_glob
from brain.security.territories import Territories, glob_regex


def old_territory_regex(pattern: str) -> re.Pattern:
    """The translation territories used before (a backtracking regex): the oracle of meaning."""
    pattern = pattern.strip().strip("/")
    if not any(ch in pattern for ch in "*?["):
        return re.compile(re.escape(pattern) + r"(?:/.*)?\Z", re.S)
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif ch == "*":
            out.append(r"[^/]*")
            i += 1
        elif ch == "?":
            out.append(r"[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    with warnings.catch_warnings():  # the old translation passes '[[' through: Python warns of a nested set
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile("".join(out) + r"\Z", re.S)


def old_module_regex(pattern: str) -> re.Pattern:
    pattern = pattern.strip().strip("/")
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


PATH_CHARS = "ab/."
pattern_piece = st.sampled_from(["a", "b", ".", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "[a-b]", "[", "]"])
patterns = st.lists(pattern_piece, min_size=1, max_size=8).map("".join)
paths = st.text(alphabet=PATH_CHARS, max_size=12).map(lambda p: p.strip("/"))


@settings(max_examples=2000, deadline=None)
@given(pattern=patterns, path=paths)
def test_territory_glob_means_what_the_regex_meant(pattern, path):
    if "[]" in pattern or "[!]" in pattern:
        return  # the old translation made `[]` an accident of regex syntax (`[][^/]*` is one class); now POSIX
    try:
        oracle = old_territory_regex(pattern)
    except re.error:
        return  # the old translation could not even compile it
    assert compile_glob(pattern).matches(path) == bool(oracle.match(path)), (pattern, path)


@settings(max_examples=2000, deadline=None)
@given(pattern=st.lists(st.sampled_from(["a", "b", ".", "/", "*", "**", "**/", "?", "[", "]"]), min_size=1,
                        max_size=8).map("".join), path=paths)
def test_module_glob_means_what_the_regex_meant(pattern, path):
    assert bool(glob_to_regex(pattern).match(path)) == bool(old_module_regex(pattern).match(path)), (pattern, path)


@settings(max_examples=500, deadline=None)
@given(pattern=patterns, path=paths)
def test_folded_glob_matches_the_folded_path(pattern, path):
    """Case is one rule: a glob and a path that differ only in case compare as the path rule does."""
    assert glob_regex(pattern.upper()).matches(path) == glob_regex(pattern).matches(path.upper())


def test_a_closing_bracket_first_in_a_set_is_a_member_as_in_claims():
    assert compile_glob("notes/[]a]*").matches("notes/]x") and compile_glob("notes/[!]]").matches("notes/a")
    assert not compile_glob("notes/[!]]").matches("notes/]")
    assert compile_glob("notes/[]").matches("notes/[]")  # no closing bracket after the member: literal


def test_many_stars_cost_linear_time_not_exponential():
    """The pattern of issue 20 against its 61-character write: one step per character, no backtracking.
    Counted in steps (the states visited), not timed."""
    glob = compile_glob("notes/*a*a*a*a*a*a*a*a*z")
    assert not glob.matches("notes/" + "a" * 55)
    assert glob.matches("notes/" + "a" * 55 + "z")
    assert len(glob.tokens) < 32  # a bit set of this many states, advanced once per character


def test_territory_glob_of_issue_20_answers_a_real_write(brain, repo):
    """A real `brain write` under the versioned territory of issue 20, bounded by a wait that the old
    regex (minutes) would pass; the write goes through (the area does not cover it)."""
    (brain.dir / "brain.yml").write_text('version: 1\nterritories:\n  "notes/*a*a*a*a*a*a*a*a*a*a*a*z": lead\n')
    out = subprocess.run([sys.executable, "-m", "brain", "write", "note", "a" * 50, "--role", "other"],
                         cwd=repo, input="x\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_territory_compares_case_and_compatibility_forms_like_the_path_rule(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nterritories:\n  notes/lead/**: lead\n  Now.md: lead\n")
    scribed = brainlib.open_brain(brain.repo)
    for path in ("notes/LEAD/x.md", "notes/Lead/x.md", "notes/ｌｅａｄ/x.md", "notes/lead./x.md", "now.md"):
        with pytest.raises(TerritoryRefused):
            scribed.write(path, "# x\n", role="intruder")
    scribed.write("notes/LEAD/x.md", "# by the lead\n", role="lead")
    scribed.write("notes/leader/x.md", "# not inside\n", role="intruder")


def test_overlong_territory_glob_is_a_settings_error():
    with pytest.raises(SettingsError) as caught:
        Territories.parse({"notes/" + "*a" * MAX_GLOB_CHARS: "lead"})
    assert caught.value.key.startswith("territories.")


def test_claims_with_wide_character_sets_compare_by_ranges():
    """`[ -\uffff]` is one range, not 65,000 characters: two such 60-set claims took 3.6 s to compare."""
    from brain.coord.overlap import _tokens, items_overlap

    wide = "[ -\uffff]" * 60
    assert all(len(t[1]) == 1 for t in _tokens(wide))
    assert items_overlap(wide, "[!-\ufffe]" * 60)
    assert not items_overlap("[a-c]", "[!a-c]") and items_overlap("[!a]", "[!b]") and not items_overlap("[a]", "[b]")


def test_long_claims_compare_without_deep_recursion():
    """A 400-character claim (the item limit) against another: iterative, so it holds under a recursion limit
    of 100 (the old memoised recursion went 800 deep). In a fresh interpreter: pytest's own frames stay out."""
    code = ("import sys; from brain.coord.overlap import items_overlap; sys.setrecursionlimit(100); "
            "print(items_overlap('a' * 399, '*' + '?' * 398), items_overlap('*a' * 200, '*b' * 200), "
            "items_overlap('/'.join(['a'] * 200), '/'.join(['*'] * 200)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-400:]
    assert out.stdout.split() == ["True", "False", "True"]


@settings(max_examples=1000, deadline=None)
@given(pattern=st.lists(st.sampled_from(["a", "/", "?", "[ab]", "[!a]", "[b-a]", "[]", "x"]), max_size=5).map("".join),
       star=st.sampled_from(["*", "**", "**/"]), where=st.integers(0, 5), path=paths)
def test_one_star_globs_take_the_regex_path_with_the_same_meaning(pattern, star, where, path):
    """A glob with one star runs as a regex (linear there, and fast); it must agree with the bit set."""
    from brain.security.globs import Glob

    text = pattern[:where] + star + pattern[where:]
    fast = compile_glob(text)
    slow = Glob(fast.pattern, fast.literal, fast.tokens, fast.fold, fast.below)
    slow.regex = None
    assert fast.matches(path) == slow.matches(path), (text, path)
