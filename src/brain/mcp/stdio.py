"""The stdio transport with its input checked before the SDK parses it (see ``framing``).

The SDK's ``stdio_server`` reads standard input line by line, without a bound on a line's
length, and drops a line its parser refuses without answering. brain hands it its own line
source instead: lines are read in 64 KB chunks from a private copy of file descriptor 0 (fd 0
itself then points at the null device, as the SDK does, so a child process reads EOF); a line
longer than ``limit`` bytes is skipped as it streams (never held whole), and a line nested
deeper than ``framing.MAX_DEPTH`` is not passed on; each is answered with a JSON-RPC error
carrying its request id, through the transport's own writer, so answers never interleave; so
is a line the SDK's own parser refuses (``AnsweringStream``).
The SDK still claims and guards fd 1 (stdout carries protocol only).
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import anyio.to_thread

from .framing import Refusal, check_message, request_id

__all__ = ["serve_stdio", "LineSource", "AnsweringStream", "CHUNK"]

CHUNK = 65536
BATCH_IDS = 1000  # requests of one batch line answered (each with its own error)
_ID_PREFIX = 4096  # bytes of an over-long line kept to find its request id


class LineSource:
    """``async for line in source``: the lines of ``fd`` that may be parsed; the others are answered here."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self.buffer = bytearray()
        self.eof = False
        self.writer = None  # the transport's write stream, set once the server runs
        self.ready = anyio.Event()
        self.last_line = ""  # the line handed to the SDK last: the one its parser refused, when it refuses

    def attach(self, writer) -> None:
        self.writer = writer
        self.ready.set()

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        await self.ready.wait()
        while True:
            line = await self._line()
            if line is None:
                raise StopAsyncIteration
            if isinstance(line, Refusal):
                await self._refuse(line)
                continue
            refusal = check_message(line)
            if refusal is None:
                self.last_line = line
                return line
            await self._refuse(refusal)

    async def _read(self) -> bytes:
        return await anyio.to_thread.run_sync(os.read, self.fd, CHUNK, abandon_on_cancel=True)

    async def _line(self) -> str | Refusal | None:
        """The next line as text, a ``Refusal`` for one above ``limit`` (read to its end, not kept), None at EOF."""
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end + 1])
                del self.buffer[:end + 1]
                if end > self.limit:
                    return self._too_long(line[:_ID_PREFIX])
                return line.decode("utf-8", "replace")
            if len(self.buffer) > self.limit:
                return await self._skip_long_line()
            if self.eof:
                rest, self.buffer = bytes(self.buffer), bytearray()
                return rest.decode("utf-8", "replace") if rest.strip() else None
            chunk = await self._read()
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True

    async def _skip_long_line(self) -> Refusal:
        prefix = bytes(self.buffer[:_ID_PREFIX])
        self.buffer.clear()
        while not self.eof:
            chunk = await self._read()
            if not chunk:
                self.eof = True
                break
            end = chunk.find(b"\n")
            if end >= 0:
                self.buffer += chunk[end + 1:]
                break
        return self._too_long(prefix)

    def _too_long(self, prefix: bytes) -> Refusal:
        return Refusal(-32600, f"Invalid request: message longer than {self.limit} bytes",
                       request_id(prefix.decode("utf-8", "replace")))

    async def _refuse(self, refusal: Refusal) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        error = types.JSONRPCError(jsonrpc="2.0", id=refusal.request_id,
                                   error=types.ErrorData(code=refusal.code, message=refusal.message))
        try:
            await self.writer.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


class AnsweringStream:
    """The SDK's read stream, with each line its parser refused answered rather than dropped.

    The SDK's stdio reader parses each line and, when its parser refuses it (a number of more than
    4300 digits, invalid JSON, a request without a method), passes the exception on, which the
    dispatcher only logs: the client's call never ends. The reader hands over one item at a time
    and waits until it is taken, so when an exception arrives the source's ``last_line`` is the
    line that failed: its request id is read from it and the error answered (``-32700`` when it is
    not JSON, ``-32600`` otherwise). Everything else passes through untouched."""

    def __init__(self, inner, source: LineSource) -> None:
        self.inner = inner
        self.source = source

    @property
    def last_context(self):
        return getattr(self.inner, "last_context", None)

    async def __aenter__(self):
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self.inner.__aexit__(*exc)

    def __aiter__(self):
        return self

    async def __anext__(self):
        while True:
            item = await self.inner.__anext__()
            if not isinstance(item, Exception):
                return item
            for refusal in _unparsed(item, self.source.last_line):
                await self.source._refuse(refusal)

    async def receive(self):
        return await self.__anext__()

    async def aclose(self) -> None:
        await self.inner.aclose()


def _unparsed(error: Exception, line: str) -> list[Refusal]:
    """The errors answering a line the SDK refused: one per request of a batch (MCP has no batches), else one."""
    errors = error.errors() if hasattr(error, "errors") else []
    if any(e.get("type") == "json_invalid" for e in errors):
        return [Refusal(-32700, "Parse error: not valid JSON", request_id(line))]
    batch = _batch_ids(line)
    if batch:
        return [Refusal(-32600, "Invalid request: batches are not supported; send one message per line", ident)
                for ident in batch]
    return [Refusal(-32600, "Invalid request: not a JSON-RPC message", request_id(line))]


def _batch_ids(line: str) -> list[str | int]:
    """The ids of the requests in a JSON array (a JSON-RPC batch), at most ``BATCH_IDS`` of them."""
    if not line.lstrip().startswith("["):
        return []
    try:
        items = json.loads(line)  # nesting and size are already bounded (check_message, the line limit)
    except (ValueError, RecursionError):
        return []
    ids = [item.get("id") for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    return [i for i in ids if isinstance(i, (str, int)) and not isinstance(i, bool)][:BATCH_IDS]


def _claim_stdin() -> tuple[int, int | None]:
    """A private copy of fd 0 to read the protocol from, fd 0 pointed at the null device; (fd, the copy to
    restore fd 0 from, or None when stdin is not fd 0)."""
    import fcntl

    try:
        if sys.stdin is None or sys.stdin.fileno() != 0:
            raise OSError
    except (OSError, ValueError, AttributeError):
        return 0, None
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return private, private


async def serve_stdio(server, limit: int) -> None:
    """Run the SDK ``server`` (an MCPServer) over stdio, its input lines checked (see the module doc)."""
    from mcp.server.stdio import stdio_server

    fd, restore = _claim_stdin()
    source = LineSource(fd, limit)
    try:
        async with stdio_server(stdin=source) as (read_stream, write_stream):
            source.attach(write_stream)
            lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our input
            await lowlevel.run(AnsweringStream(read_stream, source), write_stream,
                               lowlevel.create_initialization_options())
    finally:
        if restore is not None:
            os.dup2(restore, 0)
