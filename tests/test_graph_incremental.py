"""The graph follows what changed: a no-op refresh does no graph work, one note re-resolves only its links."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

import brain as brainlib
from brain.search.graph import rebuild_graph

COUNTER = """
CREATE TABLE IF NOT EXISTS test_graph_writes(n INTEGER);
INSERT INTO test_graph_writes SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM test_graph_writes);
""" + "".join(f"""CREATE TRIGGER IF NOT EXISTS test_count_{table}_{event.lower()} AFTER {event} ON {table} BEGIN
  UPDATE test_graph_writes SET n = n + 1; END;
""" for table in ("nodes", "edges") for event in ("INSERT", "DELETE", "UPDATE"))


def count_graph_writes(brain) -> None:
    """Count every row written to or deleted from the graph tables (a trigger in the index file itself)."""
    brain.index.db.executescript(COUNTER)


def graph_writes(brain) -> int:
    return brain.index.db.execute("SELECT n FROM test_graph_writes").fetchone()[0]


def graph(brain) -> tuple[list, list]:
    db = brain.index.db
    return sorted(db.execute("SELECT * FROM nodes")), sorted(db.execute("SELECT * FROM edges"))


def write_note(brain, rel: str, text: str, stamp: list[int]) -> None:
    """Write a memory file with an mtime of its own (a rewrite in the same clock tick is still seen)."""
    path = brain.dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp[0] += 1_000_000_000
    os.utime(path, ns=(stamp[0], stamp[0]))


def linked_notes(brain, count: int) -> None:
    stamp = [1_700_000_000 * 10**9]
    for i in range(count):
        text = f"# Note {i}\n\nSee [[n{(i + 1) % count}]] and [[notes/n{(i + 7) % count}]].\n"
        write_note(brain, f"notes/n{i}.md", text, stamp)
    (brain.dir / "modules").mkdir(exist_ok=True)
    write_note(brain, "modules/api.md", "# api\n\nThe api card, see [[n3]].\n", stamp)


def test_a_no_op_refresh_does_no_graph_work(brain):
    linked_notes(brain, 40)
    first = brain.reindex()
    assert first["graph"]["edges"] > 80
    count_graph_writes(brain)
    before = graph(brain)
    again = brain.reindex()
    assert graph_writes(brain) == 0  # not a row of nodes or edges deleted or written
    assert again["graph"]["work"] == "none" and graph(brain) == before
    assert {k: again["graph"][k] for k in ("nodes", "edges")} == {k: first["graph"][k] for k in ("nodes", "edges")}


def test_a_caller_dropping_the_answer_gets_no_counts(brain):
    """A task boot (``ensure_index``) drops update_graph's answer: the no-op counts neither table."""
    from brain.search.graph import update_graph
    from brain.search.service import ensure_index

    linked_notes(brain, 10)
    first = brain.reindex()
    assert update_graph(brain.index, counts=False) == {"work": "none"}
    assert update_graph(brain.index) == {"nodes": first["graph"]["nodes"], "edges": first["graph"]["edges"],
                                         "work": "none"}
    seen: list[str] = []
    brain.index.db.set_trace_callback(seen.append)
    try:
        ensure_index(brain)
    finally:
        brain.index.db.set_trace_callback(None)
    assert not [q for q in seen if "COUNT(*) FROM nodes" in q or "COUNT(*) FROM edges" in q]


def test_one_changed_note_rewrites_only_its_own_links(brain):
    linked_notes(brain, 200)
    brain.reindex()
    count_graph_writes(brain)
    stamp = [1_800_000_000 * 10**9]
    write_note(brain, "notes/n50.md", "# Note 50\n\nNow only [[n51]] and [[missing]].\n", stamp)
    stats = brain.reindex()
    assert graph_writes(brain) <= 6  # its old link to n57 out (its other link and the nodes kept), not 600 rows
    assert stats["graph"]["work"] == "links"
    incremental = graph(brain)
    rebuild_graph(brain.index)
    assert graph(brain) == incremental


def test_a_write_through_the_library_keeps_the_graph_of_a_rebuild(brain):
    linked_notes(brain, 20)
    brain.reindex()
    brain.write("notes/fresh.md", "# Fresh\n\nLinks [[n1]] and [[n2|two]].\n")
    brain.write("notes/n1.md", "# Note 1 again\n\nno links now\n")
    incremental = graph(brain)
    assert ("memory:notes/fresh.md", "memory:notes/n2.md", "links") in incremental[1]
    rebuild_graph(brain.index)
    assert graph(brain) == incremental


def test_a_refresh_killed_before_its_graph_is_finished_by_the_next(brain):
    """kill -9 between the memory commit and the graph: the next refresh still brings the graph up to date."""
    linked_notes(brain, 30)
    brain.reindex()
    stamp = [1_900_000_000 * 10**9]
    write_note(brain, "notes/n5.md", "# Note 5\n\n[[n9]] [[n11]]\n", stamp)
    (brain.dir / "notes" / "n6.md").unlink()
    script = ("import sys, brain\n"
              "b = brain.open_brain(sys.argv[1])\n"
              "b.index.refresh_memory()\n"  # committed; the graph step has not started
              "print('committed', flush=True)\n"
              "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(brain.repo)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=os.environ)
    try:
        assert proc.stdout.readline().strip() == "committed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    fresh = brainlib.open_brain(brain.repo)
    stats = fresh.reindex()
    assert stats["memory"]["changed"] == 0 and stats["graph"]["work"] == "links"
    incremental = graph(fresh)
    assert not any("notes/n6.md" in edge[0] + edge[1] for edge in incremental[1])
    rebuild_graph(fresh.index)
    assert graph(fresh) == incremental


# -- property: after any edit, the graph the refresh leaves is the full rebuild's -------------------------

NAMES = ("a", "b", "c", "Ab")
FOLDERS = ("notes/", "notes/sub/", "ideas/", "")
TARGETS = st.sampled_from([f"{n}" for n in NAMES] + ["sub/a", "notes/a", "notes/sub/a", "a.md", "ideas/b",
                                                     "B", ".brain/notes/c.md", "zzz"])
PATHS = st.builds(lambda folder, name: f"{folder}{name}.md", st.sampled_from(FOLDERS),
                  st.sampled_from(NAMES)).filter(lambda p: p not in ("a.md", "b.md", "c.md", "Ab.md"))
BODY = st.lists(st.tuples(TARGETS, st.booleans()), max_size=4).map(
    lambda links: "# t\n\n" + " ".join(f"[[{t}|label]]" if labelled else f"[[{t}]]" for t, labelled in links) + "\n")
NOTES = st.dictionaries(PATHS, BODY, max_size=6)
EDIT = st.one_of(
    st.tuples(st.just("write"), PATHS, BODY),
    st.tuples(st.just("remove"), PATHS, st.just("")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=NOTES, edits=st.lists(EDIT, min_size=1, max_size=3))
def test_an_incremental_graph_equals_the_full_rebuild(start, edits):
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "project"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        b = brainlib.init(repo)
        stamp = [1_700_000_000 * 10**9]
        for rel, body in start.items():
            write_note(b, rel, body, stamp)
        b.reindex(code=False)
        for op, rel, body in edits:
            if op == "write":
                write_note(b, rel, body, stamp)
            elif (b.dir / rel).exists():
                (b.dir / rel).unlink()
            stats = b.reindex(code=False)
            assert stats["graph"]["work"] in ("none", "links")
            incremental = graph(b)
            rebuild_graph(b.index)
            assert graph(b) == incremental, (op, rel, body)
        b.index.close()
