"""Live state on both backends: LWW, expected revision, bounds, TTL and max-N pruning,
concurrent writers, computed busy/queue, and the CLI/boot surfaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings, strategies as st

from brain.errors import InvalidInput, NotFound, RevisionConflict, TooLarge
from brain.livestate import LiveLimits, LiveState
from coordkit import backend, backend_spec, clock  # noqa: F401  (fixtures)


@pytest.fixture
def live(backend, clock):
    backend.migrate()
    return LiveState(backend, clock=clock)


def test_last_writer_wins_and_keeps_unwritten_fields(live, clock):
    live.set("build", intent="ship login", progress="tests red")
    clock.advance(1)
    e = live.set("build", progress="tests green", writer="sess-x")
    assert (e.intent, e.progress, e.revision, e.writer) == ("ship login", "tests green", 2, "sess-x")
    [read] = live.read("build")
    assert read.to_dict() == {**e.to_dict(), "busy": False, "queue": 0}


def test_expected_revision_refuses_a_stale_write(live):
    live.set("k", intent="a", expected_revision=0)
    with pytest.raises(RevisionConflict) as err:
        live.set("k", intent="b", expected_revision=0)
    assert (err.value.expected, err.value.actual) == (0, 1)
    assert live.set("k", intent="b", expected_revision=1).revision == 2
    assert live.read("k")[0].intent == "b"


def test_fields_are_bounded_and_refused_not_truncated(live):
    with pytest.raises(TooLarge):
        live.set("k", intent="x" * 201)
    with pytest.raises(TooLarge):
        live.set("k" * 200, intent="x")
    with pytest.raises(InvalidInput):
        live.set("k")
    with pytest.raises(InvalidInput):
        live.set("k", status="asleep")
    with pytest.raises(NotFound):
        live.read("k")  # nothing was written by the refused calls
    assert live.set("k", intent="line one\nline two").intent == "line one line two"


def test_pruned_by_ttl_and_max_n(backend, clock):
    backend.migrate()
    live = LiveState(backend, clock=clock, limits=LiveLimits(ttl=100, max_keys=3))
    for i in range(5):
        live.set(f"k{i}", intent=str(i))
        clock.advance(1)
    assert [e.key for e in live.read()] == ["k4", "k3", "k2"]
    clock.advance(101)
    assert live.read() == []
    live.set("fresh", intent="x")
    assert [e.key for e in live.read()] == ["fresh"]
    with backend.transaction(write=False) as tx:
        assert tx.execute("SELECT COUNT(*) FROM livestate")[0][0] == 1  # pruned rows are gone, not hidden


def test_concurrent_writers_lww_holds_and_revisions_are_gap_free(live):
    errors = []

    def writer(n):
        try:
            for i in range(25):
                live.set("shared", progress=f"w{n}-{i}", writer=f"w{n}")
        except Exception as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    [e] = live.read("shared")
    assert e.revision == 150
    assert e.progress.startswith(e.writer + "-")  # the row is one writer's whole write


def test_concurrent_compare_and_set_lets_exactly_one_win(live):
    live.set("cas", intent="v0")
    wins, conflicts = [], []

    def attempt(n):
        try:
            live.set("cas", intent=f"v{n}", expected_revision=1)
            wins.append(n)
        except RevisionConflict:
            conflicts.append(n)

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(wins) == 1 and len(conflicts) == 7
    assert live.read("cas")[0].intent == f"v{wins[0]}"


OPS = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["intent", "progress", "delegation"]),
                         st.text(alphabet="xyz ", max_size=8)), max_size=25)


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_lww_merge_matches_a_dictionary_model(tmp_path_factory, ops):
    """Property: after any sequence of writes, each key holds the last value written to each field."""
    from brain.backends.sqlite import SqliteBackend

    b = SqliteBackend(tmp_path_factory.mktemp("lww") / "brain.db")
    live = LiveState(b)
    model: dict[str, dict[str, str]] = {}
    for key, field, value in ops:
        entry = live.set(key, **{field: value})
        model.setdefault(key, {"intent": "", "progress": "", "delegation": ""})[field] = " ".join(value.split())
        assert getattr(entry, field) == model[key][field]
    got = {e.key: {"intent": e.intent, "progress": e.progress, "delegation": e.delegation} for e in live.read()}
    assert got == model
    b.close()


def _brain(repo, *args, env=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def test_cli_workstate_and_boot_slot(brain, repo):
    out = _brain(repo, "workstate", "--set", "build", "--intent", "ship login", "--progress", "2/5", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["revision"] == 1
    stale = _brain(repo, "workstate", "--set", "build", "--progress", "3/5", "--expect", "0", "--json")
    assert stale.returncode == 6 and json.loads(stale.stderr)["error"] == "revision_conflict"
    shown = json.loads(_brain(repo, "workstate", "--json").stdout)
    assert [(e["key"], e["progress"], e["busy"]) for e in shown] == [("build", "2/5", False)]
    boot = brain.boot("anything", record=False)
    assert "Project state" in boot.text and "ship login" in boot.text
    assert any(s["slot"] == "livestate" for s in boot.to_dict()["sections"])
