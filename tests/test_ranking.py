"""The file ranking as data and two steps: the shipped weights file, ``gather`` / ``combine``, and the
proof that the split changed no ranking (the golden rankings of a generated six-language repository)."""

from __future__ import annotations

import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from brain.errors import InvalidInput
from brain.search.locate import locate
from brain.search.ranking import Evidence, FileEvidence, Links, combine, gather
from brain.search.weights import WEIGHTS_FILE, Weights, load_weights, shipped_weights
from ranking_repo import TASKS, build, rankings

# the generated six-language repository (the module fixture) is built once: under pytest-xdist the group keeps
# this module's tests on one worker
pytestmark = pytest.mark.xdist_group("ranking-repo")

ROOT = Path(__file__).resolve().parents[1]
SEARCH = ROOT / "src" / "brain" / "search"
GOLDEN = Path(__file__).with_name("data") / "ranking_golden.json"


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    import os

    home = tmp_path_factory.mktemp("ranking-home")
    old = os.environ.get("BRAIN_HOME")
    os.environ["BRAIN_HOME"] = str(home)  # module scope: the autouse per-test home is not set up yet
    try:
        made = build(tmp_path_factory.mktemp("ranking") / "project")
        yield made.index.code_view()
    finally:
        if old is None:
            os.environ.pop("BRAIN_HOME", None)
        else:
            os.environ["BRAIN_HOME"] = old


def _plain(found) -> dict:
    return json.loads(json.dumps({"files": [[h.path, h.score, h.reasons] for h in found.files],
                                  "modules": [[m, round(s, 4)] for m, s in found.modules]}))


# -- the weights file ------------------------------------------------------------------


def test_the_shipped_weights_file_has_a_value_and_a_why_for_every_entry():
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    weights = Weights(data)  # validates
    for group in ("files", "functions"):
        for section in data[group].values():
            for name, entry in section.items():
                assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
                assert len(entry["why"]) > 20 and "\n" not in entry["why"], name
    assert weights.features["path"] == 8.0 and weights.factors["test"] == 0.02 and weights.functions["call"] == 4.0
    assert list(weights.factors) == ["test", "amalgamated", "generated_trap", "tool", "generated", "nonproduct",
                                     "nested"]  # the order they are tried in
    assert weights.named_too == {"test"}


def _source(*names: str) -> str:
    return "\n".join((SEARCH / n).read_text(encoding="utf-8") for n in names)


FILE_CODE = ("ranking.py", "lending.py", "locate.py", "signals.py", "codeview.py",
             *(f"evidence/{p.name}" for p in sorted((SEARCH / "evidence").glob("*.py"))))


def test_every_weight_the_code_reads_is_in_the_file_and_every_entry_is_read(view):
    weights = shipped_weights()
    code = _source(*FILE_CODE)
    read: set[str] = set()
    read |= set(re.findall(r"\badd\(\w+, \"(\w+)\"", code))  # features as gathered
    read |= set(re.findall(r"\(sig\.\w+, \"(\w+)\",", code))  # the full-text passes' features
    read |= set(re.findall(r"\b(?:shares|params|p)\[\"(\w+)\"\]", code))
    from brain.search.evidence import FLAGS

    read |= set(FLAGS) | set(re.findall(r"flags\.append\(\"(\w+)\"\)", code))  # a factor applies to files with its flag
    from brain.search.ranking import TRAP_FLAGS

    read |= set(TRAP_FLAGS)  # the flags search.traps.trap_flag gives
    for pair in re.findall(r"feature = \"(\w+)\" if \w+ else \"(\w+)\"", code):
        read |= set(pair)
    assert read == set(weights.names("files")), (read ^ set(weights.names("files")))
    # and what a real gathering records is all known to the weights
    seen = {f for text in TASKS for found in gather(view, text).files.values() for f in found.features}
    flags = {f for text in TASKS for found in gather(view, text).files.values() for f in found.flags}
    assert seen <= set(weights.features) and len(seen) >= 12
    assert flags <= set(weights.factors) and {"test", "generated", "nonproduct"} <= flags
    functions = _source("rank_functions.py", "function_evidence.py", "fn_attrs.py")
    read = set(re.findall(r"\bF\[\"(\w+)\"\]", functions))
    read |= set(re.findall(r"\bev\.add\(\w+, \"(\w+)\"", functions))  # features as gathered (weighed in combine)
    read |= set(re.findall(r"\(\"(\w+)\", [\d.]+\) if", functions)) | set(re.findall(r"else \(\"(\w+)\",", functions))
    read |= set(re.findall(r"\(sig\.\w+, \"(\w+)\"\)", functions))
    assert read == set(weights.names("functions")), read ^ set(weights.names("functions"))


