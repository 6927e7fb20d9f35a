"""Pure coordination rules: glob-aware overlap (property-tested against fnmatch), liveness, ids."""

from __future__ import annotations

import fnmatch
import re

from hypothesis import given, settings, strategies as st

from brain.coord.overlap import items_overlap, normalize_item
from brain.coord.rules import CoordConfig, claim_live, liveness, session_id

SEG = st.text(alphabet="ab.*?", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))
CONCRETE = st.text(alphabet="ab.", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))


def covers(pattern: str, path: str) -> bool:
    """Reference semantics: the claim covers a path it matches, or anything below one."""
    p_parts, parts = pattern.split("/"), path.split("/")

    def match(i: int, j: int) -> bool:
        if i == len(p_parts):
            return True  # the rest is below a matched ancestor
        if p_parts[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(parts) + 1))
        return j < len(parts) and fnmatch.fnmatchcase(parts[j], p_parts[i]) and match(i + 1, j + 1)

    return match(0, 0)


@settings(max_examples=400, deadline=None)
@given(st.lists(SEG, min_size=1, max_size=3), st.lists(SEG, min_size=1, max_size=3),
       st.lists(CONCRETE, min_size=1, max_size=4))
def test_a_path_covered_by_both_claims_means_they_overlap(a, b, path):
    pa, pb, p = "/".join(a), "/".join(b), "/".join(path)
    if covers(pa, p) and covers(pb, p):
        assert items_overlap(pa, pb)


@settings(max_examples=300, deadline=None)
@given(st.lists(CONCRETE, min_size=1, max_size=3), st.lists(CONCRETE, min_size=1, max_size=3))
def test_concrete_paths_overlap_exactly_when_one_is_an_ancestor(a, b):
    pa, pb = "/".join(a), "/".join(b)
    expected = a[: len(b)] == b or b[: len(a)] == a
    assert items_overlap(pa, pb) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(SEG, min_size=1, max_size=3), st.lists(SEG, min_size=1, max_size=3))
def test_overlap_is_symmetric(a, b):
    assert items_overlap("/".join(a), "/".join(b)) == items_overlap("/".join(b), "/".join(a))


def test_examples():
    assert items_overlap("src", "src/auth/login.py")
    assert items_overlap("src/**/test_*.py", "src/a/b/test_x.py")
    assert items_overlap("src/*.py", "src/[ab].py")
    assert not items_overlap("src/*.py", "src/sub/x.py")
    assert not items_overlap("src/a.py", "src/a.pyc")
    assert not items_overlap("docs/*.md", "src/*.md")
    assert items_overlap("name:deploy", "name:deploy")
    assert not items_overlap("name:deploy", "deploy")
    assert normalize_item("./a//b/") == "a/b"


def test_liveness_windows():
    c = CoordConfig(stall_seconds=10, gone_seconds=100)
    assert liveness(100, 95, None, None, c) == "alive"
    assert liveness(100, 85, None, None, c) == "stalled"
    assert liveness(100, 85, None, 200, c) == "alive"     # idle but waiting
    assert liveness(300, 85, None, 400, c) == "gone"      # even waiting, a silent process ends gone
    assert liveness(100, 99, 99, None, c) == "gone"       # ended
    assert liveness(200, 85, None, None, c) == "gone"
    assert liveness(100, 99, None, None, c, process_alive=False) == "gone"  # its process was killed
    assert liveness(100, 99, None, None, c, process_alive=True) == "alive"


def test_lease_expiry():
    assert claim_live("held", 10.0, 9.9)
    assert not claim_live("held", 10.0, 10.0)
    assert not claim_live("released", 99.0, 1.0)


def test_session_id_shape():
    assert session_id(0, "build", "box") == "sess-19700101-0000-build@box"
    assert session_id(0, "build", "box", 3) == "sess-19700101-0000-build.3@box"
    assert re.match(r"^sess-\d{8}-\d{4}-[a-z]+@box$", session_id(1_790_000_000, "review", "box"))
