"""Deleting tokens and going back from team mode to local mode, deliberately and without exposing a server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from brain.errors import InvalidInput, NotFound

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True, timeout=60)


def test_token_delete_forgets_the_record_and_the_token_stops_working(brain):
    alice, _ = brain.tokens.create("alice", role="backend")
    brain.tokens.create("bob")
    brain.tokens.revoke("bob")
    out = cli(brain.repo, "token", "delete", "alice", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"deleted": "alice", "records": 1, "tokens_left": 1}
    assert brain.tokens.verify(alice) is None
    assert cli(brain.repo, "token", "delete", "bob").returncode == 0  # a revoked one goes too
    assert [r["name"] for r in json.loads(cli(brain.repo, "token", "list", "--json").stdout)] == []
    assert brain.tokens.exists()  # no token left, still team mode: every request needs one
    assert cli(brain.repo, "token", "delete", "carol").returncode == NotFound.exit_code


def serve_asgi(brain, host: str, body: dict, token: str | None = None) -> int:
    pytest.importorskip("mcp")
    from starlette.testclient import TestClient

    from brain.team.server import team_app

    headers = {"Accept": "application/json, text/event-stream", "Host": "127.0.0.1:8765"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    with TestClient(team_app(brain, host=host), base_url="http://127.0.0.1:8765") as client:
        return client.post("/mcp", json=body, headers=headers).status_code


def test_team_leave_is_deliberate_and_returns_to_local_mode(brain):
    token, _ = brain.tokens.create("alice", role="backend")
    assert serve_asgi(brain, "127.0.0.1", INIT) == 401
    out = cli(brain.repo, "team", "leave")
    assert out.returncode == InvalidInput.exit_code and brain.tokens.verify(token) is not None
    out = cli(brain.repo, "team", "leave", "--yes", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"left": True, "tokens_deleted": ["alice"]}
    assert not brain.tokens.exists() and brain.tokens.verify(token) is None
    assert serve_asgi(brain, "127.0.0.1", INIT) == 200  # local mode: this machine, no token
    assert json.loads(cli(brain.repo, "team", "leave", "--yes", "--json").stdout)["left"] is False


def test_a_server_bound_beyond_loopback_never_opens_when_the_tokens_go(brain):
    brain.tokens.create("alice")
    brain.tokens.leave()
    assert serve_asgi(brain, "0.0.0.0", INIT) == 401


def test_the_ui_says_how_to_leave_team_mode_once_no_token_is_left(brain):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from brain.team.middleware import web_middleware
    from brain.web import create_app

    alice, _ = brain.tokens.create("alice", role="human")
    app = create_app(brain, middleware=web_middleware(brain), warm=False)
    with TestClient(app, base_url="http://127.0.0.1:8766") as c:
        form = c.get("/work")
        assert form.status_code == 401 and 'name=token' in form.text
        brain.tokens.delete("alice")
        page = c.get("/work")
        assert page.status_code == 401  # still team mode: nothing opens
        assert "brain team leave --yes" in page.text and "brain token create" in page.text
        assert "brain team leave --yes" in c.get("/login").text
        assert c.get("/work", headers={"Authorization": f"Bearer {alice}"}).status_code == 401
