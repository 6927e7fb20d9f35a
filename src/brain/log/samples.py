"""Transcripts written in the clients' documented formats, for tests and benchmarks.

Nothing here is read from a real client: these writers produce the line shapes the
readers in ``transcripts`` expect (Claude Code project JSONL, Codex rollout JSONL),
so the project can test and benchmark `brain stats` and the transcript import on
data it generates itself.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field

__all__ = ["Call", "Task", "claude_lines", "codex_lines", "iso"]


def iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z"


@dataclass
class Call:
    """One model call: its context size, what it says and which tools it uses."""

    context: int
    text: str = ""
    reads: tuple[str, ...] = ()  # files read with the Read tool (Codex: `cat`)
    shell_reads: tuple[str, ...] = ()  # files read with a shell command (sed -n / cat)
    edits: tuple[str, ...] = ()


@dataclass
class Task:
    prompt: str
    calls: list[Call] = field(default_factory=list)
    compact_after: bool = False


def claude_lines(session: str, cwd: str, start: float, tasks: list[Task], *, step: float = 5.0) -> list[str]:
    """A Claude Code session file (`~/.claude/projects/<slug>/<session>.jsonl`)."""
    at = start
    lines: list[str] = []
    parent = None

    def base(kind: str) -> dict:
        nonlocal at, parent
        at += step
        uid = str(uuid.UUID(int=len(lines) + 1))
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
               "version": "1.0.0", "gitBranch": "main", "type": kind, "uuid": uid, "timestamp": iso(at)}
        parent = uid
        return rec

    for n, task in enumerate(tasks):
        lines.append(json.dumps({**base("user"), "message": {"role": "user", "content": task.prompt}}))
        for c, call in enumerate(task.calls):
            mid = f"msg_{n:04d}_{c:04d}"
            usage = {"input_tokens": 4, "cache_creation_input_tokens": call.context // 10,
                     "cache_read_input_tokens": call.context - 4 - call.context // 10, "output_tokens": 120,
                     "service_tier": "standard"}
            blocks: list[dict] = []
            if call.text:
                blocks.append({"type": "text", "text": call.text})
            for i, path in enumerate(call.reads):
                blocks.append({"type": "tool_use", "id": f"toolu_{n}_{c}_r{i}", "name": "Read", "input": {"file_path": path}})
            for i, path in enumerate(call.shell_reads):
                blocks.append({"type": "tool_use", "id": f"toolu_{n}_{c}_s{i}", "name": "Bash",
                               "input": {"command": f"sed -n '1,80p' {path}", "description": "show the file"}})
            for i, path in enumerate(call.edits):
                blocks.append({"type": "tool_use", "id": f"toolu_{n}_{c}_e{i}", "name": "Edit",
                               "input": {"file_path": path, "old_string": "a", "new_string": "b"}})
            for block in blocks or [{"type": "text", "text": "…"}]:  # one line per content block, same usage
                lines.append(json.dumps({**base("assistant"), "requestId": f"req_{mid}", "message": {
                    "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [block], "stop_reason": None, "usage": usage}}))
            for block in blocks:
                if block["type"] == "tool_use":
                    lines.append(json.dumps({**base("user"), "message": {"role": "user", "content": [
                        {"tool_use_id": block["id"], "type": "tool_result", "content": "ok"}]}}))
        if task.compact_after:
            lines.append(json.dumps({**base("system"), "subtype": "compact_boundary", "content": "Conversation compacted",
                                     "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 150000}}))
            lines.append(json.dumps({**base("user"), "isCompactSummary": True, "message": {
                "role": "user", "content": "This session is being continued from a previous conversation..."}}))
    return lines


def codex_lines(session: str, cwd: str, start: float, tasks: list[Task], *, step: float = 5.0) -> list[str]:
    """A Codex rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-<stamp>-<id>.jsonl`)."""
    at = start

    def line(kind: str, payload: dict) -> str:
        nonlocal at
        at += step
        return json.dumps({"timestamp": iso(at), "type": kind, "payload": payload})

    lines = [line("session_meta", {"id": session, "timestamp": iso(start), "cwd": cwd, "originator": "codex_cli_rs",
                                   "cli_version": "0.46.0", "instructions": None, "source": "cli"})]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
             "total_tokens": 0}
    for n, task in enumerate(tasks):
        lines.append(line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": task.prompt}]}))
        lines.append(line("event_msg", {"type": "user_message", "message": task.prompt, "kind": "plain"}))
        lines.append(line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex"}))
        for c, call in enumerate(task.calls):
            for i, path in enumerate(call.reads + call.shell_reads):
                cmd = ["bash", "-lc", f"cat {path}" if i < len(call.reads) else f"sed -n '1,80p' {path}"]
                lines.append(line("response_item", {"type": "function_call", "name": "shell",
                                                    "arguments": json.dumps({"command": cmd, "workdir": cwd}),
                                                    "call_id": f"call_{n}_{c}_{i}"}))
                lines.append(line("response_item", {"type": "function_call_output", "call_id": f"call_{n}_{c}_{i}",
                                                    "output": json.dumps({"output": "…", "metadata": {"exit_code": 0}})}))
            for path in call.edits:
                patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
                lines.append(line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": patch,
                                                    "call_id": f"patch_{n}_{c}"}))
            if call.text:
                lines.append(line("event_msg", {"type": "agent_message", "message": call.text}))
                lines.append(line("response_item", {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": call.text}]}))
            last = {"input_tokens": call.context, "cached_input_tokens": call.context * 3 // 4, "output_tokens": 150,
                    "reasoning_output_tokens": 64, "total_tokens": call.context + 214}
            total = {k: total[k] + last[k] for k in total}
            info = {"total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 272000}
            lines.append(line("event_msg", {"type": "token_count", "info": info, "rate_limits": None}))
            lines.append(line("event_msg", {"type": "token_count", "info": info, "rate_limits": {"primary": None}}))
        if task.compact_after:
            lines.append(line("compacted", {"message": "summary of the conversation so far"}))
            lines.append(line("event_msg", {"type": "context_compacted"}))
    return lines
