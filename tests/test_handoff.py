"""Handoffs: recording a turn appends it and folds it into a bounded, deterministic summary."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.log import HandoffState, Limits, LLMSummarizer, Turn, fold, render
from brain.log.summarizer import AsyncSummarizer, HeuristicSummarizer, Summarizer, build_prompt

TEXTS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=600)
TURNS = st.lists(
    st.tuples(st.sampled_from(["alice", "bob", "sess-20260101-0000-dev@box", "ünï"]),
              st.sampled_from(["message", "ask", "reply", "prompt", "answer"]),
              st.one_of(TEXTS, st.sampled_from([
                  "Should we use SQLite? What about src/db.py?", "We decided to use SQLite. Next: write tests.",
                  "I edited src/brain/log/store.py and docs/x.md.", "Decision: ship it", "Then I will refactor a.py",
                  "x" * 2000 + "?"]))),
    max_size=40)


def run(turns, limits):
    state = HandoffState(thread="t")
    for speaker, kind, text in turns:
        state = fold(state, Turn("t", speaker, text, at=0.0, kind=kind), limits)
    return state


@settings(max_examples=150, deadline=None)
@given(TURNS, st.integers(min_value=1024, max_value=6000))
def test_fold_is_bounded_and_deterministic(turns, max_bytes):
    limits = Limits(max_bytes=max_bytes)
    state = run(turns, limits)
    text = render(state)
    assert len(text.encode("utf-8")) <= max_bytes
    assert render(run(turns, limits)) == text  # same turns, same bytes
    assert HandoffState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    assert state.turns == len(turns)


def test_fold_extracts_questions_answers_decisions_files_next_step():
    s = HandoffState(thread="a+b")
    s = fold(s, Turn("a+b", "alice", "Should the cache use SQLite? I looked at src/cache.py.", kind="ask"))
    assert [q.text for q in s.open_questions] == ["Should the cache use SQLite?"]
    s = fold(s, Turn("a+b", "bob", "Yes, SQLite. We decided to keep Postgres for team mode. Next: I will add tests in "
                                   "tests/test_cache.py.", kind="reply"))
    assert s.open_questions == ()
    assert "Should the cache use SQLite?" in s.answers[0].text and "Yes, SQLite." in s.answers[0].text
    assert [d.text for d in s.decisions] == ["We decided to keep Postgres for team mode."]
    assert [f.text for f in s.files] == ["src/cache.py", "tests/test_cache.py"]
    assert s.next_step.by == "bob" and s.next_step.text.startswith("Next: I will add tests")
    md = render(s)
    for title in ("## Answers given", "## Decisions", "## Files touched", "## Next step"):
        assert title in md


def test_oldest_detail_is_distilled_away_first():
    limits = Limits(max_bytes=1024, files=50)
    s = HandoffState(thread="t")
    for i in range(60):
        s = fold(s, Turn("t", "a", f"touched pkg/module_{i:02d}.py"), limits)
    names = [f.text for f in s.files]
    assert names[-1] == "pkg/module_59.py" and "pkg/module_00.py" not in names
    assert dict(s.distilled)["files"] == 60 - len(names)
    assert "Older detail distilled away" in render(s)


def test_recording_a_turn_appends_and_folds_into_the_handoff_memory_file(brain):
    rec = brain.record_turn(None, "sess-a@m", "Can you review src/app.py?", to="sess-b@m", kind="ask")
    assert rec.thread == "sess-a@m+sess-b@m" and rec.turns == 1
    brain.record_turn(rec.thread, "sess-b@m", "Reviewed. We decided to split it. Next: move views to src/views.py.",
                      to="sess-a@m", kind="reply")
    doc = brain.read(f"handoffs/local/{rec.thread}.md")
    assert "src/views.py" in doc.text and "We decided to split it." in doc.text
    page = brain.conversations.page(rec.thread)
    assert [t.kind for t in page.turns] == ["ask", "reply"]
    # the state is derived: without it, the log is replayed to the same summary
    cache = brain.conversations_dir / rec.thread / "handoff.json"
    good = cache.read_bytes()
    cache.unlink()
    assert render(brain.conversations.state(rec.thread)) == doc.text
    for damaged in (good[: len(good) // 2], good.replace(b"src/views.py", b"src/other.py"), b"", b"[]"):
        cache.write_bytes(damaged)  # torn, tampered, empty, foreign: the checksum fails, the log is replayed
        assert render(brain.conversations.state(rec.thread)) == doc.text


def test_handoff_size_cap_comes_from_settings(brain):
    (brain.dir / "brain.yml").write_text("version: 1\nhandoff:\n  max_bytes: 1200\n")
    import brain as brainlib

    b = brainlib.open(brain.repo)
    for i in range(80):
        b.record_turn("t1", "alice" if i % 2 else "bob", f"Question {i} about lib/part_{i}.py? Decision: keep {i}.")
    assert len(b.read("handoffs/local/t1.md").text.encode()) <= 1200


def test_boot_includes_the_sessions_thread_handoff(brain):
    brain.record_turn(None, "sess-a@m", "Please fix the parser in src/parse.py.", to="sess-b@m", kind="ask")
    with_session = brain.boot(session="sess-b@m", record=False)
    assert "src/parse.py" in with_session.text
    assert any(s["slot"] == "handoff" for s in with_session.sections)
    without = brain.boot(session="sess-c@m", record=False)
    assert not any(s["slot"] == "handoff" for s in without.sections)
    assert not any(s["slot"] == "handoff" for s in brain.boot(record=False).sections)


def test_boot_creates_nothing_when_no_conversation_exists(brain):
    brain.boot(session="sess-x@m", record=False)
    assert not brain.conversations_dir.exists()


# -- summarizer interface ----------------------------------------------------------------------------------------
class FakeModel:
    """A test double of an LLM: records prompts, answers what it is told to."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts = []

    async def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_llm_summarizer_plugs_in_behind_the_same_interface_and_stays_bounded():
    assert isinstance(HeuristicSummarizer(), Summarizer) and isinstance(HeuristicSummarizer(), AsyncSummarizer)
    model = FakeModel([json.dumps({"open_questions": [["alice", "Which DB?"]], "answers": [], "decisions":
                                   [["bob", "Use SQLite " + "y" * 5000]], "files": ["a.py"],
                                   "next_step": ["bob", "write tests"]}),
                       "not json", RuntimeError("model down")])
    llm = LLMSummarizer(model, Limits(max_bytes=1024))
    assert isinstance(llm, AsyncSummarizer)
    turn = Turn("t", "alice", "Which DB?", kind="ask")
    s1 = asyncio.run(llm.afold(HandoffState(thread="t"), turn))
    assert s1.next_step.text == "write tests" and len(render(s1).encode()) <= 1024
    assert "Which DB?" in model.prompts[0] and "# Handoff: t" in build_prompt(HandoffState(thread="t"), turn)
    s2 = asyncio.run(llm.afold(s1, Turn("t", "bob", "Next: ship it.")))  # unusable answer: heuristic fallback
    assert s2.next_step.text == "Next: ship it." and llm.failures == 1
    s3 = asyncio.run(llm.afold(s2, Turn("t", "bob", "Then I will rest.")))  # model error: fallback
    assert s3.turns == 3 and llm.failures == 2


