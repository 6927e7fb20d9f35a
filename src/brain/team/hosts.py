"""Which ``Host`` headers a brain server answers, for every bind address (DNS-rebinding protection).

A page on a hostile site can make a browser resolve its own name to 127.0.0.1 (or
127.0.0.2, or a LAN address) and then send requests there with ``Host: evil.example``;
answering only requests that name this server closes that door. Both HTTP servers
(``brain serve --http`` and ``brain ui``) wrap their app in ``HostCheck``, whatever
address they bind, loopback ones included.

Allowed, for a server bound to address A on port P:

- ``A:P`` (``[A]:P`` for IPv6), and plain ``A`` when P is 80;
- when A is a loopback address: ``localhost:P``, ``127.0.0.1:P`` and ``[::1]:P`` too;
- every name of the ``server.allowed_hosts`` setting and of ``brain ui --allow-host``
  (``name`` accepts any port, ``name:port`` that port only): the name a reverse proxy
  or a browser uses (docs/team.md).

A wildcard bind (0.0.0.0, ::) allows the loopback forms and the extra names only.
Refusals are answered ``421 Misdirected Request`` before the app sees the request; a
request whose ``Origin`` names another site is refused ``403`` when ``check_origin`` is on
(pages of this machine, on any port, may call a loopback server, as the MCP SDK allows).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["HostAllowList", "allowed_hosts", "HostCheck", "is_loopback", "is_wildcard", "split_host"]

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    if host.strip().lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip() in ("", "0.0.0.0", "::", "[::]")


def _canonical_name(name: str) -> str:
    """Lower case; an IPv6 address in brackets (the form a Host header carries)."""
    name = name.strip().lower()
    bare = name.strip("[]")
    try:
        if ipaddress.ip_address(bare).version == 6:
            return f"[{ipaddress.ip_address(bare).compressed}]"
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return name


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host header value (port None when absent); None when malformed."""
    value = value.strip()
    if not value or len(value) > 300 or any(c in value for c in " /\\@?#\t\r\n"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address is not a valid Host
    else:
        name, port_text = value, None
    port = None
    if port_text is not None:
        if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5 or int(port_text) > 65535:
            return None
        port = int(port_text)
    return _canonical_name(name), port


@dataclass(frozen=True)
class HostAllowList:
    """The (name, port) pairs a server answers, plus names allowed on any port."""

    pairs: frozenset[tuple[str, int | None]]
    any_port: frozenset[str]
    local_origins: bool = False  # a loopback bind: pages of this machine (any port) may call it


    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        parsed = split_host(header)
        if parsed is None:
            return False
        name, port = parsed
        return name in self.any_port or (name, port) in self.pairs

    def allows_origin(self, netloc: str) -> bool:
        """An ``Origin``'s host[:port] may call this server: a name it answers, or (loopback bind) a
        page served by this machine on any port, such as the MCP Inspector."""
        if self.allows(netloc):
            return True
        parsed = split_host(netloc)
        return bool(parsed and self.local_origins and parsed[0] in _LOOPBACK_NAMES)

    def names(self) -> list[str]:
        shown = [f"{n}:{p}" if p is not None else n for n, p in self.pairs] + [f"{n}:*" for n in self.any_port]
        return sorted(shown)


def allowed_hosts(bind: str, port: int, extra: list[str] | tuple[str, ...] = ()) -> HostAllowList:
    """The allow-list of a server bound to ``bind``:``port`` (see the module docstring)."""
    pairs: set[tuple[str, int | None]] = set()
    names = [] if is_wildcard(bind) else [_canonical_name(bind)]
    if is_loopback(bind) or is_wildcard(bind):
        names += list(_LOOPBACK_NAMES)
    for name in names:
        pairs.add((name, port))
        if port == 80:
            pairs.add((name, None))
    any_port: set[str] = set()
    for raw in extra:
        parsed = split_host(raw) if isinstance(raw, str) else None
        if parsed is None:
            continue
        name, extra_port = parsed
        if extra_port is None:
            any_port.add(name)
        else:
            pairs.add((name, extra_port))
    return HostAllowList(frozenset(pairs), frozenset(any_port), is_loopback(bind) or is_wildcard(bind))


async def _refuse(send, status: int, error: str, message: str) -> None:
    body = json.dumps({"error": error, "message": message}).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})


class HostCheck:
    """ASGI middleware: answer only requests whose Host (and, if sent, Origin) names this server."""

    def __init__(self, app, allow: HostAllowList, *, check_origin: bool = False) -> None:
        import functools

        self.app = app
        self.allow = allow
        self.check_origin = check_origin
        # a client sends the same Host on every request: its answer (a pure function of the text, through
        # ipaddress parsing, ~40 us) is remembered, for a bounded number of distinct values
        self._allows = functools.lru_cache(maxsize=256)(allow.allows)

    async def __call__(self, scope, receive, send):
        if scope.get("type") not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        if not self._allows(host):
            if scope.get("type") == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            return await _refuse(send, 421, "unknown_host",
                                 f"this server does not answer for Host {host[:100]!r} (DNS-rebinding protection); "
                                 "add the name to server.allowed_hosts if it is yours")
        origin = headers.get(b"origin")
        if self.check_origin and origin and origin != b"null":
            netloc = urlsplit(origin.decode("latin-1")).netloc
            if not self.allow.allows_origin(netloc):
                return await _refuse(send, 403, "cross_origin", "requests from another site's pages are refused")
        return await self.app(scope, receive, send)
