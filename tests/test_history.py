"""The history index (past commits of HEAD) and the two ranking features it feeds: real git repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import brain as brainlib
from brain.search.history_store import MAX_FILES_PER_COMMIT, MAX_MESSAGE_BYTES, parse_log, refresh_history
from brain.search.locate import locate
from conftest import git

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def messages(b) -> set[str]:
    return {row[0] for row in b.index.db.execute("SELECT subject FROM hist_commits")}


def files_of(b, subject: str) -> list[str]:
    return sorted(r[0] for r in b.index.db.execute(
        "SELECT path FROM hist_files JOIN hist_commits ON hist_commits.id = hist_files.commit_id "
        "WHERE subject = ?", (subject,)))


@pytest.fixture
def shop(repo):
    commit(repo, "Initial import", {
        "shop/gateway.py": "def charge(card):\n    return send(card)\n",
        "shop/ledger_sync.py": "def post_entry(entry):\n    return entry\n",
        "shop/catalog.py": "def list_products():\n    return []\n",
        "shop/tax.py": "def vat(amount):\n    return amount * 0.2\n",
        "tests/test_gateway.py": "def test_charge():\n    pass\n"})
    return repo


def test_history_is_read_from_head_only(shop):
    git(shop, "checkout", "-q", "-b", "side")
    commit(shop, "Side branch work on tax", {"shop/tax.py": "def vat(amount):\n    return amount * 0.21\n"})
    git(shop, "checkout", "-q", "main")
    older = commit(shop, "Catalog paging", {"shop/catalog.py": "def list_products(page=0):\n    return []\n"})
    commit(shop, "Catalog sorting", {"shop/catalog.py": "def list_products(page=0, key=None):\n    return []\n"})
    b = brainlib.init(shop)
    b.reindex()
    assert {"Catalog paging", "Catalog sorting", "Initial import"} <= messages(b)
    assert "Side branch work on tax" not in messages(b)  # another ref is never read
    # a checkout of an older commit (a benchmark at a task's base) sees only its past
    git(shop, "checkout", "-q", "--detach", older)
    b.reindex()
    assert "Catalog sorting" not in messages(b) and "Catalog paging" in messages(b)
    assert files_of(b, "Initial import") == ["shop/catalog.py", "shop/gateway.py",
                                                            "shop/ledger_sync.py", "shop/tax.py"]  # no test file


def test_refresh_is_incremental_and_a_noop_reads_no_log(shop, monkeypatch):
    b = brainlib.init(shop)
    b.reindex()
    before = b.index.db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0]
    commit(shop, "Ledger retries", {"shop/ledger_sync.py": "def post_entry(entry, retries=3):\n    return entry\n"})
    b.index.refresh_code()
    assert b.index.db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0] == before + 1
    ids = dict(b.index.db.execute("SELECT subject, id FROM hist_commits"))
    assert ids["Ledger retries"] > ids["Initial import"]  # appended, older rows kept
    streamed = []
    from brain.gitsafe import GitRepo

    original = GitRepo.stream
    monkeypatch.setattr(GitRepo, "stream", lambda self, *a: streamed.append(a) or original(self, *a))
    assert refresh_history(b.index.db, b.repo) == {"commits": -1, "added": 0}
    assert streamed == []  # HEAD unchanged: one rev-parse, no log


def test_a_rewritten_history_is_rebuilt(shop):
    commit(shop, "Tax rounding", {"shop/tax.py": "def vat(amount):\n    return round(amount * 0.2, 2)\n"})
    b = brainlib.init(shop)
    b.reindex()
    assert "Tax rounding" in messages(b)
    git(shop, "reset", "-q", "--hard", "HEAD~1")
    commit(shop, "Tax rounding, half up", {"shop/tax.py": "def vat(amount):\n    return round(amount / 5, 2)\n"})
    b.index.refresh_code()
    assert "Tax rounding" not in messages(b) and "Tax rounding, half up" in messages(b)
    assert b.index.db.execute("SELECT COUNT(*) FROM hist_fts").fetchone()[0] == len(messages(b))


def test_bounded_inputs(shop):
    (shop / "shop" / "tax.py").write_text("def vat(amount):\n    return amount\n")
    (shop.parent / "huge.txt").write_text("Huge message\n\n" + "word " * 400_000)  # 2 MB
    git(shop, "commit", "-q", "-a", "-F", str(shop.parent / "huge.txt"))
    # a commit touching 10,000 files, built in the index only (one blob): writing them is slow, not the point
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=shop, input=b"x\n", capture_output=True,
                          check=True).stdout.decode().strip()
    listing = "".join(f"100644 {blob}\tgen/f{i}.py\n" for i in range(10_000))
    subprocess.run(["git", "update-index", "--index-info"], cwd=shop, input=listing.encode(), check=True)
    git(shop, "commit", "-q", "-m", "Generate ten thousand files")
    git(shop, "rm", "-q", "-r", "--cached", "gen")
    git(shop, "commit", "-q", "-m", "Drop the generated files")
    latin = shop / "msg.txt"
    latin.write_bytes("Caf\xe9 cr\xe8me for the catalog\n".encode("latin-1"))
    subprocess.run(["git", "-c", "i18n.commitEncoding=latin1", "commit", "-q", "--allow-empty", "-F", str(latin)],
                   cwd=shop, check=True, env=ENV)
    tree = git(shop, "write-tree").strip()
    raw = subprocess.run(["git", "commit-tree", tree, "-p", "HEAD"], cwd=shop, check=True, env=ENV,
                         input=b"Raw \xff\xfe bytes in the ledger\n", capture_output=True).stdout.decode().strip()
    git(shop, "reset", "-q", "--soft", raw)
    odd = "shop/we\nird.py"
    commit(shop, "A file name with a newline", {odd: "def odd():\n    return 1\n"})
    b = brainlib.init(shop)
    b.reindex()
    db = b.index.db
    assert "Huge message" in messages(b)
    stored = db.execute("SELECT message FROM hist_fts JOIN hist_commits ON hist_commits.id = hist_fts.rowid "
                        "WHERE subject = 'Huge message'").fetchone()[0]
    assert len(stored) <= MAX_MESSAGE_BYTES + 100  # cut while read, never held whole
    assert not {"Generate ten thousand files", "Drop the generated files"} & messages(b)  # too wide: skipped
    assert any("catalog" in m and "Caf" in m for m in messages(b))
    assert any(m.startswith("Raw") and "ledger" in m for m in messages(b))
    assert files_of(b, "A file name with a newline") == [odd]
    found = locate(b.index.code_view(), "Café crème", limit=5)  # decoded text reaches the full-text side
    assert found is not None


def test_parse_log_structure_cannot_be_forged():
    sha = "a" * 40
    forged = f"{'b' * 40} 123".encode()  # a file named like a header stays a file
    items = [f"{sha} 100".encode(), b"subject\n\nbody", b"\n:000000 100644 0 1 A", forged, b":100644 000000 1 0 D",
             b"gone.py", f"{'c' * 40} 99".encode(), b"next"]
    commits = parse_log(iter(items))
    assert [c.sha for c in commits] == [sha, "c" * 40]
    assert commits[0].files == [("A", forged.decode()), ("D", "gone.py")] and commits[0].touched == 2
    assert commits[1].message == "next" and commits[1].files == []
    many = [f"{sha} 1".encode(), b"m"] + [x for i in range(MAX_FILES_PER_COMMIT * 3)
                                         for x in (b":0 0 0 0 M", f"f{i}.py".encode())]
    one = parse_log(iter(many))[0]
    assert one.touched == MAX_FILES_PER_COMMIT * 3 and len(one.files) <= MAX_FILES_PER_COMMIT + 1


def test_no_git_repository_and_no_commit_cost_nothing(tmp_path):
    plain = tmp_path / "plain"
    (plain / "pkg").mkdir(parents=True)
    (plain / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    b = brainlib.init(plain)
    b.reindex()
    assert b.index.db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0] == 0
    assert locate(b.index.code_view(), "f returns one").paths == ["pkg/mod.py"]
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    (empty / "m.py").write_text("def g():\n    return 2\n")
    e = brainlib.init(empty)
    assert refresh_history(e.index.db, empty) == {"commits": 0, "added": 0}


def _history_shop(repo: Path) -> None:
    """Past fixes of gateway timeouts always touched the ledger sync too, whose code shares no word with them."""
    for n in range(3):
        commit(repo, f"Fix timeout when the gateway retries a declined charge ({n})", {
            "shop/gateway.py": f"def charge(card):\n    return send(card, attempt={n})\n",
            "shop/ledger_sync.py": f"def post_entry(entry):\n    return entry + {n}\n"})
        commit(repo, f"Catalog listing cleanup {n}", {"shop/catalog.py": f"def list_products():\n    return [{n}]\n"})


def test_history_ranks_a_file_the_text_never_names(shop):
    b = brainlib.init(shop)
    b.reindex()
    task = "Timeout when the gateway retries a declined charge"
    without = locate(b.index.code_view(), task, limit=10)
    assert "shop/ledger_sync.py" not in without.paths  # nothing in the text or the code points at it
    _history_shop(shop)
    b.index.refresh_code()
    found = locate(b.index.code_view(), task, limit=10)
    assert found.paths[:2] == ["shop/gateway.py", "shop/ledger_sync.py"]
    reasons = dict((h.path, h.reasons) for h in found.files)
    assert any(r.startswith("changed by a past commit like this task (") and "Fix timeout" in r
               for r in reasons["shop/ledger_sync.py"])


def test_history_counts_by_how_like_the_task_the_closest_commit_is(shop):
    """The history feature is relative to the best file, so a report no past commit resembles (one word of
    its environment section matching an unrelated commit) would still give that commit's files full weight:
    the closest commit's absolute likeness scales it."""
    from brain.search.history import LIKENESS_FULL, history_evidence, likeness
    from brain.search.signals import extract_signals

    _history_shop(shop)
    commit(shop, "Enable rounding of fractional cents on macOS builds",
           {"shop/tax.py": "def vat(amount):\n    return round(amount * 0.2)\n"})
    for n, subject in enumerate(("Negative refund amounts rounded toward zero in exports",
                                 "Copy the array of invoice lines before sorting totals",
                                 "Rebuild stale ledger indices during nightly reconciliation")):
        commit(shop, subject, {"shop/ledger_sync.py": f"def post_entry(entry):\n    return entry * {n + 2}\n"})
    b = brainlib.init(shop)
    b.reindex()
    view = b.index.code_view()
    ids = [r[0] for r in view.db.execute("SELECT id FROM hist_commits")]

    def history(text):
        got = {}
        history_evidence(view, extract_signals(text).words, lambda path, value, reason: got.__setitem__(path, value))
        return got

    close = "Timeout when the gateway retries a declined charge"
    far = "Negative array indices wrap twice\n\nEnvironment: macOS"  # each word in a different past commit
    near = likeness(view.db, extract_signals(close).words, ids)
    unlike = likeness(view.db, extract_signals(far).words, ids)
    assert near >= LIKENESS_FULL > unlike > 0  # a past commit says the same / none says much of it
    assert likeness(view.db, [], ids) == 0.0 and likeness(view.db, ["timeout"], []) == 0.0
    assert history(close)["shop/ledger_sync.py"] == 1.0  # full weight: the closest commit is like the task
    weak = history(far)
    assert max(weak.values()) == pytest.approx(unlike / LIKENESS_FULL)  # the best file's weight, scaled (< 1)


