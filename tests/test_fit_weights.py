"""bench/fit_weights.py's keep rule: fitted weights are kept only if they gain held-out tasks AND the ranking
tests pass with them, the tests running against a candidate file (BRAIN_TEST_WEIGHTS), never the package's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BENCH = TESTS.parent / "bench"
sys.path.insert(0, str(BENCH))

import fit_weights as fw  # noqa: E402

from brain.search import weights  # noqa: E402


def test_the_keep_rule_needs_a_held_out_gain_of_enough_tasks_and_passing_tests():
    assert fw.keep_rule(0.004, 12, 10, True)[0]
    assert not fw.keep_rule(0.004, 9, 10, True)[0]  # too few tasks, however the macro moved
    assert not fw.keep_rule(0.0, 12, 10, True)[0]  # the macro did not rise (a gain in one big language only)
    assert not fw.keep_rule(-0.001, 12, 10, True)[0]
    kept, why = fw.keep_rule(0.004, 12, 10, False)
    assert not kept and "ranking tests fail" in why
    kept, why = fw.keep_rule(0.004, 12, 10, None)
    assert not kept and "not run" in why


def test_held_out_tasks_counts_whole_tasks_gained_minus_lost_at_all_5():
    rows = [{"hand": [7], "fitted": [2]},        # gained
            {"hand": [1, 9], "fitted": [1, 4]},  # gained: every gold file now in the top 5
            {"hand": [3], "fitted": [6]},        # lost
            {"hand": [None], "fitted": [1]},     # gained
            {"hand": [2], "fitted": [1]}]        # in the top 5 either way
    assert fw.held_out_tasks(rows, "fitted") == 2
    assert fw.held_out_tasks(rows, "hand", base="fitted") == -2


def test_a_candidate_is_written_beside_never_over_the_package_file(tmp_path):
    before = weights.WEIGHTS_FILE.read_bytes()
    ranker = fw.Ranker()
    target = ranker.write({"path": 9.5, "twin": 0.0}, tmp_path / "fit" / "candidate.json")
    assert weights.WEIGHTS_FILE.read_bytes() == before
    back = weights.load_weights(target)
    assert back["path"] == 9.5 and back["twin"] == 0.0
    assert back["symbol"] == weights.shipped_weights()["symbol"]  # the rest as shipped, `why`s kept
    assert json.loads(target.read_text())["files"]["features"]["path"]["why"] == \
        json.loads(before)["files"]["features"]["path"]["why"]


def test_the_ranking_tests_gate_runs_the_tests_against_the_candidate_file(tmp_path, monkeypatch):
    """A real pytest run: a test that asserts the candidate's value passes with the candidate and fails with
    the packaged file, so the gate reads what it is given and reports the failing test by name. Its temporary
    folders stay its own: nothing lands in (or is cleaned out of) the user's shared pytest folder."""
    shared = tmp_path / "temproot"
    shared.mkdir()
    monkeypatch.setenv("PYTEST_DEBUG_TEMPROOT", str(shared))  # where a run without --basetemp numbers its session
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(TESTS / "conftest.py", suite / "conftest.py")
    (suite / "test_sees_candidate.py").write_text(
        "from brain.search.weights import shipped_weights\n\n\n"
        "def test_path_weight():\n"
        "    assert shipped_weights().features['path'] == 9.5\n")
    candidate = fw.Ranker().write({"path": 9.5}, tmp_path / "candidate.json")
    ok, failed = fw.ranking_tests(candidate, tests=(str(suite),), deselect=(), timeout=240)
    assert ok and failed == []
    ok, failed = fw.ranking_tests(weights.WEIGHTS_FILE, tests=(str(suite),), deselect=(), timeout=240)
    assert not ok and len(failed) == 1 and failed[0].endswith("test_sees_candidate.py::test_path_weight")
    assert list(shared.iterdir()) == []


