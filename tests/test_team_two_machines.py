"""Two machines, one brain: two BRAIN_HOMEs and two clones sharing one PostgreSQL and a bare git remote.

Agent A (machine 1) and agent B (machine 2) reach the team server over authenticated
HTTP: A claims a path, B sees the overlap (over HTTP and from machine 2's own library),
asks A and gets the reply. Each writes memory in its own territory; a write outside
it is refused with nothing written; both sync through the bare remote and end with the
same memory and no lost write.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from brain.backends.testing import isolated_postgres  # noqa: E402
from brain.errors import TerritoryRefused  # noqa: E402
from conftest import git  # noqa: E402
from test_team_helpers import client_for, run, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(240)

BRAIN_YML = """version: 1
territories:
  notes/backend/**: backend
  notes/frontend/**: frontend
sync:
  commit_on_write: true
"""


def memory_files(b) -> dict[str, bytes]:
    """The versioned memory (runtime/, brain.local.yml and the machine-local handoffs/local/ are not shared)."""
    return {p.relative_to(b.dir).as_posix(): p.read_bytes() for p in sorted(b.dir.rglob("*"))
            if p.is_file() and p.relative_to(b.dir).parts[0] != "runtime" and p.name != "brain.local.yml"
            and p.relative_to(b.dir).parts[:2] != ("handoffs", "local")}


@pytest.fixture
def machines(tmp_path, repo, postgres_url):
    with isolated_postgres(postgres_url) as url:
        b = brainlib.init(repo)
        (b.dir / "brain.yml").write_text(BRAIN_YML)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "brain with territories")
        remote = tmp_path / "remote.git"
        git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
        git(repo, "remote", "add", "origin", str(remote))
        git(repo, "fetch", "-q", "origin")
        git(repo, "branch", "-q", "--set-upstream-to=origin/main", "main")
        clone2 = tmp_path / "machine2"
        git(tmp_path, "clone", "-q", str(remote), str(clone2))
        envs = {}
        for n, clone in ((1, repo), (2, clone2)):
            home = tmp_path / f"home{n}"
            (clone / ".brain" / "brain.local.yml").write_text(f"backend: '{url}'\nmachine: m{n}\n")
            envs[n] = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_MACHINE": f"m{n}"}
            envs[n].pop("BRAIN_BACKEND", None)
        b1 = brainlib.open_brain(repo, env=envs[1])
        b2 = brainlib.open_brain(clone2, env=envs[2])
        b1.layers.ensure()
        b2.layers.ensure()
        alice, _ = b1.tokens.create("alice", role="backend", machine="m1")
        bob, _ = b1.tokens.create("bob", role="frontend", machine="m2")
        with team_server(repo, {"BRAIN_HOME": envs[1]["BRAIN_HOME"], "BRAIN_MACHINE": "m1"}) as server:
            yield b1, b2, server, alice, bob, remote


def test_two_machines_claim_ask_write_sync(machines):
    b1, b2, url, alice, bob, remote = machines
    assert b1.settings["backend"].startswith("postgresql://") and b1.settings["backend"] == b2.settings["backend"]

    async def agents():
        async with client_for(url, alice, "agent-a") as a, client_for(url, bob, "agent-b") as bb:
            claim_a = (await a.call_tool("brain_claim", {"item": "src/api/**"})).structured_content
            claim_b = (await bb.call_tool("brain_claim", {"item": "src/api/users.py"})).structured_content
            seen_on_machine2 = [(o.a.claim, o.b.claim) for o in b2.coord.overlaps()]
            asked = (await bb.call_tool("ask_agent", {"target": claim_a["session"], "wait_seconds": 0.05,
                                                      "question": "may I change users.py's signature?"}))
            ticket = asked.structured_content["ticket"]
            inbox = (await a.call_tool("inbox", {})).structured_content["items"]
            await a.call_tool("reply", {"ticket": inbox[0]["ticket"], "answer": "yes, keep the old name as alias"})
            answer = (await bb.call_tool("ask_agent", {"ticket": ticket})).structured_content
            wrote = await a.call_tool("brain_write", {"path": "notes/backend/api.md",
                                                      "text": "# API\n\nusers.py: new signature, alias kept\n"})
            return claim_a, claim_b, seen_on_machine2, asked, inbox, answer, wrote

    claim_a, claim_b, seen, asked, inbox, answer, wrote = run(agents)
    assert claim_a["session"].endswith("-backend@m1") and claim_b["session"].endswith("-frontend@m2")
    assert [o["session"] for o in claim_b["overlaps"]] == [claim_a["session"]]
    assert seen and set(seen[0]) == {claim_a["claim"], claim_b["claim"]}
    assert asked.structured_content["outcome"] == "pending"
    assert inbox[0]["from"] == claim_b["session"] and inbox[0]["ticket"] == asked.structured_content["ticket"]
    assert answer["outcome"] == "reply" and answer["answer"] == "yes, keep the old name as alias"
    assert not wrote.is_error

    # machine 2 writes in its own territory; outside it nothing is written
    b2.write("notes/frontend/ui.md", "# UI\n\nusers form follows the new signature\n", role="frontend",
             reason="follow the API change")
    before = memory_files(b2)
    with pytest.raises(TerritoryRefused) as err:
        b2.write("notes/backend/api.md", "overwritten by frontend\n", role="frontend")
    assert err.value.owner == "backend" and claim_a["session"] in err.value.owner_sessions
    assert memory_files(b2) == before

    # both sync through the bare remote: same memory, no lost write
    assert b1.sync().repos[0].status == "pushed"
    assert b2.sync().repos[0].status == "pulled_pushed"
    assert b1.sync().repos[0].status == "pulled"
    assert memory_files(b1) == memory_files(b2)
    assert b1.read("notes/frontend/ui.md").text.startswith("# UI") and b2.read("notes/backend/api.md").text.startswith("# API")
    history = git(Path(remote), "log", "--format=%s", "main")
    assert "memory: .brain/notes/backend/api.md by backend" in history
    assert "memory: .brain/notes/frontend/ui.md by frontend — follow the API change" in history
