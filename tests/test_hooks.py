"""End to end: the installed Claude Code hooks, run exactly as the client runs them.

The command strings are taken from the settings.local.json that `brain install claude-code`
wrote, run through a shell with the hook JSON on stdin, CLAUDE_PROJECT_DIR set and the
project as working directory; the test checks what they print and what they write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.hooks import claude
from brain.log.samples import Call, Task, claude_lines

SID = "5f3c2a9e-1111-4e4e-9a9a-0123456789ab"


def hook_commands(repo: Path) -> dict[str, str]:
    data = json.loads((repo / ".claude" / "settings.local.json").read_text())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in data["hooks"].items()}


def run_hook(repo: Path, command: str, payload: dict, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo), **env}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), cwd=repo, env=full_env,
                          capture_output=True, text=True, timeout=60)


def payload(repo: Path, event: str, transcript: Path, **extra) -> dict:
    return {"session_id": SID, "transcript_path": str(transcript), "cwd": str(repo), "hook_event_name": event,
            "permission_mode": "default", **extra}


def write_transcript(path: Path, repo: Path, tasks: list[Task], start: float) -> None:
    path.write_text("\n".join(claude_lines(SID, str(repo), start, tasks)) + "\n")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_env(request, monkeypatch):
    """The coordination backend the hooks (and the test's own brain) use: SQLite, or PostgreSQL in its own schema."""
    if request.param == "sqlite":
        yield "sqlite"
        return
    url = request.getfixturevalue("postgres_url")
    from brain.backends.testing import isolated_postgres

    with isolated_postgres(url) as isolated:
        monkeypatch.setenv("BRAIN_BACKEND", isolated)
        yield isolated


@pytest.fixture
def installed(brain):
    claude.install(brain, [sys.executable, "-m", "brain"])
    brain.write("now.md", "# Now\n\nRefactoring the parser (now-marker-7781).\n")
    return brain


def test_session_lifecycle_through_the_installed_hooks(installed, tmp_path, backend_env):
    import brain as brainlib

    repo = installed.repo
    brain = brainlib.open(repo)  # opened again under the backend of this run (the hooks inherit it)
    cmds = hook_commands(repo)
    transcript = tmp_path / f"{SID}.jsonl"
    start = time.time() - 600
    write_transcript(transcript, repo, [], start)

    # 1. SessionStart (startup): a compact boot as additionalContext, within the hook output limit
    out = run_hook(repo, cmds["SessionStart"], payload(repo, "SessionStart", transcript, source="startup"))
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    text = context["additionalContext"]
    assert "now-marker-7781" in text and "brain_boot" in text and len(text) <= 10000
    state = json.loads(next((brain.runtime / "hooks").glob("claude-*.json")).read_text())
    party = state["party"]
    assert party.startswith("sess-") and state["coord"] is True
    assert brain.coord.session(party).liveness == "alive"  # tied to the client process, not the hook's shell
    assert (brain.store_dir / "brain.db").exists() == (backend_env == "sqlite")

    # 2. the session works: a prompt, an answer that edits a file
    tasks = [Task("Fix the parser in src/parse.py: why does it drop the last token?",
                  [Call(4000, "It stops one token early. We decided to rewrite the loop. Next: add a regression test.",
                        reads=(str(repo / "src/parse.py"),), edits=(str(repo / "src/parse.py"),))])]
    write_transcript(transcript, repo, tasks, start)

    # 3. Stop: the turns are imported, and the agent is asked (once) to update now.md
    out = run_hook(repo, cmds["Stop"], payload(repo, "Stop", transcript, stop_hook_active=False))
    assert out.returncode == 0, out.stderr
    decision = json.loads(out.stdout)
    assert decision["decision"] == "block" and "now.md" in decision["reason"]
    thread = brain.thread_between("person", party)
    page = brain.conversations.page(thread)
    assert [t.speaker for t in page.turns] == ["person", party]
    assert page.turns[1].files == ("src/parse.py",)
    again = run_hook(repo, cmds["Stop"], payload(repo, "Stop", transcript, stop_hook_active=True))
    assert again.returncode == 0 and again.stdout == ""
    assert brain.conversations.page(thread).total == 2  # nothing imported twice

    # 4. PreCompact: a checkpoint of the session
    out = run_hook(repo, cmds["PreCompact"], payload(repo, "PreCompact", transcript, trigger="auto",
                                                     custom_instructions=""))
    assert out.returncode == 0 and out.stdout == "", out.stderr
    checkpoint = brain.coord.read_checkpoint(party)
    assert checkpoint is not None and checkpoint.step.startswith("Next: add a regression test")
    assert "src/parse.py" in checkpoint.note

    # 5. SessionStart after compaction: the boot brings the checkpoint and the thread's handoff
    out = run_hook(repo, cmds["SessionStart"], payload(repo, "SessionStart", transcript, source="compact"))
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Next: add a regression test" in text and f"handoffs/local/{thread}.md" in text and len(text) <= 10000
    assert "why does it drop the last token" not in text.split("## Answers given")[0]  # no raw prompt outside the handoff

    # 6. SessionEnd: last turns imported, the brain session ended
    tasks.append(Task("Thanks, now update the docs.", [Call(5000, "Docs updated in docs/parser.md.")]))
    write_transcript(transcript, repo, tasks, start)
    out = run_hook(repo, cmds["SessionEnd"], payload(repo, "SessionEnd", transcript, reason="prompt_input_exit"))
    assert out.returncode == 0 and out.stdout == ""
    assert brain.conversations.page(thread).total == 4
    assert brain.coord.session(party).liveness != "alive"


def test_the_injected_boot_stays_within_the_hook_limit_with_a_huge_memory(installed, tmp_path):
    brain, repo = installed, installed.repo
    brain.write("now.md", "# Now\n\n" + ("A long line of current state that matters. " * 350))
    brain.write("focus.md", "# Focus\n\n" + ("focus detail " * 800))
    out = run_hook(repo, hook_commands(repo)["SessionStart"],
                   payload(repo, "SessionStart", tmp_path / "none.jsonl", source="startup"))
    text = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10000 and "brain_boot" in text


def test_hooks_never_break_the_client(installed, tmp_path):
    cmds = hook_commands(installed.repo)
    full_env = {**os.environ, "CLAUDE_PROJECT_DIR": str(installed.repo)}
    bad = subprocess.run(["/bin/sh", "-c", cmds["Stop"]], input="{not json", cwd=installed.repo, env=full_env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 0 and bad.stdout == "" and "brain hook" in bad.stderr
    elsewhere = tmp_path / "no-brain"
    elsewhere.mkdir()
    out = subprocess.run(["/bin/sh", "-c", cmds["SessionStart"]], input=json.dumps({"session_id": "x", "cwd": str(elsewhere)}),
                         cwd=elsewhere, env={k: v for k, v in full_env.items() if k != "CLAUDE_PROJECT_DIR"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == ""
    torn = tmp_path / "torn.jsonl"
    torn.write_text('{"type": "user", "sessionId": "' + SID + '", "message": {"role": "user", "content": "hi"}}\n'
                    '[1, 2]\n{"type": "assist')
    out = run_hook(installed.repo, cmds["Stop"], payload(installed.repo, "Stop", torn, stop_hook_active=False))
    assert out.returncode == 0 and out.stdout == ""  # nothing edited: nothing asked


def test_claude_codes_own_event_names_answer_as_brains_spellings(installed, tmp_path):
    """A hook wired by hand copies Claude Code's name (`SessionStart`): it runs the same handler."""
    repo = installed.repo
    transcript = tmp_path / f"{SID}.jsonl"
    write_transcript(transcript, repo, [Task("Fix src/parse.py.", [Call(1000, "We decided to keep the loop.",
                                                                        edits=(str(repo / "src/parse.py"),))])],
                     time.time() - 600)
    brain_hook = f"{sys.executable} -m brain hook claude-code"
    out = run_hook(repo, f"{brain_hook} SessionStart", payload(repo, "SessionStart", transcript, source="startup"))
    assert out.returncode == 0 and out.stderr == "", out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and "now-marker-7781" in context["additionalContext"]
    party = json.loads(next((installed.runtime / "hooks").glob("claude-*.json")).read_text())["party"]
    out = run_hook(repo, f"{brain_hook} PreCompact", payload(repo, "PreCompact", transcript, trigger="manual"))
    assert out.returncode == 0 and out.stderr == "" and out.stdout == "", out.stderr
    assert installed.coord.read_checkpoint(party) is not None
    out = run_hook(repo, f"{brain_hook} Stop", payload(repo, "Stop", transcript, stop_hook_active=False))
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert json.loads(out.stdout)["decision"] == "block"  # edited files, now.md unchanged: asked once
    out = run_hook(repo, f"{brain_hook} SessionEnd", payload(repo, "SessionEnd", transcript, reason="other"))
    assert out.returncode == 0 and out.stderr == "" and out.stdout == "", out.stderr
    assert installed.coord.session(party).liveness != "alive"


def test_an_event_brain_does_not_answer_is_named_on_stderr_and_never_blocks_the_client(installed, tmp_path):
    """Claude Code reads a hook's exit 2 as "block this prompt or tool call": an unknown event exits 0."""
    repo = installed.repo
    out = run_hook(repo, f"{sys.executable} -m brain hook claude-code UserPromptSubmit",
                   payload(repo, "UserPromptSubmit", tmp_path / "none.jsonl", prompt="hello"))
    assert out.returncode == 0 and out.stdout == "" and out.stderr.strip()  # said, not silently ignored
    assert not (installed.runtime / "hooks").exists() or not list((installed.runtime / "hooks").glob("claude-*"))