def test_the_weights_file_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["brain"]
    assert any(fnmatch("search/weights.json", pattern) for pattern in patterns)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("schema"), "schema"),
    (lambda d: d["files"]["features"]["path"].pop("why"), "`value` and `why`"),
    (lambda d: d["files"]["features"]["path"].update(why="  "), "one-line `why`"),
    (lambda d: d["files"]["features"]["path"].update(value="8"), "must be a number"),
    (lambda d: d["files"]["features"]["path"].update(value=float("nan")), "not a number"),
    (lambda d: d["files"]["shares"].update(path={"value": 1.0, "why": "twice"}), "named twice"),
    (lambda d: d["files"].pop("factors"), "exactly the sections"),
    (lambda d: d["files"]["features"]["path"].update(named_too=True), "`named_too`"),
])
def test_a_weights_file_of_the_wrong_shape_is_refused_clearly(tmp_path, change, message):
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidInput, match=re.escape(message)):
        load_weights(path)
    path.write_text("{not json")
    with pytest.raises(InvalidInput, match="cannot read the weights file"):
        load_weights(path)


def test_replace_changes_a_copy_and_refuses_unknown_names():
    weights = shipped_weights()
    before = (weights.features["path"], weights.factors["test"], weights.functions["call"])
    other = weights.replace({"path": 9.25, "test": 0.55}, functions={"call": 1.75})
    assert (other.features["path"], other.factors["test"], other.functions["call"]) == (9.25, 0.55, 1.75)
    assert (weights.features["path"], weights.factors["test"], weights.functions["call"]) == before
    assert Weights.from_json(other.to_json()).features == other.features
    with pytest.raises(InvalidInput, match="no ranking weight `paht`"):
        weights.replace({"paht": 1.0})


# -- gather / combine ------------------------------------------------------------------

# the mechanism tests below fix the weights they exercise, so they test the mechanism under any weights
# file (bench/fit_weights.py runs these tests against a fitted candidate: BRAIN_TEST_WEIGHTS)
FIXED = {"path": 8.0, "bm25": 8.0, "test": 0.02, "generated": 0.3, "nonproduct": 0.4, "nested": 0.4,
         "import": 0.12, "twin": 0.3}


def _fixed():
    return shipped_weights().replace(FIXED)


def test_the_ranking_is_exactly_what_it_was_before_the_split(view):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert len(golden) == len(TASKS)
    got = rankings(view)
    for text, old, new in zip(TASKS, golden, got):
        assert json.loads(json.dumps(new)) == old, text


def test_combine_of_evidence_read_back_from_json_is_the_same_ranking(view):
    for text in TASKS:
        evidence = gather(view, text)
        again = Evidence.from_json(json.loads(json.dumps(evidence.to_json())))
        assert again.to_json() == evidence.to_json()
        assert _plain(combine(again, limit=40)) == _plain(locate(view, text, limit=40)), text


def test_evidence_is_at_unit_weight_and_combine_applies_the_weights(view):
    text = TASKS[0]  # a Python traceback naming app/models/fields.py last
    evidence = gather(view, text)
    fields = evidence.files["app/models/fields.py"]
    assert fields.features["frame_last"] == 1.0 and "frame" not in fields.features
    assert {f for f, _, _ in fields.reasons} == set(fields.features)
    for feature, value in fields.features.items():
        assert value == pytest.approx(sum(v for f, v, _ in fields.reasons if f == feature))
    base = combine(evidence).files[0]
    assert base.path == "app/models/fields.py"
    # a weight doubled doubles what that feature gives; a weight of zero takes the evidence away
    w = shipped_weights().features["frame_last"]
    doubled = combine(evidence, shipped_weights().replace({"frame_last": 2 * w})).files[0]
    assert doubled.score == pytest.approx(base.score + w, abs=1e-3)
    flat = combine(evidence, shipped_weights().replace({f: 0.0 for f in shipped_weights().features}))
    assert flat.files == []


def test_other_weights_combine_as_a_fresh_gathering_would_when_the_best_files_are_candidates(view):
    """combine is exact for the weights gather was given; with others it only misses the neighbours of a
    file that became one of the best without being a candidate: in this repository, never."""
    other = shipped_weights().replace({"bm25": 2.0, "symbol": 4.0, "import": 0.3, "twin": 0.5, "nonproduct": 0.9})
    for text in TASKS:
        assert _plain(combine(gather(view, text), other)) == _plain(combine(gather(view, text, weights=other), other))


