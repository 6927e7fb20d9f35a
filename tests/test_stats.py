"""`brain stats` on transcripts generated in Claude Code's and Codex's formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from brain.log.samples import Call, Task, claude_lines, codex_lines
from brain.log.stats import claude_slug, compute, discover, installed_at, render_svg, render_text
from brain.log.transcripts import Counters, is_read_command, read_claude, read_codex


def write(path: Path, lines: list[str], tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n" + tail, encoding="utf-8")
    return path


TASKS = [
    Task("Fix the login redirect", [Call(1000, "Looking.", reads=("a.py", "b.py")), Call(3000, shell_reads=("c.py",)),
                                    Call(2000, "Done.", edits=("a.py",))], compact_after=True),
    Task("Now add a test", [Call(5000, reads=("t.py",)), Call(4000, "Added tests/test_x.py.")]),
]


def test_claude_reader_counts_calls_once_per_message_reads_and_compactions(tmp_path):
    path = write(tmp_path / "s1.jsonl", claude_lines("s1", "/p", 1_700_000_000, TASKS))
    counters = Counters()
    events = list(read_claude(path, counters))
    kinds = [e.kind for e in events]
    assert kinds.count("call") == 5  # not one per content line
    assert kinds.count("read") == 4 and kinds.count("compact") == 1 and kinds.count("prompt") == 2
    assert [e.tokens for e in events if e.kind == "call"] == [1000, 3000, 2000, 5000, 4000]
    assert counters.skipped == 0 and counters.session == "s1" and counters.cwd == "/p"


def test_codex_reader_reads_shell_reads_token_counts_once_and_compactions(tmp_path):
    path = write(tmp_path / "rollout-x.jsonl", codex_lines("c1", "/p", 1_700_000_000, TASKS))
    events = list(read_codex(path))
    kinds = [e.kind for e in events]
    assert kinds.count("call") == 5  # the repeated token_count is not a new call
    assert [e.tokens for e in events if e.kind == "call"] == [1000, 3000, 2000, 5000, 4000]
    assert kinds.count("read") == 4 and kinds.count("compact") == 1 and kinds.count("compact_event") == 1
    assert [e.files for e in events if e.kind == "edit"] == [("a.py",)]


def test_torn_and_foreign_lines_are_skipped_and_counted(tmp_path):
    lines = claude_lines("s1", "/p", 1_700_000_000, TASKS)
    lines.insert(3, "not json")
    lines.insert(5, '["a", "list"]')
    lines.insert(7, '{"no_type": 1}')
    path = write(tmp_path / "s1.jsonl", lines, tail='{"type": "assistant", "message": {"id": "torn')
    report = compute([(path, "claude")])
    assert report.skipped == 4
    assert report.sessions[0].context["calls"] == 5


def test_per_session_and_per_task_figures_and_the_trend_around_install(tmp_path):
    day = 86400
    t0 = 1_700_000_000
    before = [Task("old task", [Call(50000, reads=("a.py", "b.py", "c.py")), Call(60000, reads=("d.py",))],
                   compact_after=True)]
    after = [Task("new task", [Call(8000, reads=("a.py",)), Call(9000)])]
    files = [(write(tmp_path / "a.jsonl", claude_lines("a", "/p", t0, before)), "claude"),
             (write(tmp_path / "b.jsonl", codex_lines("b", "/p", t0 + 1 * day, before)), "codex"),
             (write(tmp_path / "c.jsonl", claude_lines("c", "/p", t0 + 10 * day, after)), "claude"),
             (write(tmp_path / "d.jsonl", codex_lines("d", "/p", t0 + 11 * day, after)), "codex")]
    report = compute(files, (t0 + 5 * day, "test"))
    assert [s.session for s in report.sessions] == ["a", "b", "c", "d"]
    a = report.sessions[0]
    assert (a.tasks, a.reads, a.compactions) == (1, 4, 1)
    assert a.context == {"calls": 2, "p50": 50000, "p95": 60000, "max": 60000}
    assert report.periods["before"]["reads_per_task"] == 4.0 and report.periods["after"]["reads_per_task"] == 1.0
    assert report.periods["before"]["compactions_per_task"] == 1.0 and report.periods["after"]["compactions"] == 0
    assert report.periods["after"]["context"]["p95"] == 9000
    task = report.tasks[0]
    assert (task.prompt, task.reads, task.context["max"]) == ("old task", 4, 60000)
    assert len(report.days) == 4
    text = render_text(report)
    assert "before brain" in text and "with brain" in text
    svg = render_svg(report)
    assert svg.startswith("<svg") and "brain installed" in svg and svg.count("<circle") == 12
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)  # well-formed


def test_discovery_finds_this_projects_transcripts_only(tmp_path, brain):
    home = tmp_path / "home"
    repo = brain.repo
    write(home / ".claude" / "projects" / claude_slug(repo) / "s1.jsonl", claude_lines("s1", str(repo), 1.7e9, TASKS))
    write(home / ".claude" / "projects" / "-other" / "s2.jsonl", claude_lines("s2", "/other", 1.7e9, TASKS))
    write(home / ".claude" / "projects" / (claude_slug(repo) + "-src") / "s3.jsonl",
          claude_lines("s3", str(repo / "src"), 1.7e9, TASKS))  # started in a subfolder
    write(home / ".claude" / "projects" / (claude_slug(repo) + "-sibling") / "s4.jsonl",
          claude_lines("s4", str(repo) + "-sibling", 1.7e9, TASKS))  # a sibling folder, not ours
    write(home / ".codex" / "sessions" / "2026" / "01" / "02" / "rollout-a.jsonl",
          codex_lines("c1", str(repo / "sub"), 1.7e9, TASKS))
    write(home / ".codex" / "sessions" / "2026" / "01" / "02" / "rollout-b.jsonl",
          codex_lines("c2", "/elsewhere", 1.7e9, TASKS))
    found = discover(repo, {"HOME": str(home)})
    assert sorted((p.name, f) for p, f in found) == [("rollout-a.jsonl", "codex"), ("s1.jsonl", "claude"),
                                                    ("s3.jsonl", "claude")]
    at, source = installed_at(brain)
    assert at is not None and abs(at - time.time()) < 600 and source


def test_read_commands():
    assert is_read_command("cat src/a.py")
    assert is_read_command(["bash", "-lc", "cd x && sed -n '1,20p' a.py"])
    assert is_read_command("head -50 a.py | grep x")
    assert not is_read_command("grep -rn foo src")
    assert not is_read_command(["bash", "-lc", "pytest -q"])
    assert not is_read_command("sed -i s/a/b/ a.py")
    assert not is_read_command(None)


def test_cli_stats_table_json_and_svg(tmp_path, brain):
    home = tmp_path / "home"
    write(home / ".claude" / "projects" / claude_slug(brain.repo) / "s1.jsonl",
          claude_lines("s1", str(brain.repo), 1.7e9, TASKS), tail="torn")
    env = {**os.environ, "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CODEX_HOME", None)
    run = lambda *a: subprocess.run([sys.executable, "-m", "brain", *a], cwd=brain.repo, env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=60)
    out = run("stats", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["skipped"] == 1 and data["sessions"][0]["reads"] == 4 and data["sessions"][0]["compactions"] == 1
    svg = tmp_path / "chart.svg"
    out = run("stats", "--svg", str(svg))
    assert out.returncode == 0 and "s1" in out.stdout and svg.read_text().startswith("<svg")
    extra = write(tmp_path / "x" / "rollout-z.jsonl", codex_lines("zz", "/else", 1.7e9, TASKS))
    out = run("stats", "--json", "--no-discover", str(extra))
    assert [s["session"] for s in json.loads(out.stdout)["sessions"]] == ["zz"]
    assert run("stats", str(tmp_path / "missing.jsonl")).returncode != 0


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from brain.log.quantiles import Sketch  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2_000_000), min_size=1, max_size=3000),
       st.sampled_from([0.5, 0.95, 1.0]))
def test_sketch_is_exact_for_small_samples_and_within_two_percent_beyond(values, q):
    sketch = Sketch(exact_max=1024)
    for v in values:
        sketch.add(v)
    import math

    ordered = sorted(values)

    exact = ordered[max(1, math.ceil(q * len(values))) - 1]
    got = sketch.quantile(q)
    assert sketch.max == ordered[-1] and sketch.count == len(values)
    if len(values) <= 1024:
        assert got == exact
    else:
        assert abs(got - exact) <= max(1, 0.021 * exact)
