"""The index remembers its answers until it changes (brain.search.answers): a repeated boot ranks once,
and any change to the index (a note, a code file, another process's refresh) is in the next boot."""

from __future__ import annotations

import subprocess
import sys

import pytest

import brain as brainlib
from conftest import git
from test_boot_concurrent import make_project

TASK = "add a retry to the payment webhook"


@pytest.fixture(autouse=True)
def keeping():
    """Answers kept, as in a server (a one-shot process keeps none)."""
    from brain.search.answers import keep_answers

    keep_answers(True)
    yield
    keep_answers(False)


def test_a_one_shot_process_keeps_no_answers(brain, monkeypatch):
    from brain.search.answers import keep_answers

    _project(brain)
    keep_answers(False)
    ranked = _counting(monkeypatch)
    for _ in range(3):
        brain.locate(TASK)
    assert ranked == [1, 1, 1]


def _counting(monkeypatch):
    """Count the file rankings computed (not answered from memory)."""
    from brain.search import service

    ranked = []
    real = service.rank_files

    def counted(*args, **kwargs):
        ranked.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "rank_files", counted)
    return ranked


def _project(brain) -> None:
    (brain.repo / "pay").mkdir()
    (brain.repo / "pay" / "webhook.py").write_text("def retry_payment(event):\n    return event\n")
    git(brain.repo, "add", "-A")
    git(brain.repo, "commit", "-q", "-m", "pay")
    brain.map()
    brain.reindex()


def test_a_repeated_boot_ranks_once_and_answers_the_same(brain, monkeypatch):
    _project(brain)
    ranked = _counting(monkeypatch)
    # the first ranking on a fresh index may write the index's own caches (the import graph): not kept then
    first = [brain.boot(TASK, record=False).to_dict() for _ in range(2)]
    ranked.clear()
    again = [brain.boot(TASK, record=False).to_dict() for _ in range(3)]
    assert again == [first[0]] * 3 and first[1] == first[0]
    assert ranked == []
    brain.boot("rename the payment module", record=False)  # another task: ranked on its own
    assert ranked == [1]


def test_a_caller_changing_its_answer_does_not_change_the_next(brain):
    _project(brain)
    first = brain.locate(TASK)
    assert first.files
    first.files.clear()
    first.files_before = None
    assert brain.locate(TASK).paths == ["pay/webhook.py"]


def test_a_new_note_is_in_the_next_boot(brain, monkeypatch):
    _project(brain)
    before = brain.boot(TASK, record=False).text
    assert "notes/webhook-retries.md" not in before
    brain.write("notes/webhook-retries.md", "# Webhook retries\n\nThe payment webhook retry waits 30 s.\n")
    after = brain.boot(TASK, record=False).text
    assert "notes/webhook-retries.md" in after


def test_a_changed_file_is_in_the_next_ranking(brain):
    _project(brain)
    assert brain.locate(TASK).paths == ["pay/webhook.py"]
    _commit_refund(brain.repo)  # committed: git lists no changed file, so the ranking's key is the same
    paths = brain.boot(TASK, record=False).files  # the boot refreshes the index: its answers are gone
    assert "pay/refund.py" in paths


def test_another_process_refreshing_the_index_is_seen(brain, monkeypatch):
    """A commit by another process's connection changes SQLite's data_version: the answers are not reused."""
    _project(brain)
    shared = brainlib.open_brain(brain.repo)
    monkeypatch.setattr(shared.settings, "get", _no_boot_refresh(shared.settings.get))
    ranked = _counting(monkeypatch)
    for _ in range(2):  # the first ranking may write the index's own caches: kept from the second on
        shared.locate(TASK)
    ranked.clear()
    shared.locate(TASK)
    assert ranked == []
    _commit_refund(brain.repo)
    subprocess.run([sys.executable, "-m", "brain", "index"], cwd=brain.repo, check=True, capture_output=True)
    assert "pay/refund.py" in shared.locate(TASK).paths
    assert ranked == [1]


def _commit_refund(repo) -> None:
    (repo / "pay" / "refund.py").write_text("def retry_refund_webhook_payment(event):\n    return event\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "refunds")


def _no_boot_refresh(get):
    """Settings with search.refresh_on_boot off: this process never refreshes, so only the other one writes."""
    return lambda key, *a: False if key == "search.refresh_on_boot" else get(key, *a)


def test_concurrent_boots_with_remembered_answers_each_equal_the_boot_alone(brain):
    """Each task twice, all at once on one Brain: the second of each is (often) answered from memory."""
    from test_boot_concurrent import boots_in_threads

    tasks = make_project(brain)[:8]
    alone = [brainlib.open_brain(brain.repo).boot(task, record=False).to_dict() for task in tasks]
    shared = brainlib.open_brain(brain.repo)
    together = boots_in_threads(shared, tasks + tasks)
    for want, got in zip(alone + alone, together):
        assert not isinstance(got, BaseException)
        assert got == want