def test_factors_apply_in_order_to_flagged_files_and_spare_named_ones():
    def one(flags, named_by=()):
        return FileEvidence({"path": 1.0}, [("path", 1.0, "path `x` in the task")], list(flags), list(named_by),
                            Links())

    evidence = Evidence({"a.py": one([]), "t.py": one(["test"], ["path"]), "g.py": one(["generated", "nonproduct"]),
                         "n.py": one(["generated"], ["path"]), "d.py": one(["nonproduct", "nested"])})
    scores = {h.path: h.score for h in combine(evidence, _fixed()).files}
    assert scores == {"a.py": 8.0, "t.py": 8.0 * 0.02, "g.py": 8.0 * 0.3, "n.py": 8.0, "d.py": 8.0 * 0.4}


def test_evidence_of_the_wrong_shape_or_an_unknown_feature_is_refused():
    with pytest.raises(InvalidInput, match="schema"):
        Evidence.from_json({"files": {}})
    with pytest.raises(InvalidInput, match="wrong shape"):
        Evidence.from_json({"schema": 1, "files": {"a.py": {"reasons": [["path", "x"]]}}})
    with pytest.raises(InvalidInput, match="links"):
        Evidence.from_json({"schema": 1, "files": {"a.py": {"links": {"near": "b.py"}}}})
    unknown = Evidence({"a.py": FileEvidence({"astrology": 1.0}, [("astrology", 1.0, "the stars say so")])})
    with pytest.raises(InvalidInput, match="feature `astrology`"):
        combine(unknown)


def test_the_lending_needs_no_repository_and_reads_the_links_of_the_best_files():
    def scored(value, links=None):
        return FileEvidence({"bm25": value}, [("bm25", value, "full-text match")], [], [], links)

    evidence = Evidence({"src/a.c": scored(1.0, Links(near=["src/b.c"], twins=["include/a.h"])),
                         "src/b.c": scored(0.1, Links()), "include/a.h": FileEvidence(),
                         "src/hub.c": scored(0.9, Links(near=None))})
    found = {h.path: (h.score, h.reasons) for h in combine(evidence, _fixed()).files}
    assert found["include/a.h"] == (pytest.approx(8.0 * 0.3, abs=1e-4), ["header/source twin of `src/a.c`"])
    assert found["src/b.c"][0] == pytest.approx(0.8 + 8.0 * 0.12, abs=1e-4)
    assert "src/hub.c" in found and len(found) == 4  # a hub lends nothing


def test_the_ranking_says_how_strong_the_best_files_evidence_is(view):
    kinds = {text: locate(view, text).evidence for text in TASKS}
    assert kinds[TASKS[0]] == {"kind": "frame", "path": "app/models/fields.py",
                               "text": "a traceback frame names `app/models/fields.py`"}
    assert kinds[TASKS[6]]["kind"] == "name"  # `import "example.com/app/core/discov"`
    assert kinds[TASKS[8]]["kind"] == "text" and "explore" in kinds[TASKS[8]]["text"]  # words only
    assert kinds[TASKS[-2]] is None  # nothing ranked
    # a share lent by a neighbour is not the file's own evidence
    lent = Evidence({"a.c": FileEvidence({"bm25": 1.0}, [("bm25", 1.0, "full-text match")], [], [],
                                         Links(twins=["a.h"]))})
    assert combine(lent).evidence["kind"] == "text"


def test_the_boot_shows_the_evidence_line_and_its_json_carries_it(brain):
    from card_helpers import commit_files

    commit_files(brain, {"pkg/parser.py": "def parse(text):\n    raise ValueError('bad token')\n",
                         "pkg/other.py": "def unrelated():\n    return 1\n"}, now="# Now\n\nFix the bugs.\n")
    text = ('parse fails\n\nTraceback (most recent call last):\n  File "/srv/pkg/parser.py", line 2, in parse\n'
            "ValueError: bad token")
    result = brain.boot(text, record=False)
    assert "Evidence: a traceback frame names `pkg/parser.py`." in result.text
    assert result.to_dict()["evidence"] == {"kind": "frame", "path": "pkg/parser.py",
                                            "text": "a traceback frame names `pkg/parser.py`"}
    assert brain.boot(record=False).to_dict()["evidence"] is None  # no task, no ranking


