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

__all__ = ["ConnectionLimits", "client_key", "guarded_protocol", "limits_from_settings", "FD_RESERVE", "BACKLOG"]

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


def guarded_protocol(limits: ConnectionLimits):
    """uvicorn's h11 protocol class with ``limits`` enforced (pass it as ``uvicorn.Config(http=...)``)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _address: str | None = None
        _deadline = None  # the asyncio TimerHandle of the request being received
        _phase: object = None
        _partial = False  # bytes of the awaited request arrived (else an idle keep-alive: closed silently)

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = client_key(self.client[0]) if self.client else "unknown"
            if not limits.admit(address):
                if limits.should_warn(address, self.loop.time()):
                    log.warning("refusing connections from %s: %d open from it, %d in all (at most %d per address: "
                                "server.connections_per_client, and %d in all for `ulimit -n`)", address,
                                limits.open.get(address, 0), sum(limits.open.values()), limits.per_client,
                                limits.total)
                transport.write(_FULL)
                transport.close()
                return
            self._address = address
            self._watch()

        def connection_lost(self, exc) -> None:
            self._cancel()
            self._unstall()
            if self._address is not None:
                limits.release(self._address)
                self._address = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._partial = True
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        # -- a response nobody reads ----------------------------------------------
        _stall = None  # the TimerHandle of a write the client stopped reading

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._stall is None:
                self._stall = self.loop.call_later(limits.body_timeout, self._stalled)

        def resume_writing(self) -> None:
            super().resume_writing()
            self._unstall()

        def _unstall(self) -> None:
            if self._stall is not None:
                self._stall.cancel()
            self._stall = None

        def _stalled(self) -> None:
            self._stall = None
            log.info("closing a connection from %s: response not read for %.0f s", self._address,
                     limits.body_timeout)
            self.transport.abort()  # close() would wait for the buffer to drain: it never will

        # -- the request deadline -------------------------------------------------
        def _watch(self) -> None:
            """Arm, move or stop the deadline after h11 moved: waiting for headers, for a body, or neither."""
            if self.transport is None or self.transport.is_closing():
                return self._cancel()
            state = self.conn.their_state
            if state is h11.IDLE and self.conn.our_state is h11.IDLE:
                phase, seconds = "headers", limits.header_timeout
            elif state is h11.SEND_BODY:
                phase, seconds = "body", limits.body_timeout
            else:  # the request is in (being answered), or the connection is ending
                return self._cancel()
            if phase != self._phase:
                self._cancel()
                self._phase = phase
                self._partial = False
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

    return GuardedH11Protocol
