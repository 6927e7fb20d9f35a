"""The team server: every request authenticated, sessions bound to tokens, bodies bounded; refusals change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from test_mcp_helpers import BOUND, text_of  # noqa: E402
from test_team_helpers import client_for, post, run, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(180)

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "1"}}}).encode()


def state(b):
    """Coordination rows and memory files: what a refused request must leave exactly as it was."""
    b = brainlib.open_brain(b.repo)
    coord = b.coord
    files = {str(p.relative_to(b.dir)): p.read_bytes() for p in sorted(b.dir.rglob("*"))
             if p.is_file() and "runtime" not in p.relative_to(b.dir).parts}
    return ([s.to_dict() | {"last_seen": None, "liveness": None} for s in coord.sessions(include_gone=True)],
            [c.to_dict() for c in coord.claims(include_ended=True)],
            [e.to_dict() for e in coord.history(limit=10000)], files)


@pytest.fixture
def team(brain, repo):
    (brain.dir / "brain.yml").write_text("version: 1\nterritories:\n  notes/backend/**: backend\n"
                                         "server:\n  max_request_bytes: 65536\n")
    b = brainlib.open_brain(repo)
    b.coord.start_session("seed")  # the coordination store exists before the snapshots
    alice, _ = b.tokens.create("alice", role="backend", machine="m1")
    bob, _ = b.tokens.create("bob", role="frontend", machine="m2")
    with team_server(repo) as url:
        yield b, url, alice, bob


def test_tokens_are_stored_hashed_and_shown_once(brain, repo):
    token, record = brain.tokens.create("carol", role="review")
    raw = (brain.runtime / "tokens.json").read_text()
    assert token not in raw and record.hash in raw and token.startswith("brn_")
    assert oct((brain.runtime / "tokens.json").stat().st_mode & 0o777) == "0o600"
    out = subprocess.run([sys.executable, "-m", "brain", "token", "list", "--json"], cwd=repo, capture_output=True,
                         text=True, timeout=BOUND, env=os.environ)
    assert out.returncode == 0 and token not in out.stdout and record.hash not in out.stdout
    assert json.loads(out.stdout)[0]["name"] == "carol"
    created = subprocess.run([sys.executable, "-m", "brain", "token", "create", "dave", "--json"], cwd=repo,
                             capture_output=True, text=True, timeout=BOUND, env=os.environ)
    shown = json.loads(created.stdout)["token"]
    assert brainlib.open_brain(repo).tokens.verify(shown).name == "dave"
    again = subprocess.run([sys.executable, "-m", "brain", "token", "create", "dave"], cwd=repo,
                           capture_output=True, text=True, timeout=BOUND, env=os.environ)
    assert again.returncode == 2  # an active token of that name exists: nothing changed
    assert brainlib.open_brain(repo).tokens.verify(shown).name == "dave"


def test_unauthenticated_requests_are_refused_and_change_nothing(team):
    b, url, alice, bob = team
    before = state(b)
    for token, reason in ((None, "no bearer token"), ("brn_" + "x" * 43, "unknown or revoked token"),
                          ("Basic dXNlcjpwYXNz", None)):
        headers = {"Authorization": token} if token and not token.startswith("brn_") else None
        status, body = post(url, token if token and token.startswith("brn_") else None, INIT, headers)
        assert status == 401
        if reason:
            assert json.loads(body)["message"].endswith(reason)
    assert state(b) == before


def test_revoked_token_is_refused_at_its_next_request(team):
    b, url, alice, bob = team

    async def call():
        async with client_for(url, bob) as c:
            return await c.call_tool("brain_sessions", {})

    assert not run(call).is_error
    out = subprocess.run([sys.executable, "-m", "brain", "token", "revoke", "bob"], cwd=b.repo, capture_output=True,
                         text=True, timeout=BOUND, env=os.environ)
    assert out.returncode == 0
    before = state(b)
    status, _ = post(url, bob, INIT)
    assert status == 401
    assert state(b) == before


def test_a_token_cannot_act_as_another_tokens_session(team):
    b, url, alice, bob = team

    async def body():
        async with client_for(url, alice, "a") as a, client_for(url, bob, "b") as bb:
            mine = (await a.call_tool("brain_claim", {"item": "src/api/**"})).structured_content
            before = state(b)
            refused = [await bb.call_tool(tool, args | {"session": mine["session"]}) for tool, args in (
                ("brain_claim", {"item": "src/api/x.py"}), ("brain_release", {"all_claims": True}),
                ("brain_signals", {}), ("brain_checkpoint", {"step": "hijack"}), ("inbox", {}))]
            seed = next(x.id for x in b.coord.sessions() if x.role == "seed")
            ticket = b.coord.arm(mine["session"], seed, "private?", timeout=60).ticket  # alice's own ask
            before = state(b)
            refused.append(await bb.call_tool("ask_agent", {"ticket": ticket, "wait_seconds": 0.01}))
            after = state(b)
            own = (await bb.call_tool("brain_claim", {"item": "src/api/users.py"})).structured_content
            return mine, refused, before, after, own

    mine, refused, before, after, own = run(body)
    assert mine["session"].endswith("-backend@m1")
    for result in refused:
        assert result.is_error and result.structured_content["error"] == "forbidden"
        assert result.structured_content["principal"] == "bob"
    assert before == after
    assert own["session"].endswith("-frontend@m2") and [o["session"] for o in own["overlaps"]] == [mine["session"]]


def test_oversized_requests_are_refused_with_413(team):
    b, url, alice, bob = team
    before = state(b)
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "y" * 70000}}).encode()
    status, body = post(url, alice, big)
    assert status == 413 and json.loads(body)["error"] == "too_large"
    assert "server.max_request_bytes" in json.loads(body)["message"]  # the setting that governs the limit

    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=BOUND)
    conn.request("POST", parts.path, body=iter([big[:40000], big[40000:]]), encode_chunked=True,
                 headers={"Authorization": f"Bearer {alice}", "Content-Type": "application/json",
                          "Accept": "application/json, text/event-stream"})
    assert conn.getresponse().status == 413  # chunked, no Content-Length: counted as it arrives
    conn.close()
    assert post(url, None, big)[0] == 401  # anonymous: refused before the body is even read
    assert state(b) == before


def test_memory_tools_over_http_apply_role_escapes_and_redaction(team):
    b, url, alice, bob = team
    secret = "ghp_" + "Q7w" * 12

    async def body():
        async with client_for(url, alice, "a") as a, client_for(url, bob, "b") as bb:
            before = state(b)
            outside = await bb.call_tool("brain_write", {"path": "notes/backend/api.md", "text": "x"})
            escape = await bb.call_tool("brain_write", {"path": "../escape.md", "text": "x"})
            unchanged = state(b) == before
            owner = await a.call_tool("brain_write", {"path": "notes/backend/api.md", "text": f"token {secret}\n"})
            return outside, escape, unchanged, owner

    outside, escape, unchanged, owner = run(body)
    assert outside.is_error and outside.structured_content["error"] == "territory"
    assert outside.structured_content["owner"] == "backend" and outside.structured_content["role"] == "frontend"
    assert any(s.endswith("-backend@m1") for s in outside.structured_content["owner_sessions"])
    assert escape.is_error and escape.structured_content["error"] == "path_escape"
    assert unchanged and not (b.repo / "escape.md").exists()
    assert not owner.is_error and owner.structured_content["redacted"] == [{"kind": "github_token", "count": 1}]
    assert secret not in (b.dir / "notes/backend/api.md").read_text() and secret not in text_of(owner)


def test_no_tokens_means_loopback_only(brain, repo):
    out = subprocess.run([sys.executable, "-m", "brain", "serve", "--http", "--host", "0.0.0.0", "--port", "0"],
                         cwd=repo, capture_output=True, text=True, timeout=BOUND, env=os.environ)
    assert out.returncode == 2 and "token" in out.stderr


def test_web_ui_middleware_login_cookie_and_401():
    """The same middleware in front of any ASGI app (the web UI): header or cookie, login form for browsers."""
    import asyncio
    import tempfile
    from pathlib import Path

    from brain.team.identity import PRINCIPAL
    from brain.team.middleware import TeamAuthMiddleware
    from brain.team.tokens import TokenStore

    store = TokenStore(Path(tempfile.mkdtemp()) / "tokens.json")
    token, _ = store.create("eve", role="human")
    seen = []

    async def app(scope, receive, send):
        seen.append((scope["brain.principal"].name, PRINCIPAL.get().name))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    mw = TeamAuthMiddleware(app, store, max_body=100, cookie=True)

    async def request(method, path, headers=(), body=b""):
        sent = []
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        await mw({"type": "http", "method": method, "path": path, "headers": list(headers)}, receive, send)
        start = sent[0]
        return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])

    async def main():
        status, _, page = await request("GET", "/")
        assert status == 401 and b"<form" in page and seen == []
        status, _, _ = await request("POST", "/login", [(b"content-type", b"application/x-www-form-urlencoded")],
                                     b"token=brn_wrong")
        assert status == 401
        status, headers, _ = await request("POST", "/login", [], f"token={token}".encode())
        assert status == 303 and b"HttpOnly" in headers[b"set-cookie"] and b"SameSite=Strict" in headers[b"set-cookie"]
        cookie = headers[b"set-cookie"].split(b";")[0]
        assert (await request("GET", "/", [(b"cookie", cookie)]))[0] == 200
        assert (await request("GET", "/", [(b"authorization", f"Bearer {token}".encode())]))[0] == 200
        assert (await request("POST", "/x", [(b"cookie", cookie)], b"z" * 101))[0] == 413
        store.revoke("eve")
        assert (await request("GET", "/", [(b"cookie", cookie)]))[0] == 401
        assert seen == [("eve", "eve"), ("eve", "eve")]

    asyncio.run(main())


def test_web_ui_app_behind_the_same_tokens(brain):
    """`create_app(middleware=web_middleware(brain))` as `brain ui` builds it: open until a token exists, then 401."""
    pytest.importorskip("markdown_it")
    from starlette.testclient import TestClient

    from brain.team.middleware import web_middleware
    from brain.web import create_app

    app = create_app(brain, middleware=web_middleware(brain), warm=False)
    with TestClient(app, base_url="http://127.0.0.1:8766") as ui:
        assert ui.get("/").status_code == 200  # no token was ever created: local use as before
        token, _ = brain.tokens.create("ui-person", role="human")  # protects the running server at once
        page = ui.get("/")
        assert page.status_code == 401 and "<form" in page.text
        assert ui.get("/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        signed = ui.post("/login", data={"token": token}, follow_redirects=False)
        assert signed.status_code == 303 and "HttpOnly" in signed.headers["set-cookie"]
        assert ui.get("/").status_code == 200  # the cookie from /login
        brain.tokens.revoke("ui-person")
        assert ui.get("/").status_code == 401
