"""`brain log`, `brain handoff`, `brain record-turn` through the real CLI: JSON shapes, errors, nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys


def run(repo, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_record_list_page_and_handoff(brain):
    repo = brain.repo
    out = run(repo, "record-turn", "--speaker", "sess-a@m", "--to", "sess-b@m", "--kind", "ask", "--json",
              "--text", "Is the API in src/api.py frozen?")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert rec == {"thread": "sess-a@m+sess-b@m", "bytes": rec["bytes"], "turns": 1,
                   "handoff": "handoffs/local/sess-a@m+sess-b@m.md"}
    out = run(repo, "record-turn", "sess-a@m+sess-b@m", "--speaker", "sess-b@m", "--kind", "reply", "--json",
              stdin="Yes, frozen until v2. Decision: no new endpoints.\n")
    assert out.returncode == 0, out.stderr
    listing = json.loads(run(repo, "log", "--json").stdout)
    assert [t["thread"] for t in listing["threads"]] == ["sess-a@m+sess-b@m"]
    assert listing["threads"][0]["parties"] == ["sess-a@m", "sess-b@m"]
    page = json.loads(run(repo, "log", "sess-a@m+sess-b@m", "--size", "1", "--page", "1", "--json").stdout)
    assert (page["page"], page["pages"], page["total"]) == (1, 2, 2)
    assert page["turns"][0]["text"] == "Is the API in src/api.py frozen?"
    text = run(repo, "log", "sess-a@m+sess-b@m").stdout
    assert "sess-b@m (reply):" in text and "frozen until v2" in text
    handoff = json.loads(run(repo, "handoff", "sess-a@m+sess-b@m", "--json").stdout)
    assert "Decision: no new endpoints." in handoff["text"] and "src/api.py" in handoff["text"]
    assert json.loads(run(repo, "handoff", "--json").stdout) == {"handoffs": ["sess-a@m+sess-b@m"], "promoted": []}
    rebuilt = run(repo, "handoff", "sess-a@m+sess-b@m", "--rebuild", "--json")
    assert json.loads(rebuilt.stdout)["text"] == handoff["text"]


def test_errors_have_exit_codes_and_write_nothing(brain):
    repo = brain.repo
    assert run(repo, "log", "nobody+here").returncode == 5
    assert run(repo, "handoff", "nobody+here").returncode == 5
    bad = run(repo, "record-turn", "../escape", "--speaker", "a", "--text", "x", "--json")
    assert bad.returncode == 2 and json.loads(bad.stderr)["field"] == "thread"
    assert run(repo, "record-turn", "--speaker", "a", "--text", "x").returncode == 2  # no thread, no --to
    invalid = run(repo, "record-turn", "t", "--speaker", "a", "--file", "-", stdin="  \n")
    assert invalid.returncode == 2
    assert not brain.conversations_dir.exists() or not any(
        p.name.endswith(".jsonl") for p in brain.conversations_dir.rglob("*"))
    run(repo, "record-turn", "t", "--speaker", "a", "--text", "hello")
    assert run(repo, "log", "t", "--page", "9").returncode == 2
    assert run(repo, "log", "t", "--size", "0").returncode == 2
    for cmd in ("log", "handoff", "record-turn", "stats", "hook", "uninstall"):
        assert run(repo, cmd, "--help").returncode == 0


def test_import_turns_from_codex_and_claude_transcripts_incrementally(brain, tmp_path):
    from brain.log.samples import Call, Task, claude_lines, codex_lines

    tasks = [Task("Add a --verbose flag to cli.py. Why is logging off?",
                  [Call(1000, "Logging was off by default. Next: wire --verbose.", edits=("cli.py",))])]
    codex = tmp_path / "rollout-1.jsonl"
    codex.write_text("\n".join(codex_lines("cx-1", str(brain.repo), 1.7e9, tasks)) + "\n")
    out = run(brain.repo, "import-turns", str(codex), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["thread"] == "codex-cx-1+person" and data["turns"] == 2 and data["edited"] == ["cli.py"]
    again = json.loads(run(brain.repo, "import-turns", str(codex), "--json").stdout)
    assert again["turns"] == 0  # incremental: nothing new
    assert "Next: wire --verbose." in brain.read("handoffs/local/codex-cx-1+person.md").text
    claude = tmp_path / "s.jsonl"
    claude.write_text("\n".join(claude_lines("cl-1", str(brain.repo), 1.7e9, tasks)) + "\n{torn")
    data = json.loads(run(brain.repo, "import-turns", str(claude), "--agent", "sess-x@m", "--json").stdout)
    assert data["thread"] == "person+sess-x@m" and data["turns"] == 2 and data["skipped"] == 1
    foreign = tmp_path / "f.jsonl"
    foreign.write_text('{"hello": 1}\n')
    assert run(brain.repo, "import-turns", str(foreign)).returncode == 2
