"""Search index: identifier-aware tokens, incremental vs rebuild, bounded results, graph, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from brain.errors import InvalidInput, NotFound
from brain.search.index import SNIPPET_CHARS
from brain.search.tokenize import split_identifier, tokens


# -- tokens ----------------------------------------------------------------------

def test_identifiers_split_and_kept_whole():
    assert tokens("parseHTTPResponse") == ["parsehttpresponse", "parse", "http", "response"]
    assert tokens("bulk_create") == ["bulk_create", "bulk", "create"]
    got = tokens("django.db.models.query")
    assert got[0] == "django.db.models.query" and {"django", "db", "models", "query"} <= set(got)
    got = tokens("src/brain/search/index.py")
    assert got[0] == "src/brain/search/index.py" and {"search", "index", "py"} <= set(got)
    assert tokens("The parse", stop=True) == ["parse"]
    assert tokens("café 日本語") == ["café", "日本語"]


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_tokens_are_lowercase_and_stable(text):
    got = tokens(text)
    assert all(t == t.lower() and t and " " not in t for t in got)
    assert tokens(text) == got  # the cache never changes an answer


@given(st.from_regex(r"[a-z]{1,6}(_[a-z]{1,6}|[A-Z][a-z]{1,6}){1,3}", fullmatch=True))
def test_every_identifier_is_found_by_its_parts_and_whole(word):
    got = set(tokens(word))
    assert word.lower() in got
    assert set(split_identifier(word)) <= got


# -- fixtures --------------------------------------------------------------------

def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(brain):
    repo = brain.repo
    _write(repo, "shop/__init__.py", "")
    _write(repo, "shop/orders.py", "from shop.pricing import PriceTable\n\nclass OrderBook:\n"
                                   "    def bulk_create(self, rows):\n        return PriceTable().apply(rows)\n")
    _write(repo, "shop/pricing.py", '"""Prices and discounts."""\n\nclass PriceTable:\n    def apply(self, rows):\n'
                                    "        return rows\n\nDEFAULT_CURRENCY = 'EUR'\n")
    _write(repo, "tests/test_orders.py", "def test_bulk_create():\n    assert True\n")
    brain.write("notes/deploy.md", "# Deploying\n\nRun the parseHTTPResponse smoke check before a release.\n")
    brain.write("decisions/0001-use-sqlite.md", "# 1. Use SQLite\n\nStatus: accepted\n\nThe index lives in `shop/pricing.py`.\n")
    brain.write("decisions/0002-use-postgres.md", "# 2. PostgreSQL for teams\n\nSupersedes 1.\n")
    return brain


# -- search ----------------------------------------------------------------------

def test_search_finds_memory_and_code_with_bounded_snippets(project):
    hits = project.search("parse http response")
    assert hits[0]["path"] == "notes/deploy.md" and hits[0]["kind"] == "note"
    code = project.search("bulk_create", kind="code")
    assert code[0]["path"] == "shop/orders.py" and "OrderBook.bulk_create" in code[0]["snippet"]
    assert project.search("PriceTable", kind="decision") == []
    assert project.search("bulkCreate")[0]["path"] == "shop/orders.py"
    project.write("notes/big.md", "# Big\n\n" + ("pricing words go here and on " * 2000) + "\n")
    for hit in project.search("pricing words", limit=100):
        assert len(hit["snippet"]) <= SNIPPET_CHARS and len(hit["title"]) <= 240
    assert not any(h["path"].startswith("tests/") for h in project.search("bulk_create", limit=100))


def test_search_refuses_bad_input(project):
    for bad in ("", "   "):
        with pytest.raises(InvalidInput) as err:
            project.search(bad)
        assert err.value.field == "query"
    with pytest.raises(InvalidInput) as err:
        project.search("x", kind="nope")
    assert err.value.field == "kind"
    for bad in (0, 101, "3", True):
        with pytest.raises(InvalidInput) as err:
            project.search("x", limit=bad)
        assert err.value.field == "limit"


def test_writes_update_an_existing_index_incrementally(project):
    project.reindex()
    assert project.search("zanzibar") == []
    project.write("notes/trip.md", "# Trip\n\nZanzibar in June.\n")
    assert [h["path"] for h in project.search("zanzibar")] == ["notes/trip.md"]
    project.write("notes/trip.md", "# Trip\n\nLisbon in June.\n")
    assert project.search("zanzibar") == []


def test_a_write_never_creates_the_index(brain):
    brain.write("notes/a.md", "# A\n")
    assert not (brain.runtime / "index.db").exists()
    brain.boot(None, record=False)
    assert not (brain.runtime / "index.db").exists()


def test_incremental_and_rebuild_give_identical_indexes(project):
    project.reindex()
    # change everything the index derives from: memory, code, deletions, a new file
    project.write("notes/deploy.md", "# Deploying v2\n\nNow with a canary.\n")
    os.unlink(project.dir / "decisions/0002-use-postgres.md")
    _write(project.repo, "shop/orders.py", "class OrderBook:\n    def cancel(self):\n        pass\n")
    st = (project.repo / "shop/orders.py").stat()
    os.utime(project.repo / "shop/orders.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    _write(project.repo, "shop/refunds.py", "from shop.orders import OrderBook\n\ndef refund():\n    return OrderBook()\n")
    os.unlink(project.repo / "shop/pricing.py")
    project.reindex()
    incremental = project.index.dump()
    searches = [project.search(q) for q in ("canary", "refund", "OrderBook cancel", "sqlite")]
    project.reindex(rebuild=True)
    assert project.index.dump() == incremental
    assert [project.search(q) for q in ("canary", "refund", "OrderBook cancel", "sqlite")] == searches


def test_deleting_runtime_loses_nothing(project):
    project.reindex()
    before = [project.search(q) for q in ("deploying", "PriceTable", "postgres")]
    related = project.related("shop/orders.py")
    project.index.close()
    shutil.rmtree(project.runtime)
    fresh = type(project)(project.dir, project.settings, project.env)
    assert [fresh.search(q) for q in ("deploying", "PriceTable", "postgres")] == before
    assert fresh.related("shop/orders.py") == related


def test_search_disabled_answers_nothing(project):
    project.settings.values["search.enabled"] = False
    assert project.search("deploying") == []
    assert not (project.runtime / "index.db").exists()


# -- graph -----------------------------------------------------------------------

def test_graph_links_imports_modules_and_decisions(project):
    found = project.related("shop/orders.py")
    assert {"node": "file:shop/pricing.py", "via": "file:shop/orders.py"} in found["related"]["imports"]
    assert found["related"]["in"][0]["node"] == "module:shop"
    decision = project.related("2")
    assert {"node": "decision:1", "via": "decision:2"} in decision["related"]["supersedes"]
    about = project.related("0001-use-sqlite")
    assert {"node": "file:shop/pricing.py", "via": "decision:1"} in about["related"]["decides-about"]
    assert any(i["node"] == "decision:1" for i in project.related("shop/pricing.py")["related"]["decides-about (from)"])
    with pytest.raises(NotFound):
        project.related("no/such/thing.py")


def test_cards_describe_their_module(project):
    project.write("modules/shop.md", "# shop\n\nFiles: `shop/orders.py`, `shop/pricing.py`\n")
    project.reindex()
    assert {"node": "module:shop", "via": "card:shop"} in project.related("shop")["related"].get("describes", []) or \
        {"node": "module:shop", "via": "card:shop"} in project.related("card:shop")["related"]["describes"]


# -- CLI -------------------------------------------------------------------------

def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brain", "-C", str(repo), *args], capture_output=True, text=True,
                          timeout=60)


def test_cli_index_search_related(project):
    out = _cli(project.repo, "index", "--json")
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    assert stats["code"]["files"] == 4 and stats["graph"]["nodes"] > 0
    assert _cli(project.repo, "index", "--rebuild", "--quiet").stdout == ""
    out = _cli(project.repo, "search", "parse", "http", "--json", "--limit", "3")
    assert json.loads(out.stdout)[0]["path"] == "notes/deploy.md"
    out = _cli(project.repo, "search", "OrderBook")
    assert out.returncode == 0 and "shop/orders.py" in out.stdout
    out = _cli(project.repo, "related", "shop/orders.py", "--json")
    assert json.loads(out.stdout)["nodes"] == ["file:shop/orders.py"]
    bad = _cli(project.repo, "search", "x", "--kind", "nope", "--json")
    assert bad.returncode == 2 and json.loads(bad.stderr)["field"] == "kind"
    missing = _cli(project.repo, "related", "nothing-here")
    assert missing.returncode == NotFound.exit_code


def test_search_from_other_threads(project):
    import threading

    project.reindex()
    results, errors = [], []

    def worker():
        try:
            results.append(project.search("deploying")[0]["path"])
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors and results == ["notes/deploy.md"] * 4


def test_threads_that_find_the_same_new_files_index_them_once(project):
    """The threads of a server all see the same edited files: each checks, one writes, none fails on a
    row another thread inserted between its check and its write (UNIQUE constraint on the path)."""
    import threading

    project.reindex()
    for n in range(24):
        _write(project.repo, f"shop/extra_{n}.py", f"def extra_{n}(rows):\n    return rows[{n}:]\n")
    pool = 4
    barrier = threading.Barrier(pool, timeout=30)
    errors: list[BaseException] = []

    def worker():
        try:
            project.index.db  # noqa: B018 - every thread opens its own connection first
            barrier.wait()
            project.index.refresh_code()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(pool)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    db = project.index.db
    assert db.execute("SELECT COUNT(*) FROM code_files WHERE path LIKE 'shop/extra_%'").fetchone()[0] == 24
    assert db.execute("SELECT COUNT(*) FROM fn_files WHERE path LIKE 'shop/extra_%'").fetchone()[0] == 24


def test_a_reader_from_an_earlier_call_keeps_working_after_the_file_moved(project):
    """A checkpoint (here: the file touched) makes the next call reopen its connection; a code view an
    earlier call of the same boot still holds must keep answering, not fail on a closed database."""
    import os

    from brain.search.tokenize import tokens

    project.reindex()
    view = project.index.code_view()
    before = [p for p, _ in view.bm25(tokens("price table apply"), 5)]
    stamp = os.stat(project.runtime / "index.db")
    os.utime(project.runtime / "index.db", ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000))
    assert project.search("deploying")  # reopens: the file moved
    assert [p for p, _ in view.bm25(tokens("price table apply"), 5)] == before
    assert "shop/pricing.py" in before


def test_nested_module_cards_keep_their_full_name(project):
    _write(project.repo, "shop/api/__init__.py", "")
    _write(project.repo, "shop/api/routes.py", "def list_orders():\n    return []\n")
    project.write("modules/shop/api.md", "# shop/api\n\nFiles: `shop/api/routes.py`\n")
    project.reindex()
    found = project.related("card:shop/api")
    assert {"node": "module:shop/api", "via": "card:shop/api"} in found["related"]["describes"]
    assert project.search("list orders", kind="code")[0]["path"] == "shop/api/routes.py"


def _plain_fts5(index, expression: str, floor: int | None = None) -> list[str]:
    """The ranking FTS5 gives by itself (every match ranked), over rowids >= ``floor`` if given."""
    rows = index.db.execute(
        "SELECT docs.path FROM docs_fts JOIN docs ON docs.id = docs_fts.rowid WHERE docs_fts MATCH ? "
        "AND docs_fts.rowid >= ? ORDER BY bm25(docs_fts, 3.0, 1.0, 1.0) LIMIT 10",
        (expression, -(2 ** 63) if floor is None else floor)).fetchall()
    return [r[0] for r in rows]


def test_a_common_word_ranks_the_newest_candidates_only(tmp_path, monkeypatch):
    """At most CANDIDATES matches are ranked (the most recently indexed; a rewritten note is new again):
    below the cap the order is FTS5's own, above it the same ranking over the newest matches."""
    from brain.search import index_query
    from brain.search.index import SearchIndex

    monkeypatch.setattr(index_query, "CANDIDATES", 40)
    (tmp_path / ".brain").mkdir()
    index = SearchIndex(tmp_path / ".brain", tmp_path, tmp_path / ".brain" / "runtime")
    best = ("notes/best.md", "note", "# best\n\nplover plover plover\n")  # the strongest match, indexed first
    index.add_documents([best] + [(f"notes/n{i:03d}.md", "note", f"# n{i}\n\nplover and {i} other words of "
                                   f"filler text{' lapwing' if i % 3 == 0 else ''}\n") for i in range(30)])
    assert [h.path for h in index.search("plover")] == _plain_fts5(index, '"plover"')
    assert index.search("plover")[0].path == "notes/best.md"  # 31 matches: all ranked
    assert [h.path for h in index.search("plover lapwing")] == _plain_fts5(index, '"plover" AND "lapwing"')
    index.add_documents([(f"notes/m{i:03d}.md", "note", f"# m{i}\n\nplover in a longer note {i} about "
                          "something else entirely\n") for i in range(60)])
    found = [h.path for h in index.search("plover")]  # 91 matches: the newest 40 ranked
    floor = index.db.execute("SELECT MIN(id) FROM (SELECT id FROM docs ORDER BY id DESC LIMIT 40)").fetchone()[0]
    assert found == _plain_fts5(index, '"plover"', floor) and "notes/best.md" not in found
    index.add_documents([best[:2] + (best[2] + "rewritten\n",)])  # written again: new, so ranked again
    assert index.search("plover")[0].path == "notes/best.md"
    index.close()


