"""bench/build_corpus.py: the reserved-repository refusal and the commit selection, on git repositories made here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import build_corpus as corpus  # noqa: E402

OPTIONS = corpus.Options(before="2030-01-01T00:00:00Z", per_repo=60, max_files=5)


# --- the reserved list -------------------------------------------------------------------------------------------

def test_the_versioned_repository_list_holds_no_reserved_or_development_repository():
    entries = corpus.read_repository_list()
    names = [e["repo"] for e in entries]
    assert len(names) >= 80
    assert sum(e["language"] == "TypeScript" for e in entries) >= 10
    if not corpus.DEFAULT_RESERVED.is_file():
        pytest.skip(f"no reserved list at {corpus.DEFAULT_RESERVED}")
    reserved = corpus.read_reserved(corpus.DEFAULT_RESERVED)
    assert len(reserved) > 50
    assert not [n for n in names if n.lower() in reserved]
    corpus.refuse_reserved(names, reserved)  # raises on a reserved or development-set name


def test_a_reserved_name_is_refused_whatever_its_case_and_nothing_is_written(tmp_path):
    reserved_file = tmp_path / "reserved.txt"
    reserved_file.write_text("# reserved\nBurntSushi/ripgrep\n\npallets/flask  \n")
    reserved = corpus.read_reserved(reserved_file)
    assert reserved == {"burntsushi/ripgrep", "pallets/flask"}
    entries = [{"repo": "pallets/click", "language": "Python", "why": "x"},
               {"repo": "burntsushi/RIPGREP", "language": "Rust", "why": "x"}]
    out = tmp_path / "out" / "corpus.jsonl"
    with pytest.raises(corpus.RefusedRepositories) as caught:
        corpus.build(entries, tmp_path, out, OPTIONS, reserved, progress=lambda line: None)
    assert caught.value.repos == ["burntsushi/RIPGREP"] and caught.value.why == "reserved"
    assert not out.parent.exists()


def test_a_development_set_repository_is_refused():
    with pytest.raises(corpus.RefusedRepositories) as caught:
        corpus.refuse_reserved(["Django/Django", "pallets/click"], set())
    assert caught.value.repos == ["Django/Django"] and caught.value.why == "development-set"


def _run_main(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}
    return subprocess.run([sys.executable, str(BENCH / "build_corpus.py"), *args], capture_output=True, text=True,
                          env=env)


def test_the_command_refuses_a_list_holding_a_reserved_name_and_a_missing_reserved_list(tmp_path):
    listing = tmp_path / "repositories.json"
    listing.write_text(json.dumps({"repositories": [{"repo": "Pallets/Flask", "language": "Python", "why": "x"}]}))
    reserved = tmp_path / "reserved.txt"
    reserved.write_text("pallets/flask\n")
    out = tmp_path / "out.jsonl"
    refused = _run_main("--mirrors", str(tmp_path), "--repositories", str(listing), "--reserved", str(reserved),
                        "--out", str(out))
    assert refused.returncode == corpus.CorpusError.exit_code
    assert not out.exists()
    missing = _run_main("--mirrors", str(tmp_path), "--repositories", str(listing),
                        "--reserved", str(tmp_path / "absent.txt"), "--out", str(out))
    assert missing.returncode == corpus.CorpusError.exit_code
    assert not out.exists()
    with pytest.raises(corpus.ReservedListMissing):
        corpus.read_reserved(tmp_path / "absent.txt")


def test_the_command_refuses_a_folder_as_output_and_a_date_it_cannot_read(tmp_path):
    listing = tmp_path / "repositories.json"
    listing.write_text(json.dumps({"repositories": [{"repo": "acme/app", "language": "Python", "why": "x"}]}))
    reserved = tmp_path / "reserved.txt"
    reserved.write_text("# none\n")
    common = ("--mirrors", str(tmp_path), "--repositories", str(listing), "--reserved", str(reserved))
    assert _run_main(*common, "--out", str(tmp_path)).returncode == corpus.CorpusError.exit_code
    out = tmp_path / "out.jsonl"
    assert _run_main(*common, "--out", str(out), "--before", "yesterday").returncode == corpus.CorpusError.exit_code
    assert not out.exists()
    built = _run_main(*common, "--out", str(out))
    assert built.returncode == 0 and out.read_bytes() == b""  # no mirror: an empty corpus, said in the summary
    assert json.loads(out.with_suffix(".summary.json").read_text())["missing"] == ["acme/app"]


def test_the_command_refuses_a_reserved_name_given_with_repo(tmp_path):
    reserved = tmp_path / "reserved.txt"
    reserved.write_text("psf/requests\n")
    refused = _run_main("--mirrors", str(tmp_path), "--reserved", str(reserved), "--repo", "PSF/requests",
                        "--out", str(tmp_path / "out.jsonl"))
    assert refused.returncode == corpus.CorpusError.exit_code


@pytest.mark.parametrize("entry", [{"repo": "no-slash", "language": "Go", "why": "x"},
                                   {"repo": "a/b", "language": "Cobol", "why": "x"},
                                   {"repo": "a/b", "language": "Go", "why": " "}])
def test_a_bad_repository_list_entry_is_named(tmp_path, entry):
    listing = tmp_path / "repositories.json"
    listing.write_text(json.dumps({"repositories": [entry]}))
    with pytest.raises(corpus.BadRepositoryList) as caught:
        corpus.read_repository_list(listing)
    assert "entry 0" in caught.value.problem


def test_a_repository_listed_twice_is_refused(tmp_path):
    listing = tmp_path / "repositories.json"
    listing.write_text(json.dumps({"repositories": [{"repo": "a/b", "language": "Go", "why": "x"},
                                                    {"repo": "A/B", "language": "Go", "why": "y"}]}))
    with pytest.raises(corpus.BadRepositoryList):
        corpus.read_repository_list(listing)


# --- commit selection on a repository made here ----------------------------------------------------------------

class Repo:
    """A real git work tree with a fixed author and clock, so every run makes the same commits."""

    def __init__(self, path: Path):
        self.path = path
        self.tick = 0
        path.mkdir()
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        stamp = f"2023-01-01T00:{self.tick // 60:02d}:{self.tick % 60:02d}Z"
        env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@example.org", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.git("add", "-A")
        self.tick += 1
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def make_history(path: Path) -> dict[str, str]:
    repo = Repo(path)
    shas = {"root": repo.commit("initial import", {"src/app.py": "def run():\n    return 1\n",
                                                   "src/util.py": "X = 1\n", "README.md": "app\n",
                                                   "tests/test_app.py": "def test():\n    pass\n"})}
    shas["fix"] = repo.commit("Fix run returning the wrong value\n\nThe loop stopped early.\n\nCloses #12\n"
                              "Signed-off-by: a <a@example.org>",
                              {"src/app.py": "def run():\n    return 2\n", "src/new.py": "Y = 2\n",
                               "tests/test_app.py": "def test():\n    assert True\n", "README.md": "app!\n"})
    shas["tests_only"] = repo.commit("Fix flaky test", {"tests/test_app.py": "def test():\n    assert 1\n"})
    shas["docs_only"] = repo.commit("Fix the install steps", {"README.md": "app, installed\n",
                                                              "docs/install.rst": "pip install app\n"})
    shas["huge"] = repo.commit("Add many modules at once",
                               {"src/util.py": "X = 2\n", **{f"src/m{i}.py": f"M = {i}\n" for i in range(6)}})
    shas["revert"] = repo.commit(f'Revert "Add many modules at once"\n\nThis reverts commit {shas["huge"]}.',
                                 {"src/util.py": "X = 1\n"})
    shas["formatting"] = repo.commit("Fix spacing in util", {"src/util.py": "X  =  1\n"})
    shas["bump"] = repo.commit("Bump version to 1.2.3", {"src/app.py": "def run():\n    return 2  # 1.2.3\n"})
    shas["not_fix"] = repo.commit("Refactor the runner", {"src/app.py": "def run():\n    return 1 + 1  # 1.2.3\n"})
    shas["new_only"] = repo.commit("Add a helper module", {"src/helper.py": "Z = 3\n"})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("Fix util on a side branch", {"src/util.py": "X = 5\n"})
    repo.git("checkout", "-q", "main")
    repo.tick += 1
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch side: fix util", "side")
    shas["side"] = side
    shas["merge"] = repo.git("rev-parse", "HEAD")
    shas["feature"] = repo.commit("feat: support a second runner (#34)",
                                  {"src/app.py": "def run():\n    return 2\n\n\ndef run2():\n    return 3\n",
                                   "src/util.py": None})
    return shas


def test_commit_selection_keeps_fixes_and_features_and_skips_the_rest(tmp_path):
    shas = make_history(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    reasons = {commit["sha"]: corpus.skip_reason(gd, commit, OPTIONS) for commit in corpus.first_parent_log(gd, OPTIONS)}
    assert reasons[shas["fix"]] is None and reasons[shas["feature"]] is None
    assert reasons[shas["merge"]] == "merge"
    assert reasons[shas["revert"]] == "revert"
    assert reasons[shas["tests_only"]] == "tests-only"
    assert reasons[shas["docs_only"]] == "docs-only"
    assert reasons[shas["huge"]] == "huge"
    assert reasons[shas["formatting"]] == "formatting-only"
    assert reasons[shas["bump"]] == "version"
    assert reasons[shas["not_fix"]] == "not-fix-or-feature"
    assert reasons[shas["new_only"]] == "new-files-only"
    assert reasons[shas["root"]] == "root"
    assert shas["side"] not in reasons  # first-parent history only

    tasks, skipped = corpus.select_tasks(gd, "acme/app", "Python", OPTIONS)
    assert [t["commit"] for t in tasks] == [shas["feature"], shas["fix"]]  # newest first
    feature, fix = tasks
    assert fix["base_commit"] == shas["root"]
    assert fix["gold_files"] == ["src/app.py"]  # the test, the README and the file it adds are not gold
    assert fix["added_files"] == ["src/new.py"]
    assert fix["issues"] == [12] and fix["pull_request"] is None
    assert fix["problem_statement"] == "Fix run returning the wrong value\n\nThe loop stopped early.\n\nCloses #12"
    assert fix["instance_id"] == f"acme/app@{shas['fix'][:12]}" and fix["language"] == "Python"
    assert feature["gold_files"] == ["src/app.py", "src/util.py"]  # a file the commit deletes existed at the parent
    assert feature["pull_request"] == 34 and feature["issues"] == []
    assert skipped["merge"] == 1 and sum(skipped.values()) == 10


def test_the_cut_off_date_and_the_cap_bound_the_tasks(tmp_path):
    shas = make_history(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    capped, _ = corpus.select_tasks(gd, "acme/app", "Python", corpus.Options(before=OPTIONS.before, per_repo=1,
                                                                            max_files=5))
    assert [t["commit"] for t in capped] == [shas["feature"]]
    before_feature, _ = corpus.select_tasks(gd, "acme/app", "Python",
                                            corpus.Options(before="2023-01-01T00:00:05Z", max_files=5))
    assert [t["commit"] for t in before_feature] == [shas["fix"]]


def test_the_corpus_is_byte_identical_across_builds_and_a_mirror_gaining_commits(tmp_path):
    make_history(tmp_path / "work")
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "work"), str(mirrors / "acme+app" / "repo")],
                   check=True)
    entries = [{"repo": "acme/app", "language": "Python", "why": "made here"},
               {"repo": "acme/absent", "language": "Go", "why": "no mirror"}]
    options = corpus.Options(before="2023-06-01T00:00:00Z", max_files=5)
    first, second = tmp_path / "a" / "corpus.jsonl", tmp_path / "b" / "corpus.jsonl"
    summary = corpus.build(entries, mirrors, first, options, set(), progress=lambda line: None)
    assert summary["tasks"] == 2 and summary["missing"] == ["acme/absent"]
    assert summary["per_language"] == {"Python": 2}
    # the mirror gains a later fix: the cut-off keeps it out
    stamp = "2024-05-01T00:00:00Z"
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.org", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@example.org", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    (tmp_path / "work" / "src" / "app.py").write_text("def run():\n    return 9\n")
    subprocess.run(["git", "-C", str(tmp_path / "work"), "commit", "-qam", "Fix run again"], check=True, env=env)
    subprocess.run(["git", "-C", str(tmp_path / "work"), "push", "-q", str(mirrors / "acme+app" / "repo"), "main"],
                   check=True)
    corpus.build(entries, mirrors, second, options, set(), progress=lambda line: None)
    assert first.read_bytes() == second.read_bytes()
    assert first.with_suffix(".summary.json").read_bytes() == second.with_suffix(".summary.json").read_bytes()
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    assert [r["problem_statement"].splitlines()[0] for r in rows] == ["feat: support a second runner (#34)",
                                                                      "Fix run returning the wrong value"]


def test_a_mirror_with_no_history_before_the_cut_off_is_named_in_the_summary(tmp_path):
    make_history(tmp_path / "work")
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "work"), str(mirrors / "acme+app" / "repo")],
                   check=True)
    entries = [{"repo": "acme/app", "language": "Python", "why": "made here"}]
    summary = corpus.build(entries, mirrors, tmp_path / "out.jsonl", corpus.Options(before="2020-01-01T00:00:00Z"),
                           set(), progress=lambda line: None)
    assert summary["tasks"] == 0
    assert summary["per_repo"]["acme/app"]["no_history_before_cutoff"] is True
    assert (tmp_path / "out.jsonl").read_bytes() == b""


def test_the_history_held_out_check_names_no_reserved_repository_and_refuses_one(tmp_path):
    import bench_heldout

    reserved_file = tmp_path / "reserved.txt"
    reserved_file.write_text("Google/GSON\n")
    code = bench_heldout.main(["--mirrors", str(tmp_path / "m"), "--trees", str(tmp_path / "t"), "--repo",
                               "google/gson", "--reserved", str(reserved_file)])
    assert code == corpus.CorpusError.exit_code
    assert not (tmp_path / "t").exists()
    if not corpus.DEFAULT_RESERVED.is_file():
        pytest.skip(f"no reserved list at {corpus.DEFAULT_RESERVED}")
    corpus.refuse_reserved(list(bench_heldout.REPOS), corpus.read_reserved(corpus.DEFAULT_RESERVED))


def test_a_commit_message_cannot_forge_changed_files_or_flood_the_corpus(tmp_path):
    """Commit messages come from cloned repositories: a message holding the log's own separator and a
    status line names no file, and a message too long to be a task text is skipped, not written."""
    repo = Repo(tmp_path / "work")
    repo.commit("initial import", {"src/app.py": "A = 1\n", "src/other.py": "B = 1\n"})
    forged = repo.commit("Fix the app\x02\n\nM\tsrc/other.py\n", {"src/app.py": "A = 2\n"})
    flood = repo.commit("Fix the app again\n\n" + "word " * 5000, {"src/app.py": "A = 3\n"})
    gd = tmp_path / "work" / ".git"
    log = {c["sha"]: c for c in corpus.first_parent_log(gd, OPTIONS)}
    assert log[forged]["changes"] == [("M", "src/app.py")]
    assert corpus.skip_reason(gd, log[flood], OPTIONS) == "long-text"
    tasks, _ = corpus.select_tasks(gd, "acme/app", "Python", OPTIONS)
    assert [(t["commit"], t["gold_files"]) for t in tasks] == [(forged, ["src/app.py"])]
    assert "\x02" not in tasks[0]["problem_statement"]
