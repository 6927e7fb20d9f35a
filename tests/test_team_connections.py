"""Connections to the team server: a request must arrive in time, one address holds few sockets.

Raw sockets against a real `brain serve --http` process (what an SDK client never sends):
half-sent requests, bodies that stop, one address opening hundreds of connections, and a
server whose descriptor limit (`ulimit -n`) those connections would exhaust.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from test_mcp_helpers import LISTENING, LineReader  # noqa: E402
from test_team_helpers import team_server  # noqa: E402

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True, params=["httptools", "h11"])
def parser(request, monkeypatch):
    """Every guard on both HTTP parsers: httptools (the ``speed`` extra) and h11 (``BRAIN_HTTP_PARSER=h11``)."""
    if request.param == "httptools":
        pytest.importorskip("httptools")
    monkeypatch.setenv("BRAIN_HTTP_PARSER", request.param)
    return request.param

WAIT = 10.0  # seconds a raw socket waits for the server's answer (the deadlines below are 1 s)
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "1"}}}).encode()


def configure(brain, **server) -> str:
    """brain.yml with these server settings; returns a token."""
    lines = "".join(f"  {key}: {value}\n" for key, value in server.items())
    (brain.dir / "brain.yml").write_text(f"version: 1\nserver:\n{lines}")
    token, _ = brainlib.open_brain(brain.repo).tokens.create("alice", role="backend")
    return token


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname, parts.port


def opened(url: str, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(WAIT)
    sock.connect(address(url))
    return sock


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by WAIT per read)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def head(url: str) -> bytes:
    host, port = address(url)
    return f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n".encode()


def initialize(url: str, token: str, source: str = "127.0.0.1") -> bytes:
    sock = opened(url, source)
    try:
        sock.sendall(head(url) + f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                     f"Accept: application/json, text/event-stream\r\nContent-Length: {len(INIT)}\r\n"
                     "Connection: close\r\n\r\n".encode() + INIT)
        return answer(sock)
    finally:
        sock.close()


def test_a_half_sent_request_is_answered_408_and_closed(brain, repo):
    token = configure(brain, header_timeout=1)
    with team_server(repo) as url:
        sock = opened(url)
        sock.sendall(head(url))  # the request line and Host, never the end of the headers
        assert answer(sock).startswith(b"HTTP/1.1 408 ")
        sock.close()
        idle = opened(url)  # a connection that sends nothing is closed too, without an answer
        assert answer(idle) == b""
        idle.close()
        assert initialize(url, token).startswith(b"HTTP/1.1 200 ")  # the server itself is fine


def test_a_body_that_stops_coming_is_answered_408(brain, repo):
    token = configure(brain, body_timeout=1)
    with team_server(repo) as url:
        sock = opened(url)
        sock.sendall(head(url) + f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n".encode()
                     + INIT[:40])
        assert answer(sock).startswith(b"HTTP/1.1 408 ")
        sock.close()


def test_one_address_holds_at_most_its_share_of_connections(brain, repo):
    token = configure(brain, connections_per_client=4)
    with team_server(repo) as url:
        held = [opened(url, "127.0.0.2") for _ in range(4)]
        for sock in held:
            sock.sendall(head(url))
        extra = opened(url, "127.0.0.2")
        assert answer(extra).startswith(b"HTTP/1.1 503 ")  # refused at once, before anything was sent
        extra.close()
        assert initialize(url, token).startswith(b"HTTP/1.1 200 ")  # another address is served meanwhile
        held.pop().close()  # a slot is given back when its connection closes
        again = opened(url, "127.0.0.2")
        again.sendall(head(url) + b"Content-Length: 0\r\n\r\n")
        assert answer(again).startswith(b"HTTP/1.1 401 ")  # admitted: answered (no token) rather than refused
        again.close()
        for sock in held:
            sock.close()


@contextmanager
def limited_server(repo, nofile: int):
    """`brain serve --http` with its descriptor limit lowered to ``nofile`` (what `ulimit -n` does); its stderr
    is drained by a thread once it listens (a full pipe nobody reads would stop the server)."""
    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    proc = subprocess.Popen([sys.executable, "-m", "brain", "serve", "--http", "--port", "0"], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=os.environ, preexec_fn=lower)
    try:
        err = LineReader(proc.stderr)
        while True:
            line = err.readline()
            assert line is not None, "the server exited before listening"
            if line.startswith(LISTENING):
                break
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield line[len(LISTENING):].strip()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=WAIT)


def test_half_sent_requests_cannot_exhaust_the_servers_descriptors(brain, repo):
    """400 half-sent requests from one address against a server under `ulimit -n 256`: a token holder
    on another address is still answered (the flood holds its share, the rest get 503)."""
    token = configure(brain, header_timeout=60)
    with limited_server(repo, 256) as url:
        flood = []
        try:
            for _ in range(400):
                sock = socket.socket()
                sock.bind(("127.0.0.2", 0))
                sock.settimeout(WAIT)
                try:
                    sock.connect(address(url))
                    sock.sendall(head(url))
                except OSError:
                    pass  # reset by a server at its limit: the flood only has to try
                flood.append(sock)
            assert initialize(url, token).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in flood:
                sock.close()


def test_the_servers_use_the_parser_asked_for(parser):
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from brain.team.connections import ConnectionLimits, guarded_protocol, parser_name

    assert parser_name() == parser
    assert issubclass(guarded_protocol(ConnectionLimits()), H11Protocol) == (parser == "h11")


def test_a_complete_head_above_the_bound_is_refused(brain, repo, parser):
    """A head of 40 KB sent whole: refused with 400 on httptools (MAX_HEAD on the line and headers); h11 bounds
    only the head it has not parsed yet, so a whole one in one read may pass it, and is then answered 401."""
    configure(brain, header_timeout=60)
    with team_server(repo) as url:
        sock = opened(url)
        try:
            sock.sendall(head(url) + b"X-Pad: " + b"a" * 40_000 + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            status = answer(sock)[:13]
        except ConnectionResetError:  # closed with our bytes unread: a reset instead of the 400
            status = b"HTTP/1.1 400 "
        sock.close()
    assert status == b"HTTP/1.1 400 " or (parser == "h11" and status == b"HTTP/1.1 401 ")


def test_huge_headers_are_refused_without_buffering_them(brain, repo):
    """Headers that never end, 200 KB of them: refused (at most 16 KB of an unfinished head is kept: h11's
    bound, and brain.team.connections.MAX_HEAD on httptools)."""
    configure(brain, header_timeout=60)
    with team_server(repo) as url:
        sock = opened(url)
        try:
            sock.sendall(head(url) + b"X-Pad: " + b"a" * 200_000)
            refused = answer(sock)
        except ConnectionResetError:  # closed with our bytes unread: a reset instead of the 400
            refused = b"HTTP/1.1 400 "
        assert refused.startswith(b"HTTP/1.1 400 ")
        sock.close()


def test_a_get_stream_is_refused_rather_than_held_open(brain, repo):
    """The team server sends no message of its own: a GET (the SDK's SSE stream) gets 405 at once, so a token
    cannot hold connections open for nothing."""
    token = configure(brain, header_timeout=10)
    with team_server(repo) as url:
        sock = opened(url)
        sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: {':'.join(map(str, address(url)))}\r\n"
                     f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n".encode())
        assert answer(sock).startswith(b"HTTP/1.1 405 ")
        sock.close()


@pytest.mark.parametrize("setting", ["header_timeout: 0", "body_timeout: 100000", "connections_per_client: 0"])
def test_a_guard_cannot_be_turned_off_by_a_setting(brain, repo, setting):
    from brain.errors import SettingsError

    (brain.dir / "brain.yml").write_text(f"version: 1\nserver:\n  {setting}\n")
    for command in (["serve", "--http", "--port", "0"], ["ui", "--port", "0"]):
        out = subprocess.run([sys.executable, "-m", "brain", *command], cwd=repo, capture_output=True, text=True,
                             timeout=WAIT * 3, env=os.environ, stdin=subprocess.DEVNULL)
        assert out.returncode == SettingsError.exit_code, (command, out.stderr)
        assert LISTENING not in out.stderr


def test_a_response_nobody_reads_is_abandoned(brain, repo):
    """A token holder asks for a large answer and never reads it: once the server's write buffer has stayed full
    for server.body_timeout, the connection is aborted and its slot given back (here the address's only one)."""
    token = configure(brain, body_timeout=1, connections_per_client=1)
    (brain.dir / "notes" / "big.md").write_text("# big\n" + "x" * 8_000_000)
    call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "brain_read", "arguments": {"path": "notes/big.md"}}}).encode()
    with team_server(repo) as url:
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, never read below
        reader.bind(("127.0.0.2", 0))
        reader.settimeout(WAIT)
        reader.connect(address(url))
        reader.sendall(head(url) + f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                       f"Accept: application/json, text/event-stream\r\nContent-Length: {len(call)}\r\n\r\n".encode()
                       + call)
        deadline = time.monotonic() + WAIT
        while True:  # the address's one slot is the stalled reader's until the server gives up on it
            probe = opened(url, "127.0.0.2")
            try:
                probe.sendall(head(url) + b"Content-Length: 0\r\n\r\n")
                status = answer(probe)[:12]
            except ConnectionResetError:  # refused (503) with our request unread: a reset
                status = b"HTTP/1.1 503"
            probe.close()
            if status != b"HTTP/1.1 503":
                break
            assert time.monotonic() < deadline, "the stalled response still holds its connection"
            time.sleep(0.1)  # between two probes of the condition, bounded by the deadline
        assert status == b"HTTP/1.1 401"
        received = b""
        try:
            while chunk := reader.recv(1 << 20):
                received += chunk
        except ConnectionResetError:  # aborted: what was still buffered is dropped
            pass
        assert len(received) < 8_000_000
        reader.close()


