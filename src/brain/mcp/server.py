"""The MCP adapter: declared tool groups become tools of the official SDK's ``MCPServer``.

This is the only module that imports the ``mcp`` SDK (an optional extra), and the
CLI imports it only inside ``brain serve``. What it adds to the SDK:

- the opened ``Brain`` is passed to every tool function, hidden from the schema;
- unknown arguments are refused (the SDK's argument models silently drop them),
  and the advertised input schemas say ``additionalProperties: false``;
- every call goes through ``access.authorize`` first: on the team server a tool
  argument naming a session, claim, ask or layer the token does not own is refused
  (``Forbidden``), the same way for every tool;
- ``BrainError`` becomes a tool error (``isError``) whose text names the kind and
  says what to do, with the error's typed fields as structured content;
- the ``on_initialize`` hooks of the tool groups run at the MCP handshake (the coordination group
  starts the connection's session there), and tool calls are counted (``brain._mcp_tool_calls``).
"""

from __future__ import annotations

import inspect
import json
import logging
import time
from contextlib import asynccontextmanager
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CLIENT_INFO_META_KEY, CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from ..errors import BrainError
from .access import authorize
from .callers import request_identity as _request_identity
from .registry import ClientHello, ToolDef, ToolOutput, ToolRegistry

__all__ = ["build_server", "build_unbound_server", "error_result", "to_result", "count_tool_call",
           "INSTRUCTIONS"]

log = logging.getLogger("brain.mcp")

INSTRUCTIONS = (
    "brain is this project's memory. Call brain_boot at the start of a session and after a context "
    "compaction: it starts with now.md, what is happening now. Fetch anything it lists as left out with "
    "brain_read. Before you stop, update now.md with brain_write so the next session resumes where you are."
)
HTTP_INSTRUCTIONS = (
    " Over HTTP, unless a bearer token is your identity, call brain_session_start first and pass its handle "
    "on every request (Brain-Session header, brain/session in _meta, or the session argument)."
)


# -- results ----------------------------------------------------------------------
def _text(*blocks: str | None) -> list[TextContent]:
    return [TextContent(type="text", text=b) for b in blocks if b]


def error_result(kind: str, message: str, hint: str | None, data: dict[str, Any]) -> CallToolResult:
    """A tool error the agent can act on: ``<kind>: <message>`` then what to do."""
    text = f"{kind}: {message}" + (f"\nwhat to do: {hint}" if hint else "")
    return CallToolResult(content=_text(text), structured_content=data, is_error=True)


def brain_error_result(error: BrainError) -> CallToolResult:
    return error_result(error.kind, error.message, error.hint, error.to_dict())


def to_result(value: Any) -> CallToolResult:
    """Turn what a tool function returned into a result (see ``ToolOutput``)."""
    if isinstance(value, CallToolResult):
        return value
    if isinstance(value, ToolOutput):
        return CallToolResult(content=_text(value.text or "(empty)", value.note), structured_content=value.data)
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, str):
        return CallToolResult(content=_text(value or "(empty)"))
    if isinstance(value, list):
        value = {"items": [v.to_dict() if hasattr(v, "to_dict") else v for v in value]}
    if isinstance(value, dict):
        return CallToolResult(content=_text(json.dumps(value, ensure_ascii=False, indent=1, default=str)),
                              structured_content=json.loads(json.dumps(value, default=str)))
    return CallToolResult(content=_text(str(value)))


def _internal(name: str, exc: BaseException) -> CallToolResult:
    log.exception("MCP tool %s failed unexpectedly", name)
    return error_result("internal", f"{name} failed unexpectedly: {type(exc).__name__}: {exc}",
                        "this is a bug in brain, not in your call: report it with the server log "
                        "(run the server with BRAIN_LOG=debug); retrying will likely fail the same way",
                        {"error": "internal", "type": type(exc).__name__, "message": str(exc)})