def test_async_record_with_an_llm_summarizer(brain):
    model = FakeModel([json.dumps({"open_questions": [], "answers": [], "decisions": [["a", "LLM says: use FTS5"]],
                                   "files": [], "next_step": None})])
    conv = brain.conversations
    rec = asyncio.run(conv.arecord(conv.make_turn("t2", "a", "long discussion"), LLMSummarizer(model)))
    assert rec.turns == 1
    assert "LLM says: use FTS5" in brain.read("handoffs/local/t2.md").text
    assert [t.text for t in conv.page("t2").turns] == ["long discussion"]


def test_bad_turns_write_nothing(brain):
    from brain.errors import InvalidInput

    for kwargs in ({"thread": "../x", "speaker": "a", "text": "t"}, {"thread": None, "speaker": "a", "text": "t"},
                   {"thread": "t", "speaker": "", "text": "t"}, {"thread": "t", "speaker": "a", "text": None}):
        with pytest.raises(InvalidInput):
            brain.record_turn(kwargs.pop("thread"), **kwargs)
    assert not brain.conversations_dir.exists() or not any(p.is_dir() for p in brain.conversations_dir.iterdir())


def test_concurrent_writers_from_several_processes_lose_no_turn(brain):
    """Three processes record into one thread at once: every turn is in the log and folded exactly once."""
    import subprocess
    import sys

    script = (
        "import sys, brain\n"
        "b = brain.open(sys.argv[1])\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
        "for i in range(40):\n"
        "    b.record_turn('shared', sys.argv[2], f'{sys.argv[2]} turn {i} touched pkg/{sys.argv[2]}_{i}.py')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(brain.repo), f"w{n}"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for n in range(3)]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:  # release them together
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    page = brain.conversations.page("shared", size=1000)
    assert page.total == 120 and page.skipped == 0
    state = brain.conversations.state("shared")
    assert state.turns == 120
    assert sorted(state.parties) == ["w0", "w1", "w2"]


def test_an_interrupted_import_resumes_without_recording_a_turn_twice(brain, tmp_path):
    from brain.log.importer import import_transcript
    from brain.log.samples import Call, Task, claude_lines

    tasks = [Task(f"Prompt number {i}.", [Call(1000, f"Answer number {i}.")]) for i in range(7)]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(claude_lines("s", str(brain.repo), 1.7e9, tasks)) + "\n")
    saved = []

    class Killed(Exception):
        pass

    def progress(offset):
        saved.append(offset)
        if len(saved) == 2:
            raise Killed  # the hook is killed right after its second chunk

    conv = brain.conversations
    with pytest.raises(Killed):
        import_transcript(conv, path, thread="t", person="p", agent="a", chunk=3, on_progress=progress)
    done = conv.page("t", size=100).total
    assert 0 < done < 14
    result = import_transcript(conv, path, thread="t", person="p", agent="a", offset=saved[-1], chunk=3)
    texts = [t.text for t in conv.page("t", size=100).turns]
    assert len(texts) == 14 and len(set(texts)) == 14  # every prompt and answer once, in order
    assert texts[0] == "Prompt number 0." and texts[-1] == "Answer number 6."
    assert result.offset == path.stat().st_size