def test_a_one_line_task_counts_its_history_more(shop):
    """A title alone (the shape of the commit subjects history matches it against) has its history evidence
    scaled by `history_one_line`; a text with a body keeps it as measured."""
    from brain.search.ranking import gather
    from brain.search.signals import extract_signals
    from brain.search.weights import shipped_weights

    assert extract_signals("Timeout when the gateway retries").one_line
    assert not extract_signals("Timeout when the gateway retries\n\nIt retries a declined charge.").one_line
    _history_shop(shop)
    b = brainlib.init(shop)
    b.reindex()
    view = b.index.code_view()
    title = "Timeout when the gateway retries a declined charge"
    scale = shipped_weights().params["history_one_line"]
    assert scale > 1.0

    def history(text, weights=None):
        return {p: f.features["history"] for p, f in gather(view, text, weights=weights).files.items()
                if "history" in f.features}

    alone, plain = history(title), history(title, shipped_weights().replace({"history_one_line": 1.0}))
    assert plain and alone == {p: pytest.approx(scale * v) for p, v in plain.items()}
    body = title + "\n\nSeen in the nightly run."
    assert history(body) == history(body, shipped_weights().replace({"history_one_line": 1.0}))


def test_cochange_lends_to_files_changing_with_the_best_candidate(shop):
    for n in range(4):
        commit(shop, f"Update rates {n}", {"shop/tax.py": f"def vat(amount):\n    return amount * 0.{n + 1}\n",
                                           "shop/ledger_sync.py": f"def post_entry(entry):\n    return entry - {n}\n"})
    b = brainlib.init(shop)
    b.reindex()
    found = locate(b.index.code_view(), "the `vat` function", limit=10)
    assert found.paths[0] == "shop/tax.py"
    hit = next(h for h in found.files if h.path == "shop/ledger_sync.py")
    assert any(r.startswith("changes together with `shop/tax.py` (5 of its 5 commits)") for r in hit.reasons)
    assert "shop/catalog.py" not in found.paths  # one shared commit (the initial import) is chance