# -- tools ------------------------------------------------------------------------
def _bind(tool: ToolDef, brain) -> Callable[..., Any]:
    """A function with the tool's inputs (``brain`` hidden) that calls the library and maps errors.

    Every call is admitted first (``calls.admitted``: a bearer token has at most
    ``server.token_calls`` calls running); a sync tool then runs on a worker thread, an async
    one (a wait) on the event loop, holding no thread while it waits."""
    from .calls import admitted, in_thread

    params = tool.parameters()
    access = tool.access

    def run(kwargs):
        authorize(brain, tool.name, access, kwargs)  # team server: a token acts only as itself
        return to_result(tool.fn(brain, **kwargs))

    async def call(**kwargs):
        from ..search.gitstamp import arrived

        try:
            with arrived(time.monotonic()):  # a git status started after this moment answers this call too
                return await _admitted_call(kwargs)
        except BrainError as error:
            return brain_error_result(error)
        except Exception as exc:  # noqa: BLE001 - every failure reaches the agent as a tool error
            return _internal(tool.name, exc)

    async def _admitted_call(kwargs):
        async with admitted(brain):
            if tool.is_async:
                await in_thread(authorize, brain, tool.name, access, kwargs)
                return to_result(await tool.fn(brain, **kwargs))
            if tool.inline:  # quick and non-blocking by declaration: no worker-thread hop
                return run(kwargs)
            return await in_thread(run, kwargs, heavy=tool.heavy)

    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = tool.description
    call.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": CallToolResult}
    return call


class _DeclaredTool(Tool):
    """An SDK tool whose ``outputSchema`` is the one its group declared (``brain.mcp.outputs``), not derived
    from the bound function (which returns a ready ``CallToolResult``, so the SDK would derive none)."""

    declared_output: dict[str, Any] | None = None

    @property
    def output_schema(self) -> dict[str, Any] | None:  # type: ignore[override]
        return self.declared_output


def _sdk_tool(tool: ToolDef, brain) -> Tool:
    sdk = _DeclaredTool.from_function(
        _bind(tool, brain), name=tool.name, title=tool.title, description=tool.description,
        annotations=ToolAnnotations(title=tool.title, read_only_hint=tool.read_only,
                                    destructive_hint=None if tool.read_only else tool.destructive,
                                    idempotent_hint=tool.idempotent, open_world_hint=False),
    )
    sdk.parameters["additionalProperties"] = False  # tell clients what call_tool enforces
    sdk.declared_output = tool.output_schema()
    return sdk


