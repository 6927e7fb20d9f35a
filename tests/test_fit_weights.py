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


def test_the_ranking_tests_gate_runs_the_tests_against_the_candidate_file(tmp_path):
    """A real pytest run: a test that asserts the candidate's value passes with the candidate and fails with
    the packaged file, so the gate reads what it is given and reports the failing test by name."""
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
