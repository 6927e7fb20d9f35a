"""The frontier rule (DESIGN §1): raw log content never reaches an agent.

Canary strings are planted in conversation logs — appended raw, recorded through the
fold in sentences the fold distils away, left in rotated segments, and imported from a
Claude Code transcript — and every agent-facing output is searched for them: `brain
boot` (text and JSON), every MCP tool the server lists (called through the real server,
including a direct attempt to read the log file), and every hook's output. The distilled
handoff does reach the agent (a positive control), the raw turns never do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from brain.hooks import claude
from brain.log import ConversationLog, Turn
from brain.log.samples import Call, Task, claude_lines


# every canary sits next to this word, which searches and tasks use: a surface that indexed or matched
# the log would bring the canary back with it
def canary(tag: str) -> str:
    return f"zq{tag}{uuid.uuid4().hex[:12]}"


@pytest.fixture
def planted(brain, tmp_path):
    """A brain whose logs hold canaries, with a coordination session that owns the threads."""
    party = brain.coord.start_session("dev").id
    other = brain.coord.start_session("reviewer").id
    canaries = {k: canary(k) for k in ("raw", "fold", "rotated", "import", "prompt")}
    thread = brain.thread_between(party, other)
    # 1. recorded through the fold, in sentences the fold distils away; plus a distilled control
    brain.record_turn(thread, other, f"I spent a while looking at frontierword {canaries['fold']} and its history.", to=party)
    brain.record_turn(thread, party, "We decided to keep the parser (decision-control-4417).", to=other)
    # 2. appended raw, and 3. pushed into a rotated segment
    log = brain.conversations.log
    log.append(Turn(thread, other, f"raw line frontierword {canaries['raw']}", to=party))
    small = ConversationLog(log.root, rotate_bytes=1, rotate_seconds=0, retention_seconds=0)
    small.append(Turn(thread, other, f"old segment frontierword {canaries['rotated']}", to=party))
    small.append(Turn(thread, party, "newer turn", to=other))
    assert len(log.segments(thread)) >= 2
    # 4. a Claude Code transcript imported by the Stop hook
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(claude_lines("frontier-sid", str(brain.repo), 1.7e9, [
        Task(f"Please look at the tokenizer. The frontierword {canaries['prompt']} note is background only.",
             [Call(3000, f"I read the code; frontierword {canaries['import']} is just a variable name.")])])) + "\n")
    return brain, party, other, thread, canaries, transcript


def assert_clean(where: str, text: str, canaries: dict) -> None:
    for tag, value in canaries.items():
        assert value not in text, f"{tag} canary leaked into {where}"


def test_the_log_holds_the_canaries_for_humans(planted):
    brain, party, other, thread, canaries, transcript = planted
    claude.handle("stop", {"session_id": "frontier-sid", "transcript_path": str(transcript), "cwd": str(brain.repo)},
                  {**os.environ, "CLAUDE_PROJECT_DIR": str(brain.repo)})
    everything = "".join(t.text for th in brain.conversations.threads() for t in brain.conversations.log.iter_turns(th.thread))
    for tag in canaries:
        assert canaries[tag] in everything, tag  # the human surface is rich: the test is not vacuous


def test_no_canary_in_boot_hooks_or_handoffs(planted):
    brain, party, other, thread, canaries, transcript = planted
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(brain.repo)}
    hook_payload = {"session_id": "frontier-sid", "transcript_path": str(transcript), "cwd": str(brain.repo)}
    outputs = {}
    for event, extra in (("session-start", {"source": "startup"}), ("stop", {"stop_hook_active": False}),
                         ("pre-compact", {"trigger": "auto"}), ("session-start", {"source": "compact"}),
                         ("session-end", {"reason": "other"})):
        out, code = claude.handle(event, {**hook_payload, **extra}, env)
        assert code == 0
        outputs[f"hook {event} {extra}"] = out
    for sess in (party, other, json.loads((next((brain.runtime / "hooks").glob("claude-*.json"))).read_text())["party"]):
        result = brain.boot(task="frontierword tokenizer", session=sess, record=False)
        outputs[f"boot {sess}"] = result.text + json.dumps(result.to_dict())
    for rel in brain.memory.list("handoffs"):
        outputs[rel] = brain.read(rel).text
    if hasattr(brain, "search"):  # the library call behind the search tool, over a freshly built index
        if hasattr(brain, "reindex"):
            brain.reindex(rebuild=True)
        outputs["search"] = json.dumps(brain.search("frontierword", limit=50), default=str)
    assert "decision-control-4417" in outputs[f"boot {party}"]  # the distilled handoff does reach the agent
    for where, text in outputs.items():
        assert_clean(where, text, canaries)
    cli = subprocess.run([sys.executable, "-m", "brain", "boot", "--session", party, "--json", "--task", "frontierword"],
                         cwd=brain.repo, capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    assert_clean("brain boot --json", cli.stdout, canaries)


def test_memory_reads_refuse_the_log(planted):
    from brain.errors import InvalidInput

    brain, party, other, thread, canaries, transcript = planted
    for path in (f"runtime/conversations/{thread}/log.jsonl", "runtime/conversations/index.json", "runtime"):
        with pytest.raises(InvalidInput):
            brain.read(path)


def _args_for(name: str, schema: dict, ctx: dict) -> dict:
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    known = {"session": ctx["party"], "target": ctx["other"], "question": "are you there?", "text": "# Note\n",
             "body": "hello", "answer": "yes", "query": "frontierword", "task": "frontierword tokenizer", "budget": 4000,
             "timeout": 1, "wait_seconds": 1, "item": "src/x.py", "path": ctx["log_path"], "key": "k", "value": "v"}
    args = {}
    for prop, spec in props.items():
        if prop in known and (prop in required or prop in ("session", "query", "task", "budget", "timeout",
                                                            "wait_seconds", "target", "question")):
            args[prop] = known[prop]
        elif prop in required:
            kinds = [spec.get("type")] + [s.get("type") for s in spec.get("anyOf", [])]
            args[prop] = 1 if "integer" in kinds or "number" in kinds else False if "boolean" in kinds else "x"
    if name == "brain_write":
        args["path"] = "notes/frontier.md"
    return args


def test_no_canary_in_any_mcp_tool(planted):
    pytest.importorskip("mcp")
    from test_mcp_helpers import stdio_params, text_of, with_client

    brain, party, other, thread, canaries, transcript = planted
    ctx = {"party": party, "other": other, "log_path": f"runtime/conversations/{thread}/log.jsonl"}

    async def body(client):
        tools = (await client.list_tools()).tools
        results = {}
        for tool in tools:
            results[tool.name] = await client.call_tool(tool.name, _args_for(tool.name, tool.input_schema, ctx))
        for path in (ctx["log_path"], f"runtime/conversations/{thread}/handoff.json", f"handoffs/local/{thread}.md"):
            results[f"brain_read {path}"] = await client.call_tool("brain_read", {"path": path})
        return results

    results = with_client(stdio_params(brain.repo), body)
    assert {"brain_boot", "brain_read"} <= set(results)
    assert results[f"brain_read runtime/conversations/{thread}/log.jsonl"].is_error
    assert "decision-control-4417" in text_of(results[f"brain_read handoffs/local/{thread}.md"])
    for name, result in results.items():
        assert_clean(f"MCP {name}", text_of(result) + json.dumps(result.structured_content or {}), canaries)
