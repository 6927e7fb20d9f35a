"""Connection-level guards of the HTTP servers: a request must arrive in time, and one address holds few sockets.

uvicorn times out only an idle keep-alive connection, and only after a response: a client
that opens a connection and sends ``POST /mcp HTTP/1.1`` and a Host line, and nothing more,
keeps its socket (and a file descriptor) for good, and about a thousand such connections
exhaust a server under ``ulimit -n 1024``. ``guarded_protocol`` makes uvicorn's h11
protocol class enforce three bounds on every connection:

- **header deadline**: a request's line and headers must be complete within
  ``server.header_timeout`` seconds of the connection opening (or of the previous response);
- **body deadline**: its body must be complete within ``server.body_timeout`` seconds of its
  headers (a total, so a body trickled one byte at a time is cut off too);
- **per address**: at most ``server.connections_per_client`` open connections from one client
  address (an IPv6 /64 counts as one: ``client_key``; never more than half of all), and never more in all than the process's
  file-descriptor limit leaves room for, after one round of accepts (``BACKLOG``: asyncio
  accepts that many before refused ones are closed) and brain's own files (``FD_RESERVE``).

A response the client stops reading (the server's write buffer stays full for
``server.body_timeout`` seconds) is abandoned and its connection aborted: a reader that never
reads cannot keep the answering task, its buffer and its socket for good.

A request too slow gets ``408 Request Timeout`` and the connection is closed; a connection
above the bounds gets ``503`` and is closed at once, before anything is parsed. Time spent
answering (a long ``ask_agent`` wait) is never cut: once the request is complete, no deadline
runs until its response is sent.
"""

from __future__ import annotations

import ipaddress
import logging
import resource
from dataclasses import dataclass, field

__all__ = ["ConnectionLimits", "client_key", "guarded_protocol", "limits_from_settings", "parser_name", "FD_RESERVE",
           "BACKLOG", "MAX_HEAD"]

log = logging.getLogger("brain.team")

BACKLOG = 128  # connections accepted per round of the event loop (asyncio accepts up to this many at once)
FD_RESERVE = 64  # descriptors kept for the database, the settings files, logs and git, whatever the clients do

_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: 33\r\n\r\nrequest not received in time: 408")
_FULL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
         b"content-length: 36\r\n\r\ntoo many open connections: try later")


