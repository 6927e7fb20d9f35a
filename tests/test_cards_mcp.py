"""MCP `brain_report_done` against a real `brain serve` subprocess."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from test_mcp_helpers import stdio_params, text_of, with_client  # noqa: E402

from brain.cards.markers import parse_card  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def test_report_done_tool_refreshes_card_and_replaces_how_to_use(brain, repo):
    (repo / "pay").mkdir()
    (repo / "pay/__init__.py").write_text("def pay(amount: int) -> bool:\n    return True\n")
    brain.map()
    (repo / "pay/__init__.py").write_text("def pay(amount: int, currency: str) -> bool:\n    return True\n")

    async def body(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        ok = await client.call_tool("brain_report_done", {"module": "pay", "how_to_use": "Call pay() per order.",
                                                          "summary": "currencies"})
        bad = await client.call_tool("brain_report_done", {"module": "nope"})
        return tools, ok, bad

    tools, ok, bad = with_client(stdio_params(repo), body)
    schema = tools["brain_report_done"].input_schema
    assert schema["required"] == ["module"] and schema.get("additionalProperties") is False
    assert not ok.is_error and ok.structured_content["how_to_use_replaced"] is True
    assert "Commit the card" in text_of(ok)
    card = (brain.dir / "modules/pay.md").read_text()
    assert parse_card(card).human == "Call pay() per order.\n" and "currency: str" in card
    assert bad.is_error and "not_found" in text_of(bad) + str(bad.structured_content)