class _BrainMCPServer(MCPServer):
    """MCPServer that refuses unknown arguments and words argument errors for an agent."""

    def __init__(self, registry: ToolRegistry, *, unbound: BrainError | None = None, brain=None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._brain = brain
        self._accepted = {name: tool.argument_names() for name, tool in registry.tools.items()}
        self._unbound = unbound  # no brain here: every known tool answers this, whatever its arguments

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        rctx = getattr(context, "_request_context", None)
        async with _request_identity(self._brain if self._unbound is None else None, rctx,
                                     arguments if name in self._accepted else None) as identity:
            if identity.refused is not None:
                return brain_error_result(identity.refused)
            return await self._call_tool(name, identity.arguments, context)

    async def read_resource(self, uri, context=None):
        async with _request_identity(self._brain if self._unbound is None else None,
                                     getattr(context, "_request_context", None)) as identity:
            if identity.refused is not None:
                from .prompts import _error

                raise _error(identity.refused)
            return await super().read_resource(uri, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context=None):
        async with _request_identity(self._brain if self._unbound is None else None,
                                     getattr(context, "_request_context", None)) as identity:
            if identity.refused is not None:
                from .prompts import _error

                raise _error(identity.refused)
            return await super().get_prompt(name, arguments, context)

    async def answer_tool_call(self, name: str, arguments: dict[str, Any], scope) -> CallToolResult:
        """A ``tools/call`` answered outside the SDK's dispatcher (``brain.mcp.lane``), as ``call_tool`` under
        the SDK's ``_handle_call_tool`` answers it: the same request identity (the principal the team
        middleware left in ``scope``, a ``Brain-Session`` handle header), and a ``ToolError`` left over
        becomes a tool error result."""
        from types import SimpleNamespace

        from starlette.requests import Request

        rctx = SimpleNamespace(request=Request(scope), meta=None)  # the lane never takes a request with _meta
        try:
            async with _request_identity(self._brain if self._unbound is None else None, rctx,
                                         arguments if name in self._accepted else None) as identity:
                if identity.refused is not None:
                    return brain_error_result(identity.refused)
                return await self._call_tool(name, identity.arguments, None)
        except ToolError as exc:
            log.info("Tool %r failed: %r", name, str(exc))
            return CallToolResult(content=_text(str(exc)), is_error=True)

    async def _call_tool(self, name: str, arguments: dict[str, Any], context=None):
        accepted = self._accepted.get(name)
        if accepted is not None and self._unbound is not None:
            return brain_error_result(self._unbound)
        if accepted is not None:
            unknown = sorted(set(arguments) - set(accepted))
            if unknown:
                return error_result(
                    "invalid_input", f"{name} does not take the argument(s) {', '.join(unknown)}",
                    f"call {name} again with only: {', '.join(accepted) or '(no arguments)'}",
                    {"error": "invalid_input", "field": unknown[0], "unknown": unknown, "accepted": accepted})
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                problems = [f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in cause.errors()]
                fields = [".".join(str(p) for p in e["loc"]) for e in cause.errors()]
                return error_result("invalid_input", f"{name} got invalid arguments: " + "; ".join(problems),
                                    "fix those arguments as the tool's input schema describes and call again",
                                    {"error": "invalid_input", "field": fields[0] if fields else None,
                                     "problems": problems})
            if accepted is None:  # an unknown tool
                return error_result("not_found", str(exc), "call tools/list to see the tools this server has",
                                    {"error": "not_found", "tool": name})
            raise


# -- hooks ------------------------------------------------------------------------
def _hello(method: str, params: dict[str, Any] | None, protocol_version: str | None, transport: str) -> ClientHello:
    params = params or {}
    if method == "initialize":
        info = params.get("clientInfo") or {}
        protocol_version = params.get("protocolVersion") or protocol_version
    else:
        info = (params.get("_meta") or {}).get(CLIENT_INFO_META_KEY) or {}
    info = info if isinstance(info, dict) else {}
    return ClientHello(method, info.get("name"), info.get("version"), protocol_version, transport)


def _opens_connection(method: str, params: dict[str, Any], transport: str, greeted: bool) -> bool:
    """Whether this request is a client's hello: the handshake (``initialize``), the 2026-07-28 probe
    (``server/discover``), or over stdio the first request of a 2026-07-28 client that pins its version
    without probing (its envelope names the client; one stdio connection is one client)."""
    if method in ("initialize", "server/discover"):
        return True
    if transport != "stdio" or greeted:
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and CLIENT_INFO_META_KEY in meta


def _carries_handle(params: dict[str, Any], request) -> bool:
    from . import handles

    meta = params.get("_meta")
    arguments = params.get("arguments")
    return bool((isinstance(meta, dict) and handles.META_KEY in meta)
                or (request is not None and handles.HEADER in getattr(request, "headers", {}))
                or (isinstance(arguments, dict) and handles.is_handle(arguments.get("session"))))


def count_tool_call(brain, params: dict[str, Any], request) -> None:
    """One more tool call on this server, unless it names its session by a handle: the connection did
    something as its own session, so that session is kept when it closes."""
    if not _carries_handle(params, request):
        brain._mcp_tool_calls = getattr(brain, "_mcp_tool_calls", 0) + 1


def _hello_middleware(brain, registry: ToolRegistry, transport: str):
    greeted = False

    async def middleware(ctx, call_next):
        nonlocal greeted
        params = dict(ctx.params or {})
        log.debug("request %s (protocol %s)", ctx.method, ctx.protocol_version)
        if ctx.method == "tools/call":
            count_tool_call(brain, params, ctx.request)
        opening = registry.initialize_hooks and _opens_connection(ctx.method, params, transport, greeted)
        if opening and ctx.method not in ("initialize", "server/discover"):
            await _run_hello_hooks(brain, registry, ctx, params, transport)  # before the call that needs it
            greeted = True
        result = await call_next(ctx)
        if opening and ctx.method in ("initialize", "server/discover"):
            await _run_hello_hooks(brain, registry, ctx, params, transport)
            greeted = True
            if transport == "stdio":
                _watch_asks_if_elicited(brain, ctx.session, params)
        return result

    return middleware


async def _run_hello_hooks(brain, registry: ToolRegistry, ctx, params: dict[str, Any], transport: str) -> None:
    """Run the ``on_initialize`` hooks on a worker thread (a session start writes to the store), as the
    request's principal; the client's answer waits for them, so its session exists once it is answered."""
    import anyio

    from ..team.identity import PRINCIPAL, principal_of_scope

    hello = _hello(ctx.method, params, ctx.protocol_version, transport)
    log.debug("client hello: %s", hello)
    principal = principal_of_scope(ctx.request) if ctx.request is not None else None

    def run() -> None:
        bound = PRINCIPAL.set(principal) if principal is not None else None
        try:
            for hook in registry.initialize_hooks:
                try:
                    hook(brain, hello)
                except Exception:  # noqa: BLE001 - a hook must not cost the client its handshake
                    log.exception("on_initialize hook %r failed", hook)
        finally:
            if bound is not None:
                PRINCIPAL.reset(bound)

    await anyio.to_thread.run_sync(run)


def _watch_asks_if_elicited(brain, session, params: dict[str, Any]) -> None:
    """Deliver the asks made of this connection's session as elicitations, when its client can show them
    (brain.mcp.elicit); otherwise nothing changes: the asks wait in the inbox."""
    from .elicit import declared_elicitation, watch_asks

    tasks, sid = getattr(brain, "_mcp_tasks", None), getattr(brain, "_mcp_session", None)
    if tasks is None or not sid or getattr(brain, "_mcp_watching", False) or not declared_elicitation(params):
        return
    brain._mcp_watching = True
    tasks.start_soon(watch_asks, brain, session, sid)


def _lifespan(brain, registry: ToolRegistry):
    @asynccontextmanager
    async def lifespan(_server):
        import anyio

        try:
            async with anyio.create_task_group() as tasks:  # the connection's background work (the ask watcher)
                brain._mcp_tasks = tasks
                try:
                    yield {}
                finally:
                    brain._mcp_tasks = None
                    tasks.cancel_scope.cancel()
        finally:
            for hook in registry.close_hooks:
                try:
                    hook(brain)
                except Exception:  # noqa: BLE001
                    log.exception("on_close hook %r failed", hook)

    return lifespan


# -- the server -----------------------------------------------------------------------
def build_server(brain, registry: ToolRegistry | None = None, *, transport: str = "stdio") -> MCPServer:
    """An ``MCPServer`` serving ``brain`` with every tool group of ``TOOL_MODULES`` (or ``registry``)."""
    from .. import __version__
    from ..search.answers import keep_answers
    from .tools import collect

    keep_answers()  # a server boots again and again: a repeated task ranks once (brain.search.answers)
    registry = collect() if registry is None else registry
    server = _BrainMCPServer(
        registry,
        brain=brain,
        name="brain",
        title=f"brain: {brain.name}",
        version=__version__,
        instructions=INSTRUCTIONS + (HTTP_INSTRUCTIONS if transport == "http" else ""),
        tools=[_sdk_tool(tool, brain) for tool in registry.tools.values()],
        log_level="DEBUG" if logging.getLogger("brain").isEnabledFor(logging.DEBUG) else "WARNING",
        lifespan=_lifespan(brain, registry),
    )
    server.middleware.append(_hello_middleware(brain, registry, transport))
    from .prompts import register_resources_and_prompts

    register_resources_and_prompts(server, brain)  # brain://boot, brain://now, brain://focus; boot, remember...
    return server


def _unavailable(tool: ToolDef, error: BrainError) -> Callable[..., Any]:
    """A function with the tool's inputs that answers ``error`` whatever it is called with."""
    params = tool.parameters()

    async def call(**_kwargs):
        return brain_error_result(error)

    call.__name__ = call.__qualname__ = tool.name
    call.__doc__ = tool.description
    call.__signature__ = inspect.Signature(params, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in params} | {"return": CallToolResult}
    return call


def build_unbound_server(error: BrainError, registry: ToolRegistry | None = None) -> MCPServer:
    """A server for a folder without a brain: the same tools, each answering ``error`` (what to run).

    A client whose MCP config is global (Codex: ~/.codex/config.toml) starts `brain serve` in
    every folder it opens. Exiting there would show brain as failed in the client's list and
    hide why; this server completes the handshake and tells the agent, on every call, that
    this folder has no brain and that `brain init` makes one. No session is started.
    """
    from .. import __version__
    from .tools import collect

    registry = collect() if registry is None else registry
    tools = []
    for tool in registry.tools.values():
        sdk = _DeclaredTool.from_function(_unavailable(tool, error), name=tool.name, title=tool.title,
                                          description=tool.description,
                                          annotations=ToolAnnotations(title=tool.title, read_only_hint=tool.read_only))
        sdk.parameters["additionalProperties"] = False
        sdk.declared_output = tool.output_schema()  # the same tools as where a brain is: every call is an error
        tools.append(sdk)
    server = _BrainMCPServer(registry, unbound=error, name="brain", title="brain: no brain here", version=__version__,
                             instructions=f"{error.message}. {error.hint or ''}".strip(), tools=tools,
                             log_level="WARNING")
    from .prompts import register_unavailable

    register_unavailable(server, error)
    return server