def test_the_web_ui_has_the_same_request_deadline(brain, repo):
    import re

    configure(brain, header_timeout=1)
    proc = subprocess.Popen([sys.executable, "-m", "brain", "ui", "--port", "0"], cwd=repo, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ)
    try:
        line = LineReader(proc.stderr).readline(timeout=WAIT * 3)  # printed once the socket listens
        url = re.search(r"http://\S+", line or "").group(0)
        sock = opened(url)
        sock.sendall(f"GET / HTTP/1.1\r\nHost: {':'.join(map(str, address(url)))}\r\n".encode())
        assert answer(sock).startswith(b"HTTP/1.1 408 ")
        sock.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=WAIT * 3)


def test_an_ipv6_host_counts_as_one_client_whatever_address_of_its_64_it_picks():
    from brain.team.connections import ConnectionLimits, client_key

    limits = ConnectionLimits(per_client=2, total=100)
    picked = [client_key(f"2001:db8:1:2::{i:x}") for i in range(1, 4)]
    assert [limits.admit(key) for key in picked] == [True, True, False]
    assert limits.admit(client_key("2001:db8:1:3::1"))  # another /64: another client
    assert client_key("::ffff:192.0.2.1") == client_key("192.0.2.1") == "192.0.2.1"


def test_the_event_loop_is_uvloop_when_installed_and_asyncio_otherwise(monkeypatch):
    """The `speed` extra's uvloop is taken when it imports, and its absence (or a broken install) falls back to
    asyncio's own loop: the server starts either way (every test above runs on whichever is installed)."""
    from brain.mcp.transports import event_loop_options

    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: `import uvloop` raises ImportError
    assert event_loop_options() == {}
    fake = type(sys)("uvloop")
    monkeypatch.setitem(sys.modules, "uvloop", fake)
    assert event_loop_options() == {"use_uvloop": True}
