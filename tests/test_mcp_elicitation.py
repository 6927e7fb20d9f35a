"""An ask is delivered as an elicitation where the asked agent's client declared it, and never depends on it.

Real `brain serve` stdio subprocesses and the official SDK client: one asked agent declares elicitation with a
callback that answers (the asker's `ask_agent` gets that answer as the reply, with no `inbox`/`reply` call by
the agent); one declares it and declines (the ask stays in its inbox and is answered the existing way); one does
not declare it (no elicitation is ever sent: its inbox holds the ask)."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp_types import Implementation  # noqa: E402
from test_mcp_helpers import BOUND, stdio_params  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def agent(repo, name: str, callback=None) -> Client:
    return Client(stdio_params(repo), mode="legacy", elicitation_callback=callback,
                  client_info=Implementation(name=name, version="1"))


def test_an_ask_reaches_an_eliciting_client_as_an_elicitation_and_its_answer_is_the_reply(brain, repo):
    seen: list[str] = []

    async def answers(_context, params):
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "port 8080"})

    async def main():
        with anyio.fail_after(BOUND * 2):
            async with agent(repo, "review", answers) as target, agent(repo, "lead") as asker:
                sid = (await target.call_tool("brain_sessions", {})).structured_content["you"]
                result = await asker.call_tool("ask_agent", {"target": sid, "question": "which port?",
                                                             "timeout": BOUND})
                inbox = (await target.call_tool("inbox", {})).structured_content["items"]
                return result.structured_content, inbox

    outcome, inbox = anyio.run(main)
    assert (outcome["outcome"], outcome["answer"]) == ("reply", "port 8080")
    assert len(seen) == 1 and "which port?" in seen[0] and "asks you" in seen[0]
    assert inbox == []  # answered: nothing left for the agent


@pytest.mark.parametrize("declares", [True, False], ids=["declines", "no-capability"])
def test_without_an_answered_elicitation_the_ask_waits_in_the_inbox_as_before(brain, repo, declares):
    seen: list[str] = []

    async def declines(_context, params):
        seen.append(params.message)
        return types.ElicitResult(action="decline")

    async def main():
        with anyio.fail_after(BOUND * 2):
            async with agent(repo, "review", declines if declares else None) as target, agent(repo, "lead") as asker:
                sid = (await target.call_tool("brain_sessions", {})).structured_content["you"]
                first = (await asker.call_tool("ask_agent", {"target": sid, "question": "which port?",
                                                            "wait_seconds": 0.2})).structured_content
                assert first["outcome"] == "pending"
                while declares and not seen:  # the watcher has made its one attempt (bounded by fail_after)
                    await anyio.sleep(0.05)
                [item] = (await target.call_tool("inbox", {})).structured_content["items"]
                await target.call_tool("reply", {"ticket": item["ticket"], "answer": "8081"})
                final = (await asker.call_tool("ask_agent", {"ticket": first["ticket"]})).structured_content
                return item, final

    item, final = anyio.run(main)
    assert item["question"] == "which port?"
    assert (final["outcome"], final["answer"]) == ("reply", "8081")
    assert len(seen) == (1 if declares else 0)  # elicited once when declared, never otherwise