def _suite(tmp_path, body: str) -> Path:
    """A real pytest suite reading the candidate weights (conftest.py's BRAIN_TEST_WEIGHTS), as the gate does."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(TESTS / "conftest.py", suite / "conftest.py")
    (suite / "test_pinned.py").write_text("from brain.search.weights import shipped_weights\n\n\n" + body)
    return suite


def _gate(tmp_path, ranker):
    candidate = tmp_path / "candidate.json"

    def gate(values, tests):
        return fw.ranking_tests(ranker.write(values, candidate), tests=tuple(tests), deselect=(), timeout=240)
    return gate


def _tasks(ranker):
    """Go tasks in four repositories (two folds) whose gold file only the path names, outranked by six
    files whose body matches better: under the hand-set weights it is 7th; a lower `bm25` or a higher `path`
    puts it first (the fit tries `bm25` first, in name order)."""
    from brain.search.ranking import EVIDENCE_SCHEMA

    # each noise file scores 1.2 x the gold file under the shipped weights, whatever their values
    body = 1.2 * ranker.current["path"] / ranker.current["bm25"]
    tasks, folds = [], {}
    for r in range(4):
        repo = f"o/r{r}"
        folds[repo] = r % 2
        for i in range(3):
            files = {f"src/noise{j}.go": {"features": {"bm25": body}, "reasons": [["bm25", body, "body"]]}
                     for j in range(6)}
            files["src/gold.go"] = {"features": {"path": 1.0}, "reasons": [["path", 1.0, "path named"]]}
            ev = ranker.evidence({"schema": EVIDENCE_SCHEMA, "files": files})
            row = {"id": f"{repo}#{i}", "repo": repo, "lang": "Go", "gold": ["src/gold.go"], "bm25": [7]}
            tasks.append(fw.Task(row, ev, ranker.features(ev)))
    return tasks, folds


def test_the_back_off_freezes_the_move_that_breaks_a_test_and_refits_the_others(tmp_path):
    """The first fit moves `bm25` (to 0), which a pinned test forbids: the back-off blames that move by
    reverting it, freezes it at its hand-set value and fits again; the second fit reaches the same held-out
    gain through `path`, and the gate passes. Real fits through `combine`, a real pytest gate."""
    ranker = fw.Ranker()
    hand_bm25, hand_path = ranker.current["bm25"], ranker.current["path"]
    suite = _suite(tmp_path, f"def test_body_weight():\n    assert shipped_weights().features['bm25'] == {hand_bm25!r}\n")
    tasks, folds = _tasks(ranker)
    seen = []

    def fit_round(frozen):
        seen.append(list(frozen))
        return fw.cross_validate(ranker, tasks, folds, [n for n in sorted(ranker.current) if n not in frozen], 3, 1.0)

    result, rounds, frozen = fw.back_off(fit_round, _gate(tmp_path, ranker), tests=(str(suite),), log=lambda _: None)
    assert seen == [[], ["bm25"]]
    assert rounds[0]["changed"] == {"bm25": [hand_bm25, 0.0]} and not rounds[0]["tests_ok"]
    assert len(rounds[0]["tests_failed"]) == 1 and rounds[0]["tests_failed"][0].endswith("::test_body_weight")
    assert list(rounds[0]["blamed"]) == ["bm25"]
    assert list(frozen) == ["bm25"] and frozen["bm25"] == rounds[0]["tests_failed"]
    assert result["tests_ok"] and rounds[1]["tests_ok"] and rounds[1]["stop"] == "the ranking tests pass"
    assert result["changed"] == {"path": [hand_path, round(hand_path * 2 ** 0.5, 6)]}  # the grid's first value that gains
    assert result["net"] == 12 and result["gain"] == 1.0  # every held-out task now has its gold file first
    assert fw.keep_rule(result["gain"], result["net"], 10, result["tests_ok"])[0]


def test_the_back_off_stops_when_every_weight_that_gains_is_frozen(tmp_path):
    """Both weights that could gain are pinned: after freezing both, no weight moves, and the back-off
    reports the last fit with its failing gate (nothing to keep) and why it stopped."""
    ranker = fw.Ranker()
    hand = ranker.current
    suite = _suite(tmp_path, f"def test_body_weight():\n    assert shipped_weights().features['bm25'] == {hand['bm25']!r}\n\n\n"
                             f"def test_path_weight():\n    assert shipped_weights().features['path'] == {hand['path']!r}\n")
    tasks, folds = _tasks(ranker)

    def fit_round(frozen):
        return fw.cross_validate(ranker, tasks, folds, [n for n in sorted(hand) if n not in frozen], 3, 1.0)

    result, rounds, frozen = fw.back_off(fit_round, _gate(tmp_path, ranker), tests=(str(suite),), log=lambda _: None)
    assert [r["frozen"] for r in rounds] == [[], ["bm25"], ["bm25", "path"]]
    assert rounds[-1]["stop"] == "no weight moved" and rounds[-1]["changed"] == {}
    assert sorted(frozen) == ["bm25", "path"]
    assert result is not None and not result["tests_ok"] and result["changed"] == {"path": [hand["path"], round(hand["path"] * 2 ** 0.5, 6)]}


def test_blame_falls_back_to_reverting_moves_in_turn_when_no_single_revert_fixes_a_test(tmp_path):
    """A test that needs both moves reverted: no single revert fixes it, so the moves are reverted one after
    another in name order until it passes, and both are blamed; a move no failing test needs is not."""
    ranker = fw.Ranker()
    hand = ranker.current
    suite = _suite(tmp_path, "def test_either_weight():\n"
                             f"    f = shipped_weights().features\n    assert f['bm25'] == {hand['bm25']!r} or f['path'] == {hand['path']!r}\n")
    gate = _gate(tmp_path, ranker)
    ok, failed = gate({"bm25": 2.0, "path": hand["path"] * 2}, [str(suite)])
    assert not ok and len(failed) == 1
    got = fw.blame({"bm25": [hand["bm25"], 2.0], "path": [hand["path"], hand["path"] * 2]}, failed, gate)
    assert got == {"bm25": failed, "path": failed}
    # with a third move that no test cares about, single reverts still fix nothing; the cumulative revert
    # stops as soon as the test passes (bm25, path) and never blames `symbol`
    moves = {"bm25": [hand["bm25"], 2.0], "path": [hand["path"], hand["path"] * 2], "symbol": [hand["symbol"], 3.0]}
    assert fw.blame(moves, failed, gate) == {"bm25": failed, "path": failed}


def test_every_share_of_the_file_is_fitted_on_the_tasks_whose_links_it_lends_along():
    """A share whose links the fitter does not look for never moves (co-change could not be fitted)."""
    from brain.search.ranking import Evidence

    ranker = fw.Ranker()
    links = {"cochange": [["src/b.go", 0.5, "changed with"]], "forward": ["src/fwd.h"], "build": "build.rs",
             "package_build": ["setup.py"], "folder": ["src/c.go"], "namesakes": ["other/a.go"],
             "kin": ["src/Base.java"], "family": ["src/AFoo.java"], "users": ["src/u.java"]}
    ev = Evidence.from_json({"schema": 1, "files": {
        "src/a.go": {"features": {"bm25": 1.0}, "reasons": [["bm25", 1.0, "body"]], "links": links},
        "single.h": {"features": {}, "reasons": [], "parts": ["src/a.go"]}}})
    used = ranker.features(ev)
    lent = {"cochange", "cochange_lift", "forward", "build", "package_build", "folder", "namesake", "kin", "family",
            "users", "copy"}
    assert lent <= used
    assert lent | {"bm25", "import", "twin", "override", "sibling", "entry_share"} >= set(ranker.shipped.shares) | {"bm25"}
    # a crate without a build script and a type written everywhere (None) lend nothing: not their tasks
    quiet = Evidence.from_json({"schema": 1, "files": {
        "src/a.go": {"features": {"bm25": 1.0}, "reasons": [["bm25", 1.0, "body"]], "links": {"users": None}}}})
    assert not {"build", "users", "cochange", "cochange_lift"} & ranker.features(quiet)


def test_a_share_at_zero_is_tried_at_small_absolute_values():
    ranker = fw.Ranker()
    tasks = []
    for i in range(4):
        row = {"id": f"t{i}", "repo": f"o/r{i}", "lang": "Go", "gold": ["src/b.go"], "bm25": [None]}
        ev = fw.Ranker().evidence({"schema": 1, "files": {
            "src/a.go": {"features": {"bm25": 1.0}, "reasons": [["bm25", 1.0, "body"]], "links": {"folder": ["src/b.go"]}},
            "src/b.go": {"features": {"bm25": 0.01}, "reasons": [["bm25", 0.01, "body"]]},
            **{f"src/n{j}.go": {"features": {"bm25": 0.1}, "reasons": [["bm25", 0.1, "body"]]} for j in range(6)}}})
        tasks.append(fw.Task(row, ev, ranker.features(ev)))
    assert ranker.current["folder"] == 0.0
    fitted = fw.fit(ranker, tasks, ranker.current, ["folder"], passes=1, min_gain_tasks=1.0)
    assert fitted["folder"] in fw.ZERO_SHARE_GRID



def test_a_held_out_read_scores_hand_set_against_the_changes_from_the_same_evidence():
    """fit_heldout ranks each task under the hand-set weights and under the changes, both through combine: a
    change that drops the feature putting the gold file first is a task lost at all@1 and none moved at all@5."""
    import fit_heldout
    from brain.search.ranking import Evidence, FileEvidence

    def scored(**features):
        return FileEvidence(dict(features), [(f, v, f) for f, v in features.items()], [], [], None)

    ranker = fw.Ranker()
    evidence = Evidence({"src/a.rs": scored(bm25=1.0), "src/b.rs": scored(bm25=0.5, symbol=4.0)})
    task = fw.Task({"id": "t1", "repo": "o/r", "lang": "Rust", "gold": ["src/b.rs"], "bm25": []}, evidence, set())
    out = fit_heldout.score(ranker, [task], {"symbol": 0.0})
    assert out["rows"][0]["hand"] == [1] and out["rows"][0]["fitted"] == [2]
    assert out["moved"]["all@1"] == {"gained": [], "lost": ["t1"]}
    assert out["moved"]["all@5"] == {"gained": [], "lost": []}
    assert out["macro"]["hand"]["all@1"] == 1.0 and out["macro"]["fitted"]["all@1"] == 0.0
    assert fit_heldout.score(ranker, [task], {})["moved"]["all@1"] == {"gained": [], "lost": []}