@dataclass
class ConnectionLimits:
    """The bounds, and the live count of open connections per client address (one server process)."""

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    per_client: int = 128
    total: int = 0  # 0: from the descriptor limit
    backlog: int = BACKLOG
    open: dict[str, int] = field(default_factory=dict)
    _warned: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.total:  # room for what is held, one accept round (backlog) and brain's own files
            soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            soft = soft if soft != resource.RLIM_INFINITY else 65536
            self.total = max(8, soft - FD_RESERVE - self.backlog)
        self.per_client = max(1, min(self.per_client, self.total // 2))  # one address never holds them all

    def admit(self, address: str) -> bool:
        if self.open.get(address, 0) >= self.per_client or sum(self.open.values()) >= self.total:
            return False
        self.open[address] = self.open.get(address, 0) + 1
        return True

    def should_warn(self, address: str, now: float) -> bool:
        """One warning per address a minute: a flood of refused connections must not flood the log too."""
        if now - self._warned.get(address, float("-inf")) < 60:
            return False
        if len(self._warned) > 4096:
            self._warned.clear()
        self._warned[address] = now
        return True

    def release(self, address: str) -> None:
        left = self.open.get(address, 0) - 1
        if left > 0:
            self.open[address] = left
        else:
            self.open.pop(address, None)


def client_key(address: str) -> str:
    """What counts as one client address: an IPv4 address, or an IPv6 /64 (one host's usual share; it
    can pick any address in it), an IPv4-mapped IPv6 address as its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def limits_from_settings(settings) -> ConnectionLimits:
    """The bounds of ``server.header_timeout``, ``server.body_timeout`` and ``server.connections_per_client``
    (``SettingsError`` at start-up when one is out of its range: 0 would turn a guard off)."""
    return ConnectionLimits(header_timeout=float(settings.bounded("server.header_timeout", 1, 300)),
                            body_timeout=float(settings.bounded("server.body_timeout", 1, 600)),
                            per_client=settings.bounded("server.connections_per_client", 1, 1024))


MAX_HEAD = 16 * 1024  # bytes of a request's line and headers (h11's own bound on an unfinished head)


def parser_name() -> str:
    """The HTTP parser the servers use: httptools (llhttp, in C) when the ``speed`` extra installed it, else h11.

    ``BRAIN_HTTP_PARSER=h11`` keeps h11 (the tests run every guard on both). Why: under 64 clients h11 and
    uvicorn's h11 protocol are about a fifth of the team server's CPU (README, team server)."""
    import os

    if os.environ.get("BRAIN_HTTP_PARSER", "").strip().lower() == "h11":
        return "h11"
    try:
        import httptools  # noqa: F401
    except Exception:  # noqa: BLE001 - not installed, or broken on this platform: h11 always is
        return "h11"
    return "httptools"


def guarded_protocol(limits: ConnectionLimits, parser: str | None = None):
    """uvicorn's protocol class for ``parser`` (default ``parser_name()``) with ``limits`` enforced (pass it
    as ``uvicorn.Config(http=...)``)."""
    if (parser or parser_name()) == "httptools":
        return _guarded_httptools(limits)
    return _guarded_h11(limits)


class _Guards:
    """What both guarded protocols share: the per-address admission, the request deadline once the protocol
    says which phase it is in (``_phase_now``), and the abandoned response."""

    _address: str | None = None
    _deadline = None  # the asyncio TimerHandle of the request being received
    _phase: object = None
    _partial = False  # bytes of the awaited request arrived (else an idle keep-alive: closed silently)
    _stall = None  # the TimerHandle of a write the client stopped reading
    limits: ConnectionLimits

    # the uvicorn protocol's own callbacks, wrapped alike for both parsers (this mixin comes first in the MRO)
    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self._admit(transport):
            self._watch()

    def connection_lost(self, exc) -> None:
        self._release()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._watch_writes()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unstall()

    def _admit(self, transport) -> bool:
        limits = self.limits
        address = client_key(self.client[0]) if self.client else "unknown"
        if not limits.admit(address):
            if limits.should_warn(address, self.loop.time()):
                log.warning("refusing connections from %s: %d open from it, %d in all (at most %d per address: "
                            "server.connections_per_client, and %d in all for `ulimit -n`)", address,
                            limits.open.get(address, 0), sum(limits.open.values()), limits.per_client,
                            limits.total)
            transport.write(_FULL)
            transport.close()
            return False
        self._address = address
        return True

    def _release(self) -> None:
        self._cancel()
        self._unstall()
        if self._address is not None:
            self.limits.release(self._address)
            self._address = None

    # -- a response nobody reads ----------------------------------------------
    def _watch_writes(self) -> None:
        if self._stall is None:
            self._stall = self.loop.call_later(self.limits.body_timeout, self._stalled)

    def _unstall(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
        self._stall = None

    def _stalled(self) -> None:
        self._stall = None
        log.info("closing a connection from %s: response not read for %.0f s", self._address,
                 self.limits.body_timeout)
        self.transport.abort()  # close() would wait for the buffer to drain: it never will

    # -- the request deadline -------------------------------------------------
    def _phase_now(self) -> str | None:
        """"headers" (waiting for a request's line and headers), "body" (for its body) or None (answering)."""
        raise NotImplementedError

    def _watch(self) -> None:
        """Arm, move or stop the deadline after the parser moved: waiting for headers, for a body, or neither."""
        if self.transport is None or self.transport.is_closing():
            return self._cancel()
        phase = self._phase_now()
        if phase is None:  # the request is in (being answered), or the connection is ending
            return self._cancel()
        if phase != self._phase:
            self._cancel()
            self._phase = phase
            self._partial = False
            seconds = self.limits.header_timeout if phase == "headers" else self.limits.body_timeout
            self._deadline = self.loop.call_later(seconds, self._expired)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = None

    def _expired(self) -> None:
        phase, self._deadline, self._phase = self._phase, None, None
        if self.transport.is_closing():
            return
        log.info("closing a connection from %s: request %s not received in time", self._address, phase)
        cycle = self.cycle
        if phase == "body" and cycle is not None and not cycle.response_started:
            cycle.disconnected = True  # the app reading the body sees a disconnect; its answer goes nowhere
            cycle.message_event.set()
            self.transport.write(_TIMEOUT)
        elif phase == "headers" and self._partial:
            self.transport.write(_TIMEOUT)
        self.transport.close()


def _guarded_h11(limits: ConnectionLimits):
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(_Guards, H11Protocol):
        def data_received(self, data: bytes) -> None:
            self._partial = True
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def _phase_now(self) -> str | None:
            state = self.conn.their_state
            if state is h11.IDLE and self.conn.our_state is h11.IDLE:
                return "headers"
            if state is h11.SEND_BODY:
                return "body"
            return None

    GuardedH11Protocol.limits = limits
    return GuardedH11Protocol


def _guarded_httptools(limits: ConnectionLimits):
    """uvicorn's httptools protocol with the same guards as h11's, and h11's bound on a request's head.

    llhttp streams a request's head through callbacks and keeps no limit of its own, so the bytes of an
    unfinished head are counted here as they arrive (``MAX_HEAD``, as h11's ``max_incomplete_event_size``),
    and a complete head is measured by its line and headers: above the bound, 400 and the connection closed,
    as h11 answers. The phases come from the parser's callbacks: a head begun or awaited (``headers``),
    its body (``body``, from the end of the head to the end of the message), then none until the response
    is sent; a request pipelined behind one being answered has no deadline until that response is sent,
    as with h11 (which reads no further meanwhile)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpToolsProtocol(_Guards, HttpToolsProtocol):
        _stage = "head"  # the latest message the parser is in: "head", "body" or "done" (its end parsed)
        _head_bytes = 0  # bytes received since the last message ended, while its successor's head is unfinished
        _head_size = 0  # the line and headers of the message being parsed

        def data_received(self, data: bytes) -> None:
            self._partial = True
            if self._stage == "head":
                self._head_bytes += len(data)
            try:
                super().data_received(data)
            except _HeadTooLarge:
                return self._refuse()
            if self.transport.is_closing():
                return self._cancel()
            if self._stage == "head" and self._head_bytes > MAX_HEAD:
                return self._refuse()
            self._watch()

        def _refuse(self) -> None:
            """A head refused: 400 and closed, as h11 answers (nothing of it is kept)."""
            log.info("closing a connection from %s: request head refused (above %d bytes, or not one Host)",
                     self._address, MAX_HEAD)
            self.send_400_response("Invalid HTTP request received.")
            self._cancel()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._stage, self._head_size = "head", 0

        def on_url(self, url: bytes) -> None:
            self._head_size += len(url)
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._head_size += len(name) + len(value) + 4
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if self._head_size > MAX_HEAD:
                raise _HeadTooLarge()
            if self.parser.get_http_version() == "1.1" and sum(name == b"host" for name, _ in self.headers) != 1:
                raise _HeadTooLarge()  # h11 refuses an HTTP/1.1 request without one Host header alike (400)
            self._stage = "body"
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._stage, self._head_bytes = "done", 0
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._stage == "done" and not self.pipeline:
                self._stage = "head"  # waiting for the next request
            self._watch()

        def _phase_now(self) -> str | None:
            answering = self.cycle is not None and not self.cycle.response_complete
            if self._stage == "body":
                return "body"
            if self._stage == "head" and not answering:
                return "headers"
            return None

    GuardedHttpToolsProtocol.limits = limits
    return GuardedHttpToolsProtocol


class _HeadTooLarge(Exception):
    """A head refused (above ``MAX_HEAD``, or HTTP/1.1 without exactly one Host header, as h11 refuses it):
    raised from a parser callback, httptools stops parsing and raises it out of ``feed_data``."""
