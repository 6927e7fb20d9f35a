"""Every tool declares its outputSchema, and what it returns validates against it.

A real `brain serve` over stdio, the official SDK client (handshake era and 2026-07-28), every listed tool called
at least once (each shape a tool has: a workflow list and one workflow, a checkpoint and none), each result's
structuredContent validated with `jsonschema` against the schema the server listed. A tool added without a call
here fails the test."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")

from mcp import Client  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from test_mcp_helpers import BOUND, stdio_params  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def project(brain, repo):
    (repo / "src" / "shop").mkdir(parents=True)
    (repo / "src" / "shop" / "__init__.py").write_text("")
    (repo / "src" / "shop" / "orders.py").write_text("def place(order_id: int) -> str:\n    return 'ok'\n")
    brain.new_decision("Orders are placed once", body="Idempotent by order id.")
    return brain


@pytest.mark.parametrize("mode", ["legacy", *MODERN_PROTOCOL_VERSIONS])
def test_every_tool_lists_an_output_schema_and_its_results_validate(project, repo, mode):
    async def main():
        with anyio.fail_after(BOUND * 3):
            async with Client(stdio_params(repo), mode=mode) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                results: list[tuple[str, object]] = []

                async def call(name, arguments, **kw):
                    result = await client.call_tool(name, arguments, **kw)
                    assert not result.is_error, (name, result.content)
                    results.append((name, result.structured_content))
                    return result.structured_content

                other = await call("brain_session_start", {"role": "review"})
                theirs = {"brain/session": other["handle"]}
                await call("brain_boot", {"task": "place orders"})
                await call("brain_read", {"path": "now.md"})
                written = await call("brain_write", {"path": "workflows/release.md", "text": "# Release\n\n1. tag\n"})
                await call("brain_write", {"path": "notes/a.md", "text": "# A\n", "expected_hash": ""})
                await call("brain_notes", {"everything": True})
                await call("brain_move", {"path": "notes/a.md", "to": "notes/b.md"})
                await call("brain_delete", {"path": "notes/b.md"})
                await call("brain_focus", {})
                await call("brain_workflows", {})
                await call("brain_workflows", {"name": "release"})
                await call("brain_decisions", {})
                await call("brain_state", {})
                await call("brain_sessions", {"include_gone": True})
                grant = await call("brain_claim", {"item": "src/shop/"})
                await call("brain_claim", {"item": "src/shop/orders.py"}, meta=theirs)  # an overlap in the result
                await call("brain_release", {"claim": grant["claim"]})
                await call("brain_signal", {"target": other["session"], "text": "hello"})
                await call("brain_signals", {}, meta=theirs)
                await call("brain_checkpoint", {}, meta=theirs)  # none yet: {"checkpoint": null}
                await call("brain_checkpoint", {"step": "placing orders", "note": "next: tests"})
                asked = await call("ask_agent", {"target": other["session"], "question": "which port?",
                                                 "wait_seconds": 0.05})
                await call("inbox", {}, meta=theirs)
                await call("reply", {"ticket": asked["ticket"], "answer": "8080"}, meta=theirs)
                await call("ask_agent", {"ticket": asked["ticket"]})
                await call("workstate_set", {"intent": "orders", "status": "working"})
                await call("workstate_read", {})
                await call("brain_search", {"query": "release"})
                await call("brain_report_done", {"module": "src/shop", "summary": "placed orders"})
                await call("brain_session_end", {}, meta=theirs)
                return tools, results, written

    tools, results, written = anyio.run(main)
    assert written["redacted"] == []
    called = {name for name, _ in results}
    assert called == set(tools), f"tools never called here: {sorted(set(tools) - called)}"
    for name, tool in tools.items():
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    for name, content in results:
        jsonschema.validate(content, tools[name].output_schema, cls=jsonschema.Draft202012Validator)
    shapes = {name: content for name, content in results}
    assert shapes["ask_agent"]["outcome"] == "reply" and shapes["ask_agent"]["answer"] == "8080"


def test_a_result_that_breaks_its_schema_is_caught(project):
    """The validation above can fail: a boot without its text is refused by the listed schema."""
    from brain.mcp.outputs import Boot, schema_of

    good = project.boot().to_dict()
    jsonschema.validate(good, schema_of(Boot))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in good.items() if k != "text"}, schema_of(Boot))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "sections": ["now.md"]}, schema_of(Boot))