def test_a_repository_whose_config_brain_refuses_costs_the_history_only(shop):
    marker = shop.parent / "ran"
    git(shop, "config", "hook.evil.event", "pre-commit")
    git(shop, "config", "hook.evil.command", f"touch {marker}")
    b = brainlib.init(shop)
    b.reindex()  # the code index is built; the history is not read under a configuration that names a hook
    assert b.index.db.execute("SELECT COUNT(*) FROM code_files").fetchone()[0] > 0
    assert b.index.db.execute("SELECT COUNT(*) FROM hist_commits").fetchone()[0] == 0
    assert not marker.exists()


def test_a_benchmark_tree_at_a_base_commit_has_its_past_only(shop, tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import locbench

    base = commit(shop, "Catalog paging", {"shop/catalog.py": "def list_products(page=0):\n    return []\n"})
    commit(shop, "The fix itself", {"shop/catalog.py": "def list_products(page=1):\n    return []\n"})
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(shop), str(bare)], check=True)
    tree = locbench.tree_at(bare, base, tmp_path / "trees" / "shop@base", True)
    assert tree.name == "shop@base+history"
    b = brainlib.init(tree)
    b.reindex()
    assert "Catalog paging" in messages(b) and "The fix itself" not in messages(b)
    plain = locbench.tree_at(bare, base, tmp_path / "trees" / "shop@base", False)  # git archive: no history
    p = brainlib.init(plain)
    p.reindex()
    assert not (plain / ".git").exists() and messages(p) == set()