def test_a_file_with_evidence_of_its_own_that_changes_with_a_best_file_is_lifted_below_it():
    """The co-change lift (decision 0072): own score x (1 + cochange_lift x confidence x seed / best), capped
    below the seed; a co-changed file the text never touches is not lifted."""
    def scored(value, links=None):
        return FileEvidence({"bm25": value}, [("bm25", value, "full-text match")], [], [], links or Links())

    together = [("src/near.c", 1.0, "changes together with `src/a.c` (4 of its 4 commits)"),
                ("src/b.c", 0.5, "changes together with `src/a.c` (2 of its 4 commits)"),
                ("src/c.c", 0.9, "changes together with `src/a.c` (3 of its 4 commits)")]
    evidence = Evidence({"src/a.c": scored(1.0, Links(cochange=together)), "src/near.c": scored(0.7),
                         "src/b.c": scored(0.5), "src/d.c": scored(0.55), "src/c.c": FileEvidence()})
    plain = {"bm25": 8.0, "cochange": 0.0, "import": 0.0, "cochange_lift_seeds": 1, "cochange_lift_cap": 0.95}
    off = combine(evidence, shipped_weights().replace({**plain, "cochange_lift": 0.0}))
    assert off.paths == ["src/a.c", "src/near.c", "src/d.c", "src/b.c"]
    on = combine(evidence, shipped_weights().replace({**plain, "cochange_lift": 0.4}))
    score = {h.path: h.score for h in on.files}
    assert on.paths == ["src/a.c", "src/near.c", "src/b.c", "src/d.c"]  # b.c: 4.0 x (1 + 0.4 x 0.5) passes d.c
    assert score["src/b.c"] == pytest.approx(4.8, abs=1e-4)
    assert score["src/near.c"] == pytest.approx(0.95 * 8.0, abs=1e-4)  # 5.6 x 1.4 = 7.84, capped below the seed
    assert "src/c.c" not in score  # no evidence of its own: nothing to lift
    assert next(h for h in on.files if h.path == "src/b.c").reasons[1].startswith("changes together with `src/a.c`")


def test_typed_title_scales_the_title_only_where_most_matched_files_are_one_type_per_file():
    from brain.search.ranking import Evidence, _typed_title

    def evidence(paths):
        found = Evidence()
        for path in paths:
            found.add(path, "bm25_title", 0.5, "full-text match")
        return found

    assert _typed_title(evidence(["a/Foo.java", "a/Bar.kt", "b/x.py"]), 0.5) == 0.5
    assert _typed_title(evidence(["a/Foo.java", "b/x.py", "c/y.go"]), 0.5) == 1.0  # a mixed repository: its balance
    assert _typed_title(evidence([]), 0.5) == 1.0


def test_best_seeds_answers_again_only_while_no_score_was_written():
    """``lending.best_seeds`` keeps its last answer in a ``Scores`` while its write count stands; every way of
    changing the dict counts, and each answer equals the one a plain dict of the same scores gets."""
    from brain.search.lending import NO_SEED, Scores, best_seeds

    def one(flags=()):
        return FileEvidence({"path": 1.0}, [("path", 1.0, "x")], list(flags), [], Links())

    flagged = sorted(NO_SEED)[0]
    evidence = Evidence({"a.py": one(), "b.py": one(), "c.py": one([flagged]), "d.py": one()})
    weights = shipped_weights().replace({"neighbour_seeds": 2})
    score = Scores({"a.py": 1.0, "b.py": 2.0, "c.py": 9.0, "d.py": 0.5})

    def check() -> list[str]:
        got = best_seeds(evidence, weights, score)
        assert got == best_seeds(evidence, weights, dict(score))
        return got

    assert check() == ["b.py", "a.py"]
    check().append("x.py")  # a caller changing its list changes no later answer
    assert check() == ["b.py", "a.py"]
    writes = [lambda s: s.__setitem__("d.py", 5.0), lambda s: s.update({"a.py": 7.0}),
              lambda s: s.pop("a.py"), lambda s: s.setdefault("e.py", 8.0), lambda s: s.__delitem__("e.py"),
              lambda s: s.__ior__({"f.py": 6.0}), lambda s: s.popitem(), lambda s: s.clear()]
    answers = []
    for write in writes:
        before = score.writes
        write(score)
        assert score.writes > before
        answers.append(check())
    assert answers == [["d.py", "b.py"], ["a.py", "d.py"], ["d.py", "b.py"], ["e.py", "d.py"], ["d.py", "b.py"],
                       ["f.py", "d.py"], ["d.py", "b.py"], []]