def test_decisions_keep_the_distinct_ones_when_one_is_restated_every_turn():
    """An agent that restates a decision each turn used to fill the ten Decisions lines with it, pushing the
    others out; near-identical lines (case, punctuation, markdown, spacing aside) are now one, kept latest."""
    restated = ["We decided to use SQLite.", "we decided to use SQLite!", "- We decided to use **SQLite**.",
                "We  decided to use `sqlite`."]
    distinct = [f"Decision: keep endpoint {n} frozen." for n in range(1, 7)]
    state = HandoffState(thread="t")
    for i in range(14):
        text = restated[i % len(restated)]
        if i % 2 == 0:
            text += " " + distinct[i // 2 % len(distinct)]
        state = fold(state, Turn("t", "dev", text, at=0.0))
    assert sum("sqlite" in d.text.casefold() for d in state.decisions) == 1
    assert len(state.decisions) == len(distinct) + 1 and all(d in [x.text for x in state.decisions] for d in distinct)
    assert state.decisions[-1].text == restated[13 % len(restated)] and state.decisions[-1].seq == 14  # the latest
    assert dict(state.distilled).get("decisions", 0) == 0  # nothing distinct was distilled away
    assert render(state).count("SQLite") + render(state).count("sqlite") == 1


def test_a_handoff_file_lists_a_restated_decision_once(brain):
    for i in range(12):
        brain.record_turn("t1", "dev", f"We decided to use SQLite{'.' if i % 2 else '!'} Decision: ship part {i}.")
    text = brain.read("handoffs/local/t1.md").text
    decisions = text.split("## Decisions\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert sum("SQLite" in line for line in decisions) == 1
    assert sum("Decision: ship part" in line for line in decisions) == 9  # ten lines: nine parts and SQLite
