"""The boot as an MCP resource and a prompt, and the other prompts a person runs from the client.

Why: a tool is called by the model; a resource is what a person (or the client) attaches to a
conversation, and a prompt is what a person starts one with: Claude Code lists an MCP server's
prompts as slash commands (``/mcp__brain__boot``) and its resources as ``@`` mentions. Until now
both lists were empty, so a person could not start a session on the project's memory without
asking the model to call ``brain_boot``.

Resources (``resources/list``): ``brain://boot`` (the boot of the caller's session, as
``brain_boot`` without arguments gives it), ``brain://now`` (now.md), ``brain://focus`` (focus.md).
Prompts (``prompts/list``): ``boot`` (optional ``task``: the boot for that task, then what to do
next), ``remember`` (``text``: record it in the right memory file), ``checkpoint`` (optional
``step``: snapshot before a compaction and update now.md, with now.md and its hash included).

Each runs as the request's caller, exactly like a tool: the server adapter sets the token's
principal and the session handle first (``server._request_identity``), so on the team server a
token's boot is its own session's. A ``BrainError`` becomes a JSON-RPC error whose message is
``<kind>: <message>`` and what to do, with the typed fields as its data (resources and prompts
have no ``isError`` result).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

__all__ = ["RESOURCES", "PROMPTS", "register_resources_and_prompts", "register_unavailable"]

RESOURCES = {
    "brain://boot": ("boot", "The boot of your session: now.md first, then your checkpoint, focus, cards, decisions "
                             "(what brain_boot returns without arguments)."),
    "brain://now": ("now", "now.md: what is happening on this project now, the next action, the implicit context."),
    "brain://focus": ("focus", "focus.md: what the humans running this project say matters now."),
}
PROMPTS = ("boot", "remember", "checkpoint")


def _error(error) -> Exception:
    from mcp.shared.exceptions import MCPError

    text = f"{error.kind}: {error.message}" + (f"\nwhat to do: {error.hint}" if error.hint else "")
    return MCPError(-32603 if error.kind == "internal" else -32602, text, error.to_dict())


async def _run(fn, *args):
    """``fn(*args)`` on a worker thread (the caller's principal and handle follow), a BrainError mapped."""
    from ..errors import BrainError
    from .calls import in_thread

    try:
        return await in_thread(fn, *args)
    except BrainError as error:
        raise _error(error) from None


def _boot_text(brain, task: str | None) -> str:
    from .tools.core import _boot_session

    return brain.boot(task, session=_boot_session(brain, None)).text


def _file(brain, path: str) -> tuple[str, str]:
    doc = brain.read(path)
    return doc.text, doc.hash


def register_resources_and_prompts(server, brain) -> None:
    """Add the resources and prompts of ``brain`` to the SDK ``server`` (an MCPServer)."""

    @server.resource("brain://boot", name="boot", title="Boot context", description=RESOURCES["brain://boot"][1],
                     mime_type="text/markdown")
    async def boot_resource() -> str:
        return await _run(_boot_text, brain, None)

    @server.resource("brain://now", name="now", title="now.md", description=RESOURCES["brain://now"][1],
                     mime_type="text/markdown")
    async def now_resource() -> str:
        return (await _run(_file, brain, "now.md"))[0]

    @server.resource("brain://focus", name="focus", title="focus.md", description=RESOURCES["brain://focus"][1],
                     mime_type="text/markdown")
    async def focus_resource() -> str:
        return (await _run(_file, brain, "focus.md"))[0]

    @server.prompt(name="boot", title="Boot on the project's memory")
    async def boot(task: Annotated[str | None, Field(description="What you are about to do: selects the module "
                                                                  "cards, decisions and code that come in.")] = None
                   ) -> list[dict[str, Any]]:
        """Start the session on this project's memory: now.md, your checkpoint, focus, and (with a task) the module
        cards, decisions and code of that task, under the boot budget."""
        text = await _run(_boot_text, brain, task)
        ask = (f"My task: {task}\n\n" if task else "") + (
            "This is the project's memory (brain). Read it, say in two lines where things stand and what you will "
            "do next, then start. Fetch what it lists as left out with brain_read. Before you stop, update now.md "
            "with brain_write.")
        return [_user(text), _user(ask)]

    @server.prompt(name="remember", title="Remember this")
    async def remember(text: Annotated[str, Field(description="The fact, decision or pitfall to keep, in one or "
                                                              "two sentences.")]) -> list[dict[str, Any]]:
        """Record one thing in the project's memory, in the file where the next session will look for it."""
        return [_user(
            f"Record this in the project's memory (brain):\n\n{text}\n\n"
            "Find where it belongs with brain_search or brain_notes (a note in notes/, a module card's How to use "
            "with brain_report_done, now.md for the current state); read that file with brain_read and write it "
            "back with brain_write and the expected_hash brain_read gave, adding one line. If no file fits, create "
            "notes/<topic>.md. Never record a secret (brain redacts them anyway).")]

    @server.prompt(name="checkpoint", title="Checkpoint before a compaction")
    async def checkpoint(step: Annotated[str | None, Field(description="Your current step, in one line.")] = None
                         ) -> list[dict[str, Any]]:
        """Snapshot where you are (brain_checkpoint) and update now.md, before a context compaction or a handoff."""
        now, digest = await _run(_file, brain, "now.md")
        first = f"step={step!r}" if step else "your current step"
        return [_user(
            "Checkpoint now, before the context is compacted or handed off:\n"
            f"1. call brain_checkpoint with {first} and a note (next action, open questions);\n"
            "2. update now.md (Current step, Next action, Implicit context) with brain_write, "
            f"expected_hash=\"{digest[:16]}\". It reads now:\n\n{now}")]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": text}}


def register_unavailable(server, error) -> None:
    """The same resources and prompts where there is no brain: each answers ``error`` (what to run)."""

    async def refuse(*_args, **_kwargs):
        raise _error(error)

    for uri, (name, description) in RESOURCES.items():
        server.resource(uri, name=name, description=description, mime_type="text/markdown")(
            _named(refuse, f"{name}_resource"))

    async def boot(task: str | None = None):
        raise _error(error)

    async def remember(text: str):
        raise _error(error)

    async def checkpoint(step: str | None = None):
        raise _error(error)

    for fn in (boot, remember, checkpoint):
        fn.__doc__ = error.message
        server.prompt(name=fn.__name__)(fn)


def _named(fn, name: str):
    async def named():
        return await fn()

    named.__name__ = named.__qualname__ = name
    return named
