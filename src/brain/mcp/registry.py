"""Tool groups declare their MCP tools here, without importing the MCP SDK.

A tool group is a module under ``brain.mcp.tools`` with a ``register(tools)``
function. It declares plain functions whose first parameter is the opened
``Brain`` and whose other parameters are the tool's typed inputs (annotated with
``pydantic.Field`` descriptions). The server adapter (``brain.mcp.server``) turns
each declaration into an SDK tool: it hides the ``brain`` parameter, refuses
unknown arguments, and maps ``BrainError`` to a tool error the agent can act on.

Keeping the declarations SDK-free means a group can be imported, listed and
unit-tested without the optional ``mcp`` extra, and one registry holds both the
tools and the connection hooks a group needs (the coordination group marks a
session live from ``on_initialize``).
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["ToolRegistry", "ToolDef", "ToolOutput", "ClientHello", "InitializeHook", "CloseHook"]


@dataclass(frozen=True)
class ToolOutput:
    """What a tool hands back: ``text`` for the agent to read, ``data`` as structured content.

    A tool may also return a plain ``str`` (text only) or a ``dict`` (sent as
    JSON text and as structured content).
    """

    text: str
    data: dict[str, Any] | None = None
    note: str | None = None  # a second, short text block (e.g. the hash to pass back on a write)


@dataclass(frozen=True)
class ClientHello:
    """Who opened a connection: passed to ``on_initialize`` hooks.

    ``method`` is ``initialize`` for the handshake era, ``server/discover`` for a
    2026-07-28 client that probes first. ``transport`` is ``stdio`` or ``http``.
    """

    method: str
    client_name: str | None
    client_version: str | None
    protocol_version: str | None
    transport: str


InitializeHook = Callable[[Any, ClientHello], None]  # (brain, hello) -> None
CloseHook = Callable[[Any], None]  # (brain) -> None


@dataclass(frozen=True)
class ToolDef:
    """One declared tool: its name, the function, and how an agent should see it."""

    name: str
    fn: Callable[..., Any]
    description: str
    title: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    inline: bool = False  # a sync tool run on the event loop rather than a worker thread
    access: dict[str, Any] = field(default_factory=dict)  # argument -> what it names (brain.mcp.access)
    output: type | None = None  # the TypedDict of its structured content (brain.mcp.outputs)
    heavy: bool = False  # ranks or reads the search index (tens of ms): runs in the heavy lane (brain.mcp.calls)

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema listed as the tool's ``outputSchema``."""
        from .outputs import schema_of

        return schema_of(self.output) if self.output is not None else None

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def parameters(self) -> list[inspect.Parameter]:
        """The tool's inputs: the function's parameters after ``brain``, annotations resolved."""
        hints = typing.get_type_hints(self.fn, include_extras=True)
        params = list(inspect.signature(self.fn).parameters.values())[1:]
        return [p.replace(annotation=hints.get(p.name, p.annotation)) for p in params]

    def argument_names(self) -> list[str]:
        return [p.name for p in self.parameters()]


@dataclass
class ToolRegistry:
    """Collects the tools and hooks every tool group declares."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    initialize_hooks: list[InitializeHook] = field(default_factory=list)
    close_hooks: list[CloseHook] = field(default_factory=list)

    def tool(self, name: str | None = None, *, title: str | None = None, description: str | None = None,
             read_only: bool = False, destructive: bool = False, idempotent: bool = False, inline: bool = False,
             heavy: bool = False, output: type | None = None):
        """Decorator: declare ``fn(brain, ...)`` as an MCP tool (its docstring is the description).

        The description is what an agent reads to decide when to call the tool:
        say what it returns and when to use it rather than another tool.

        A sync tool runs on a worker thread. ``inline=True`` runs it on the event
        loop instead, saving the thread hop (about half a millisecond of a stdio
        call): only for calls that finish in well under a millisecond and never
        wait, such as reading one memory file.

        ``heavy=True``: a call that ranks or reads the search index (a boot, a search: tens of
        milliseconds of CPU); it runs in its own lane of threads, so claims and signals never queue
        behind it (``brain.mcp.calls``).

        ``output`` is the ``TypedDict`` of the tool's structured content (``brain.mcp.outputs``):
        every tool declares one, listed as its ``outputSchema``.
        """

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or fn.__name__
            if tool_name in self.tools:
                raise ValueError(f"MCP tool {tool_name!r} is declared twice")
            params = list(inspect.signature(fn).parameters)
            if not params or params[0] != "brain":
                raise TypeError(f"MCP tool {tool_name!r}: the first parameter must be `brain`")
            try:
                typing.get_type_hints(fn, include_extras=True)
            except NameError as exc:
                raise TypeError(f"MCP tool {tool_name!r}: its annotations cannot be resolved ({exc}); import the "
                                "names they use (Annotated, Field...) at module level") from None
            from .access import declarations

            try:
                access = declarations(fn)  # what each argument names: checked once per call by the dispatch
            except TypeError as exc:
                raise TypeError(f"MCP tool {tool_name!r}: {exc}") from None
            if output is None:
                raise TypeError(f"MCP tool {tool_name!r} must declare its result's shape: output=<a TypedDict of "
                                "brain.mcp.outputs>")
            text = inspect.cleandoc(description or fn.__doc__ or "")
            if not text:
                raise ValueError(f"MCP tool {tool_name!r} needs a description (a docstring)")
            self.tools[tool_name] = ToolDef(tool_name, fn, text, title, read_only, destructive, idempotent, inline,
                                           access, output, heavy)
            return fn

        return decorator

    def on_initialize(self, hook: InitializeHook) -> InitializeHook:
        """Call ``hook(brain, hello)`` when a client opens a connection (the MCP handshake).

        It runs inline while the handshake is answered: keep it short, never wait
        on the client. A hook that raises is logged and does not fail the handshake.
        """
        self.initialize_hooks.append(hook)
        return hook

    def on_close(self, hook: CloseHook) -> CloseHook:
        """Call ``hook(brain)`` once when the server stops (stdio: the client closed the pipe)."""
        self.close_hooks.append(hook)
        return hook
