"""Clear errors for broken state (issue 12, class 6).

- real damaged SQLite files (truncated, garbage bytes, a valid header over broken pages):
  `brain doctor` names the file and the way out; the derived index rebuilds itself;
- integers far outside any real use through the CLI, MCP and the web UI: a typed
  `invalid_input` (exit 2, HTTP 400), never a traceback, an OverflowError or a 500;
- text with a NUL character: refused identically on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import brain as brainlib
from brain.errors import InvalidInput
from coordkit import backend, backend_spec, clock, coord  # noqa: F401  (fixtures)

BOUND = 60
HUGE = st.one_of(st.integers(min_value=2**63), st.integers(max_value=-(2**63)))
FAST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def cli(repo, *args, env=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=BOUND, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def damage(path, how: str) -> None:
    """Damage a real SQLite file the way a crash, a bad copy or a disk does."""
    for suffix in ("-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass
    size = path.stat().st_size
    if how == "truncated":
        os.truncate(path, min(size - 1, 3000))
    elif how == "garbage":
        path.write_bytes(os.urandom(8192))
    else:  # a valid 100-byte header, every page after the first overwritten
        with open(path, "r+b") as handle:
            handle.seek(4096)
            handle.write(b"\xa5" * max(size - 4096, 4096))


def _checkpointed(path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


@pytest.fixture
def indexed(brain, repo):
    brain.write("notes/pelican.md", "# Pelican migration\n\nThe pelican route goes through the harbour.\n")
    (repo / "src").mkdir()
    (repo / "src" / "harbour.py").write_text("def pelican_route():\n    return 1\n")
    brain.reindex()
    brain.index.close()
    _checkpointed(brain.runtime / "index.db")
    return brain


@pytest.mark.parametrize("how", ["truncated", "garbage", "broken_pages"])
def test_a_damaged_index_is_named_by_doctor_and_rebuilt_by_search_and_boot(indexed, repo, how):
    db = indexed.runtime / "index.db"
    damage(db, how)
    doctor = cli(repo, "doctor", "--json")
    check = next(c for c in json.loads(doctor.stdout) if c["check"] == "index")
    assert not check["ok"] and check["file"] == str(db) and "brain index --rebuild" in check["fix"]
    found = cli(repo, "search", "pelican", "--json")
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    assert "notes/pelican.md" in [h["path"] for h in json.loads(found.stdout)]
    damage(db, how)
    booted = cli(repo, "boot", "--task", "fix the pelican route in harbour", "--json")
    assert booted.returncode == 0 and "Traceback" not in booted.stderr, booted.stderr
    damage(db, how)
    assert cli(repo, "index").returncode == 0
    assert next(c for c in json.loads(cli(repo, "doctor", "--json").stdout) if c["check"] == "index")["ok"]


@pytest.mark.parametrize("how", ["truncated", "garbage", "broken_pages"])
def test_a_damaged_coordination_store_is_named_with_the_way_out(brain, repo, how):
    session = brain.coord.start_session("build").id
    for i in range(40):  # a few pages of rows
        brain.coord.claim(session, f"src/module_{i}/**")
    brain.backend.close()
    db = brain.store_dir / "brain.db"
    _checkpointed(db)
    damage(db, how)
    doctor = cli(repo, "doctor", "--json")
    check = next(c for c in json.loads(doctor.stdout) if c["check"] == "backend")
    assert doctor.returncode != 0 and not check["ok"] and check["file"] == str(db)
    assert "mv " in check["fix"]
    for args in (("session", "list", "--json"), ("claims", "--json")):
        out = cli(repo, *args)
        error = json.loads(out.stdout or out.stderr)
        assert out.returncode == 7 and "Traceback" not in out.stderr
        assert (error["error"], error["path"], error["store"]) == ("damaged_store", str(db), "coordination store")


# -- huge integers ------------------------------------------------------------------------------------------------

@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(number=HUGE)
def test_huge_integers_on_the_command_line_are_refused_with_exit_2(brain, repo, number):
    session = brain.coord.start_session("cli").id
    for args in (("release", "--session", session, str(number)), ("claim", "--session", session, "--renew",
                                                                     str(number)),
                 ("log", "--page", str(number)), ("boot", "--budget", str(number)),
                 ("workstate", "--set", "k", "--intent", "x", "--expect", str(number)),
                 ("signals", "--session", session, "--limit", str(number))):
        out = cli(repo, *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert lines[-1].startswith("error: ") and sum(line.startswith("error") for line in lines) == 1


@pytest.mark.parametrize("value, code", [("1e30", 4), ("86401", 4), (str(2**70), 4), ("-5", 4), ("86400", 0)])
def test_the_ask_timeout_has_a_documented_maximum(brain, repo, value, code):
    out = cli(repo, "session", "list", "--json", env={"BRAIN_ASK_TIMEOUT": value})
    assert out.returncode == code and "Traceback" not in out.stderr
    if code:
        assert json.loads(out.stdout or out.stderr)["file"] == "BRAIN_ASK_TIMEOUT"  # a SettingsError naming it


def _mcp(brain, calls):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from brain.mcp.server import build_server

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(build_server(brain)) as client:
                return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


@FAST
@given(number=HUGE)
def test_huge_integers_over_mcp_are_invalid_input_never_internal(brain, number):
    calls = [("brain_claim", {"item": "src/x.py", "renew": number}), ("brain_release", {"claim": number}),
             ("brain_boot", {"budget": number}), ("workstate_set", {"intent": "x", "expected_revision": number}),
             ("brain_claim", {"item": "src/y.py", "ttl": number}), ("ask_agent", {"ticket": "ask-x",
                                                                                  "wait_seconds": number}),
             ("brain_signals", {"limit": number}), ("brain_search", {"query": "x", "limit": number})]
    for (name, _), result in zip(calls, _mcp(brain, calls)):
        assert result.is_error, name
        assert result.structured_content["error"] in ("invalid_input", "not_found"), (name, result.content)


@FAST
@given(number=HUGE)
def test_huge_integers_in_the_web_ui_are_400_never_500(brain, number):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from brain.web import create_app

    brain.coord.start_session("web")
    with TestClient(create_app(brain, warm=False), base_url="http://127.0.0.1:8766",
                    raise_server_exceptions=False) as c:
        for url in (f"/threads/x?page={number}", f"/claims?page={number}", f"/claims/decide?a={number}&b=1",
                    f"/threads/x?upto={number}", f"/fragments/claims?page={number}"):
            assert c.get(url).status_code == 400, url


# -- NUL characters, identically on both backends -------------------------------------------------------------------

def _rows(coord):
    with coord.backend.transaction(write=False) as tx:
        return [tx.execute(f"SELECT * FROM {t}") for t in ("sessions", "claims", "signals", "livestate", "asks")]


def test_text_with_a_nul_character_is_refused_identically_on_both_backends(coord):
    me = coord.start_session("build").id
    other = coord.start_session("review").id
    before = _rows(coord)
    attempts = [
        lambda: coord.signal(me, other, "hello\x00world"),
        lambda: coord.claim(me, "src/a\x00b.py"),
        lambda: coord.checkpoint(me, "step\x00one"),
        lambda: coord.checkpoint(me, "step", note="a\x00b"),
        lambda: coord.livestate.set(me, intent="in\x00tent", writer=me),
        lambda: coord.livestate.set("key\x00", intent="x", writer=me),
        lambda: coord.arm(me, other, "why\x00?", timeout=5),
        lambda: coord.session(me + "\x00"),
        lambda: coord.release(me, item="src/\x00"),
        lambda: coord.signal(me, other + "\x00", "hi"),
    ]
    for attempt in attempts:
        with pytest.raises(InvalidInput):
            attempt()
    assert _rows(coord) == before


@FAST
@given(text=st.text(alphabet=st.sampled_from("ab \x00é\u2028\U0001f600"), min_size=1, max_size=12)
       .filter(lambda t: t.strip()))
def test_any_text_is_accepted_or_refused_the_same_way_on_both_backends(coord, text):
    me = coord.start_session("build").id
    try:
        coord.signal(me, me, text)
        accepted = True
    except InvalidInput:
        accepted = False
    assert accepted == ("\x00" not in text)


def test_the_web_ui_answers_503_not_500_on_a_damaged_store(brain, repo):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from brain.web import create_app

    session = brain.coord.start_session("build").id
    for i in range(40):
        brain.coord.claim(session, f"src/m{i}/**")
    brain.backend.close()
    _checkpointed(brain.store_dir / "brain.db")
    damage(brain.store_dir / "brain.db", "broken_pages")
    fresh = brainlib.open_brain(repo)
    with TestClient(create_app(fresh, warm=False), base_url="http://127.0.0.1:8766",
                    raise_server_exceptions=False) as c:
        for url in ("/work", "/claims", "/signals"):
            response = c.get(url)
            assert response.status_code == 503, (url, response.status_code)
            assert str(brain.store_dir / "brain.db") in response.text


def test_a_file_overwritten_under_an_open_connection_is_healed_at_the_next_search(indexed):
    """A connection's page cache can answer from a file that was overwritten in place; the next search
    must still find the damage and rebuild, not leave a broken file for every other process."""
    from brain.search.index import sqlite_file_problem

    assert "notes/pelican.md" in [h["path"] for h in indexed.search("pelican")]
    damage(indexed.runtime / "index.db", "garbage")
    assert "notes/pelican.md" in [h["path"] for h in indexed.search("pelican")]
    assert sqlite_file_problem(indexed.runtime / "index.db") is None
    assert indexed.index.generation == 1


def test_threads_of_one_server_all_recover_from_one_damaged_index(indexed):
    """A server searches from a pool of threads: after the index is damaged every thread answers, and the
    rebuilt file is not discarded again by a thread that still held the damaged one."""
    import threading

    from brain.search.index import sqlite_file_problem

    pool = 4
    barrier = threading.Barrier(pool, timeout=BOUND)
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def worker(n):
        try:
            indexed.search("pelican")  # every thread holds its own connection to the healthy index
            barrier.wait()
            if n == 0:
                damage(indexed.runtime / "index.db", "garbage")
            barrier.wait()
            results[n] = [h["path"] for h in indexed.search("pelican")]
            barrier.wait()
            results[n] += [h["path"] for h in indexed.search("harbour")]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(pool)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(BOUND)
    assert not errors and len(results) == pool
    assert all("notes/pelican.md" in paths for paths in results.values())
    assert sqlite_file_problem(indexed.runtime / "index.db") is None
    assert indexed.index.generation == 1  # one rebuild for the whole pool, not one per thread


def test_searches_keep_answering_while_another_thread_rebuilds_the_index(indexed):
    """`brain index --rebuild` (or a heal) replaces the file while other threads open connections: none
    of them may see it half-gone (no "disk I/O error", no "no such table"), and the result is whole."""
    import threading

    from brain.search.index import sqlite_file_problem

    rounds, readers = 25, 3
    stop = threading.Event()
    errors: list[BaseException] = []
    answered = [0] * readers

    def reader(n):
        try:
            while not stop.is_set():
                indexed.index.close()  # a new connection each time: the moment that must never see a gap
                assert "notes/pelican.md" in [h["path"] for h in indexed.search("pelican")]
                answered[n] += 1
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(readers)]
    for t in threads:
        t.start()
    try:
        for _ in range(rounds):
            indexed.index.rebuild()
    finally:
        stop.set()
        for t in threads:
            t.join(BOUND)
    assert not errors
    assert all(answered)
    assert sqlite_file_problem(indexed.runtime / "index.db") is None
    assert not list(indexed.runtime.glob("index.db.rebuild-*"))


def _searcher(repo, ready, go, out):
    """A process of a multi-worker server: holds a connection to the index (page 1 read, nothing else
    cached) when ``ready`` is set, searches once ``go`` is set."""
    import brain as _brainlib

    b = _brainlib.open_brain(repo)
    b.index.db  # noqa: B018 - connected before the damage, as a long-running worker is
    ready.set()
    go.wait(BOUND)
    out.put([h["path"] for h in b.search("pelican")])


def test_worker_processes_rebuild_a_damaged_index_once(indexed, repo):
    """A worker that held the index when it was damaged, and finds it damaged after another worker rebuilt
    it, reopens that rebuild instead of discarding it again (one rebuild, not one per worker)."""
    import multiprocessing
    import sqlite3

    ctx = multiprocessing.get_context("spawn")
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    held = ctx.Process(target=_searcher, args=(repo, ready, go, out))
    held.start()
    try:
        assert ready.wait(BOUND)
        damage(indexed.runtime / "index.db", "garbage")
        fresh = cli(repo, "search", "pelican", "--json")  # another worker: finds the damage and rebuilds
        assert fresh.returncode == 0 and "notes/pelican.md" in [h["path"] for h in json.loads(fresh.stdout)]
        witness = sqlite3.connect(indexed.runtime / "index.db")  # a mark in that rebuild
        witness.execute("INSERT INTO meta(key, value) VALUES ('witness', 'first rebuild')")
        witness.commit()
        witness.close()
        go.set()
        paths = out.get(timeout=BOUND)
    finally:
        held.join(BOUND)
        if held.is_alive():
            held.kill()
    assert "notes/pelican.md" in paths
    kept = sqlite3.connect(indexed.runtime / "index.db")
    try:
        assert kept.execute("SELECT value FROM meta WHERE key = 'witness'").fetchall() == [("first rebuild",)]
    finally:
        kept.close()
