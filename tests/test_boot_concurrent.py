"""Concurrent boots on one Brain: each answer is the boot run alone (per-call state belongs to the call)."""

from __future__ import annotations

import threading

import pytest

import brain as brainlib
from conftest import git

BOOTS = 32
MODULES = ("billing", "catalog", "checkout", "search", "shipping", "users", "reports", "auth")
VERBS = ("parse", "render", "store", "validate")


def _write(repo, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_project(brain) -> list[str]:
    """Eight modules of four functions each, mapped and indexed; returns one task per function."""
    repo = brain.repo
    tasks = []
    for module in MODULES:
        _write(repo, f"{module}/__init__.py", "")
        for verb in VERBS:
            name = f"{verb}_{module}_record"
            _write(repo, f"{module}/{verb}.py",
                   f"from {module}.{VERBS[0]} import {VERBS[0]}_{module}_record\n\n\n"
                   f"def {name}(item):\n    \"\"\"{verb.title()} one {module} record.\"\"\"\n"
                   f"    if item is None:\n        raise ValueError('no {module} record to {verb}')\n"
                   f"    return item\n")
            tasks.append(f"{name} fails on an empty {module} record\n"
                         f'  File "/srv/app/{module}/{verb}.py", line 6, in {name}\n'
                         f"ValueError: no {module} record to {verb}\n")
    brain.write("now.md", "# Now\n\nHarden the record handlers.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the app")
    brain.map()
    brain.reindex()
    return tasks


def boots_in_threads(shared, tasks: list[str]) -> list[dict]:
    """Every task booted at once, one thread each, all on the one ``shared`` Brain."""
    start = threading.Barrier(len(tasks))
    results: list[dict | BaseException | None] = [None] * len(tasks)

    def boot(i: int) -> None:
        start.wait(timeout=60)
        try:
            results[i] = shared.boot(tasks[i], record=False).to_dict()
        except BaseException as exc:  # noqa: BLE001 - reported by the test, with its task
            results[i] = exc

    threads = [threading.Thread(target=boot, args=(i,)) for i in range(len(tasks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return results  # type: ignore[return-value]


def test_concurrent_boots_on_one_brain_each_equal_the_boot_alone(brain):
    tasks = make_project(brain)
    shared = brainlib.open_brain(brain.repo)
    alone = [brainlib.open_brain(brain.repo).boot(task, record=False).to_dict() for task in tasks]
    assert len({a["text"] for a in alone}) == BOOTS  # the tasks really rank different code
    assert all(a["functions"] for a in alone)
    for _round in range(2):
        together = boots_in_threads(shared, tasks)
        for task, want, got in zip(tasks, alone, together):
            if isinstance(got, BaseException):
                raise AssertionError(f"the boot of {task!r} raised") from got
            assert got == want, task.splitlines()[0]


def test_a_boot_memo_does_not_outlive_its_boot(brain):
    from brain.boot.call import current_call

    tasks = make_project(brain)
    brain.boot(tasks[0], record=False)
    assert current_call() is None
    assert not any(name in brain.__dict__ for name in ("_boot_memo", "_located"))


def test_concurrent_boots_on_one_team_server_each_equal_the_boot_alone(brain):
    """32 SDK clients, each with its own token (so its own session), boot at once over HTTP on one server
    process (one Brain, its thread pool); each answer equals that token's boot run alone before."""
    pytest.importorskip("mcp")
    import anyio
    from test_team_helpers import BOUND, client_for, run, team_server

    tasks = make_project(brain)
    tokens = [brain.tokens.create(f"agent{i:02d}", role="backend", machine=f"m{i:02d}")[0] for i in range(BOOTS)]

    async def boot(url: str, i: int) -> dict:
        async with client_for(url, tokens[i]) as client:
            result = await client.call_tool("brain_boot", {"task": tasks[i]})
            assert not result.is_error, tasks[i]
            return result.structured_content

    async def alone(url: str) -> list[dict]:
        for token in tokens:  # every session started first: each boot lists the same sessions, alone or not
            async with client_for(url, token) as client:
                assert not (await client.call_tool("brain_sessions", {})).is_error
        return [await boot(url, i) for i in range(BOOTS)]

    async def together(url: str) -> list[dict]:
        answers: list[dict | None] = [None] * len(tasks)
        start = anyio.Event()

        async def one(i: int) -> None:
            await start.wait()
            answers[i] = await boot(url, i)

        async with anyio.create_task_group() as group:
            for i in range(len(tasks)):
                group.start_soon(one, i)
            start.set()
        return answers

    # 32 boots one after another each way (boots share one heavy-lane thread): a bound for a loaded machine
    with team_server(brain.repo) as url:
        want = run(lambda: alone(url), bound=3 * BOUND)
        assert len({w["text"] for w in want}) == BOOTS and all(w["functions"] for w in want)
        got = run(lambda: together(url), bound=3 * BOUND)
    for task, w, g in zip(tasks, want, got):
        assert g == w, task.splitlines()[0]
