"""bench/fit_guard.py, the development-set guard of the fitter: fitted weights are kept only if they are not
worse than the hand-set ones on Django and the six-language set, re-ranked from dumped evidence; a move
that costs a development figure is blamed and frozen like one that breaks a ranking test."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent / "bench"))

import fit_guard  # noqa: E402
import fit_weights as fw  # noqa: E402
import locbench  # noqa: E402

from brain.search.ranking import EVIDENCE_SCHEMA  # noqa: E402
from test_fit_weights import _tasks  # noqa: E402


def _item(tid: str, lang: str, files: dict, gold: list[str], boot: list[str]) -> dict:
    return {"id": tid, "repo": "o/dev", "lang": lang, "gold": gold, "boot": boot,
            "evidence": {"schema": EVIDENCE_SCHEMA, "files": files}}


def _dev_dump(folder: Path) -> Path:
    """A Django task whose gold file only BM25 finds (a lower `bm25` drops it below a file one identifier
    names), and two six-language tasks the path finds, dumped as the two benchmarks dump them."""
    django = [_item("django__1", "Python",
                    {"django/a.py": {"features": {"bm25": 1.0}, "reasons": [["bm25", 1.0, "body"]]},
                     "django/b.py": {"features": {"symbol": 1.0}, "reasons": [["symbol", 1.0, "defines X"]]}},
                    ["django/a.py"], ["django/a.py", "django/b.py"])]
    multi = [_item(f"go__{i}", lang, {"src/gold.c": {"features": {"path": 1.0}, "reasons": [["path", 1.0, "named"]]}},
                   ["src/gold.c"], ["src/gold.c"]) for i, lang in enumerate(("C", "Go"))]
    locbench.write_evidence(folder / fit_guard.FILES["django"], django)
    locbench.write_evidence(folder / fit_guard.FILES["multilang"], multi)
    return folder


def test_the_dumped_evidence_loads_and_the_hand_set_combine_is_the_boot(tmp_path):
    ranker = fw.Ranker()
    sets = fit_guard.load_sets(ranker, _dev_dump(tmp_path))
    assert sorted(sets) == ["django", "multilang"] and len(sets["django"]) == 1 and len(sets["multilang"]) == 2
    assert fit_guard.hand_equals_boot(ranker, sets) == {"django": [1, 1], "multilang": [2, 2]}
    figures = fit_guard.scores(ranker, sets, ranker.weights({}))["figures"]
    assert figures["django acc@1"] == 1.0 and figures["multilang all@5"] == 1.0
    assert figures["multilang all@5 per language"] == {"C": 1.0, "Go": 1.0}


def test_the_guard_fails_a_check_the_candidate_loses_and_names_the_task(tmp_path):
    ranker = fw.Ranker()
    sets = fit_guard.load_sets(ranker, _dev_dump(tmp_path))
    ok, failed, report = fit_guard.guard(ranker, sets, {"bm25": 0.0})
    assert not ok and "dev:django acc@1" in failed
    assert report["dev:django acc@1"]["lost"] == ["django__1"] and report["dev:django acc@1"]["fitted"] == 0.0
    assert "dev:multilang all@5" not in failed  # a set the move does not touch keeps its check
    ok, failed, _ = fit_guard.guard(ranker, sets, {"path": ranker.current["path"] * 2})
    assert ok and failed == []


def test_a_missing_set_fails_its_checks_rather_than_passing_unchecked(tmp_path):
    ranker = fw.Ranker()
    (tmp_path / "only").mkdir()
    locbench.write_evidence(tmp_path / "only" / fit_guard.FILES["multilang"], [])
    ok, failed, report = fit_guard.guard(ranker, fit_guard.load_sets(ranker, tmp_path / "only"), {})
    assert not ok and "dev:django acc@1" in failed and "error" in report["dev:django acc@1"]


def test_the_keep_rule_needs_the_guard_too():
    assert fw.keep_rule(0.004, 12, 10, True, True)[0]
    kept, why = fw.keep_rule(0.004, 12, 10, True, False)
    assert not kept and "development set" in why
    kept, why = fw.keep_rule(0.004, 12, 10, True, None)
    assert not kept and "guard was not run" in why


def test_the_back_off_freezes_a_move_that_costs_a_development_set_and_refits_on_the_corpus(tmp_path):
    """The corpus tasks gain by a lower `bm25` (fitted first, in name order) or a higher `path`; the lower
    `bm25` loses the Django task. The guard fails, blame reverts `bm25` alone and the check passes again, so
    `bm25` is frozen and the re-fit gains through `path`, which the development sets accept. The ranking
    tests are not run here (the gate's pytest half is stubbed to pass): real fits, a real guard."""
    ranker = fw.Ranker()
    hand = ranker.current
    sets = fit_guard.load_sets(ranker, _dev_dump(tmp_path))
    dev_hand = fit_guard.scores(ranker, sets, ranker.weights({}))
    ran = []
    gate = fw.combined_gate(ranker, sets, dev_hand, tmp_path / "candidate.json",
                            run_tests=lambda path, ids: (ran.append(list(ids)), (True, []))[1])
    tasks, folds = _tasks(ranker)  # the fitter tests' Go tasks: only a `path` move ranks their gold first

    def fit_round(frozen):
        return fw.cross_validate(ranker, tasks, folds, [n for n in sorted(hand) if n not in frozen], 3, 1.0)

    result, rounds, frozen = fw.back_off(fit_round, gate, tests=("tests/test_ranking.py", *fit_guard.CHECKS),
                                         log=lambda _: None, blamer=fw.combined_blame(ranker, sets, dev_hand))
    assert rounds[0]["changed"] == {"bm25": [hand["bm25"], 0.0]}
    assert "dev:django acc@1" in rounds[0]["tests_failed"] and list(rounds[0]["blamed"]) == ["bm25"]
    assert "bm25" in frozen and result["tests_ok"]
    assert result["changed"] == {"path": [hand["path"], round(hand["path"] * 2 ** 0.5, 6)]}
    assert ran == [["tests/test_ranking.py"]] * 2  # once per round: the blame of a guard check runs no pytest
    ok, failed, _ = fit_guard.guard(ranker, sets, {n: v[1] for n, v in result["changed"].items()}, hand=dev_hand)
    assert ok and fw.keep_rule(result["gain"], result["net"], 10, True, ok)[0]


def test_a_loss_no_single_revert_fixes_is_blamed_on_the_moves_that_give_it_back(tmp_path):
    """Two Django tasks, each lost to a different move (`bm25` halved, `symbol` halved): reverting either
    alone leaves Acc@1 short, so the blame reverts greedily (the revert that gives back the most first) and
    blames both; `history`, which no task holds, is not blamed although it moved too."""
    ranker = fw.Ranker()
    hand = ranker.current

    def file(feature, value):
        return {"features": {feature: value}, "reasons": [[feature, value, feature]]}
    django = [_item("django__1", "Python", {"a.py": file("bm25", 1.0), "b.py": file("path", 0.9 * hand["bm25"] / hand["path"])}, ["a.py"], []),
              _item("django__2", "Python", {"c.py": file("symbol", 1.0), "d.py": file("quote", 0.2)}, ["c.py"], [])]
    locbench.write_evidence(tmp_path / fit_guard.FILES["django"], django)
    sets = fit_guard.load_sets(ranker, tmp_path)
    moves = {"bm25": [hand["bm25"], hand["bm25"] / 2], "symbol": [hand["symbol"], hand["symbol"] / 2],
             "history": [hand["history"], hand["history"] * 4]}
    checks = ["dev:django acc@1"]
    ok, failed, report = fit_guard.guard(ranker, sets, {n: v[1] for n, v in moves.items()}, checks)
    assert not ok and report["dev:django acc@1"]["lost"] == ["django__1", "django__2"]
    for name in moves:  # no single revert passes the check
        assert not fit_guard.guard(ranker, sets, {n: v[1] for n, v in moves.items() if n != name}, checks)[0]
    assert fit_guard.blame(ranker, sets, moves, failed) == {"bm25": checks, "symbol": checks}


def test_the_fitter_refuses_a_development_dump_naming_a_reserved_repository(tmp_path, capsys):
    """The guard's sets are the development sets; a dump naming a reserved repository stops the fit before
    any fitting (the corpus results here are a stub: the refusal comes first)."""
    import json

    dump = tmp_path / "dev"
    locbench.write_evidence(dump / fit_guard.FILES["multilang"], [
        _item("x__1", "C", {"a.c": {"features": {"path": 1.0}, "reasons": [["path", 1.0, "named"]]}}, ["a.c"], [])
        | {"repo": "Owner/Secret"}])
    listing = tmp_path / "reserved.txt"
    listing.write_text("owner/secret\n")
    results = tmp_path / "corpus.json"
    results.write_text(json.dumps({"summary": {"fold_of": {"o/r": 0}}, "rows": [
        {"id": "o/r#1", "repo": "o/r", "lang": "Go", "gold": ["a.go"], "bm25": [1]}]}))
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    (evidence / "o+r.jsonl").write_text(json.dumps({"id": "o/r#1", "evidence": {"schema": EVIDENCE_SCHEMA, "files": {
        "a.go": {"features": {"path": 1.0}, "reasons": [["path", 1.0, "named"]]}}}}) + "\n")
    code = fw.main(["--results", str(results), "--evidence", str(evidence), "--dev-evidence", str(dump),
                    "--reserved", str(listing), "--out", str(tmp_path / "fit.json"), "--dry-run"])
    assert code != 0 and "Owner/Secret" in capsys.readouterr().err
    assert not (tmp_path / "fit.json").exists()