def _reference_snippet(text: str, query: set[str], width: int = 240) -> str:
    """``snippet`` before the whole-text check (each line lowered and tested against every word)."""
    import re

    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    best, best_score = 0, 0
    for i, line in enumerate(lines[:2000]):
        low = line.lower()
        got = sum(1 for q in query if q in low)
        if got > best_score:
            best, best_score = i, got
    out = lines[best]
    j = best + 1
    while len(out) < width and j < len(lines):
        out += " / " + lines[j]
        j += 1
    out = re.sub(r"\s+", " ", out)
    return out if len(out) <= width else out[: width - 1].rstrip() + "…"


def test_snippet_picks_the_line_it_picked_before():
    import random

    from brain.search.index_query import snippet

    rng = random.Random(3)
    words = ["Cart", "total", "cart", "TOTAL", "empty", "ΣΑΣ", "σας", "İd", "id", "x", "", "  "]
    for _ in range(2000):
        text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 8)))
        query = {w.lower() for w in rng.sample(words, 3) if w.strip()}
        assert snippet(text, query) == _reference_snippet(text, query), (text, query)


def test_snippet_lowers_an_ascii_text_once_and_picks_the_same_line():
    """The ASCII path lowers the whole text once and splits it again: every kind of line break, blank lines,
    tabs and long texts (past the 2,000 lines looked at) give the line the per-line lowering gave."""
    import random

    from brain.search.index_query import snippet

    rng = random.Random(11)
    words = ["Cart", "total", "CART", "Total", "empty", "id", "ID", "x", "", "\t", " "]
    breaks = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\n\n", "\n \t\n"]
    for n in range(600):
        lines = rng.randint(0, 2200 if n % 50 == 0 else 12)
        text = "".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 5))) + rng.choice(breaks)
                       for _ in range(lines))
        query = {w.lower() for w in rng.sample(words, 3) if w.strip()}
        assert text.isascii()
        assert snippet(text, query) == _reference_snippet(text, query), (text[:200], query)