def test_the_newest_commits_are_kept_past_the_bound(shop, monkeypatch):
    monkeypatch.setattr("brain.search.history_store.MAX_COMMITS", 3)
    b = brainlib.init(shop)
    for n in range(3):
        commit(shop, f"Tax change {n}", {"shop/tax.py": f"def vat(amount):\n    return amount * {n}\n"})
    b.reindex()
    assert messages(b) == {"Tax change 0", "Tax change 1", "Tax change 2"}  # the initial import is past the bound
    for n in range(3, 5):
        commit(shop, f"Tax change {n}", {"shop/tax.py": f"def vat(amount):\n    return amount + {n}\n"})
    b.index.refresh_code()  # incremental: two more, the two oldest dropped with their files and words
    assert messages(b) == {"Tax change 2", "Tax change 3", "Tax change 4"}
    db = b.index.db
    assert db.execute("SELECT COUNT(*) FROM hist_fts").fetchone()[0] == 3
    assert db.execute("SELECT COUNT(DISTINCT commit_id) FROM hist_files").fetchone()[0] == 3


def test_a_noop_refresh_takes_no_write_lock(shop):
    import sqlite3

    b = brainlib.init(shop)
    b.reindex()
    other = sqlite3.connect(b.index.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writing the index
    try:
        b.index.db.execute("PRAGMA busy_timeout = 50")
        assert refresh_history(b.index.db, b.repo) == {"commits": -1, "added": 0}
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_the_streaming_runner_refuses_network_commands(shop):
    from brain.gitsafe import GitRepo

    for command in ("fetch", "clone", "push"):
        with pytest.raises(ValueError):
            GitRepo(shop).stream(command, "origin")


def test_a_cochanged_file_the_text_also_points_at_is_lifted(shop):
    """The co-change lift (decision 0072): on a real history, a file with evidence of its own that changes
    with the best file gains over the additive share alone, and stays below it."""
    from brain.search.weights import shipped_weights

    for n in range(4):
        commit(shop, f"Update rates {n}", {"shop/tax.py": f"def vat(amount):\n    return amount * 0.{n + 1}\n",
                                           "shop/ledger_sync.py": f"def post_entry(entry):\n    return entry - {n}\n"})
    b = brainlib.init(shop)
    b.reindex()
    view = b.index.code_view()
    text = "the `vat` function gives a wrong amount to `charge` for an entry"
    off = locate(view, text, limit=10, weights=shipped_weights().replace({"cochange_lift": 0.0}))
    on = locate(view, text, limit=10)
    score = {h.path: h.score for h in on.files}
    before = {h.path: h.score for h in off.files}
    assert off.paths[:3] == ["shop/tax.py", "shop/gateway.py", "shop/ledger_sync.py"]
    assert on.paths[:3] == ["shop/tax.py", "shop/ledger_sync.py", "shop/gateway.py"]  # lifted past the second
    assert before["shop/ledger_sync.py"] < score["shop/ledger_sync.py"] < score["shop/tax.py"]
    assert score["shop/gateway.py"] == before["shop/gateway.py"]  # no history with the best file: not lifted
