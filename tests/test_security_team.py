"""Team mode: a token acts only as itself (issue 12, class 3).

A real `brain serve --http` with two tokens: token A names B's session, claim, asks,
live-state key in every tool argument that names one — each refused with the same
typed error and nothing changed in the store; the user-level layers are not served;
the kernel is read-only; both HTTP servers check the Host header on every bind
address; `brain ui` refuses a non-loopback bind without tokens.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from brain.mcp.access import (ASK_MADE, ASK_RECEIVED, CLAIM, LAYER_READ, LAYER_WRITE, LIVE_KEY,  # noqa: E402
                              MEMORY_PATH, REFERENCE_NAMES, SESSION, ActsAs, Addresses, ReadsBoard)
from brain.mcp.tools import collect  # noqa: E402
from test_mcp_helpers import BOUND, LineReader, text_of  # noqa: E402
from test_team_helpers import client_for, run, team_server  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def store_rows(b) -> dict:
    """Every row of every table of the coordination store (SQLite), and every memory file."""
    conn = sqlite3.connect(f"file:{b.store_dir / 'brain.db'}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        rows = {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}
    finally:
        conn.close()
    files = {str(p.relative_to(b.dir)): p.read_bytes() for p in sorted(b.dir.rglob("*"))
             if p.is_file() and "runtime" not in p.relative_to(b.dir).parts}
    return {"rows": rows, "files": files}


@pytest.fixture
def team(brain, repo, brain_home):
    b = brainlib.open_brain(repo)
    seed = b.coord.start_session("seed").id
    alice, _ = b.tokens.create("alice", role="backend", machine="m1")
    bob, _ = b.tokens.create("bob", role="frontend", machine="m2")
    with team_server(repo) as url:
        yield b, url, alice, bob, seed


def _session_of(client_result) -> str:
    return client_result.structured_content["you"]


def test_every_tool_declares_what_its_arguments_name():
    """A new tool that names a session cannot forget the check: the registry refuses an undeclared one."""
    registry = collect()
    for name, tool in registry.tools.items():
        for param in tool.parameters():
            meta = getattr(param.annotation, "__metadata__", ())
            described = " ".join(getattr(m, "description", "") or "" for m in meta).lower()
            if param.name in REFERENCE_NAMES or "session id" in described or "claim id" in described \
                    or "ticket" in param.name or "session" in param.name:
                assert param.name in tool.access, f"{name}.{param.name} names something but declares nothing"
        for argument, marker in tool.access.items():
            assert isinstance(marker, (ActsAs, Addresses, ReadsBoard))
    acted = {(n, a) for n, t in registry.tools.items() for a, m in t.access.items() if isinstance(m, ActsAs)}
    assert {("brain_boot", "session"), ("workstate_set", "key"), ("brain_claim", "renew"), ("reply", "ticket"),
            ("ask_agent", "ticket"), ("brain_read", "layer"), ("brain_write", "layer")} <= acted

    from typing import Annotated

    from pydantic import Field

    from brain.mcp.registry import ToolRegistry

    with pytest.raises(TypeError):
        @ToolRegistry().tool()
        def forgetful(brain, session: Annotated[str | None, Field(description="whose")] = None) -> str:
            """A tool that names a session without declaring it."""
            return ""


def test_a_token_naming_anything_of_another_token_is_refused_uniformly(team):
    """A names B's session, claim, asks and live key in every declared argument: one typed refusal, no change."""
    b, url, alice, bob, seed = team
    registry = collect()

    async def body():
        async with client_for(url, alice, "a") as a, client_for(url, bob, "b") as bb:
            sa = _session_of(await a.call_tool("brain_sessions", {}))
            sb = _session_of(await bb.call_tool("brain_sessions", {}))
            b_claim = (await bb.call_tool("brain_claim", {"item": "src/b/**"})).structured_content["claim"]
            await bb.call_tool("brain_checkpoint", {"step": "b's private step", "note": "b's note"})
            await bb.call_tool("workstate_set", {"intent": "b's intent"})
            c = brainlib.open_brain(b.repo).coord
            asked_by_b = c.arm(sb, seed, "b asks seed", timeout=120).ticket
            other = c.start_session("other").id
            asked_of_b = c.arm(other, sb, "other asks b", timeout=120).ticket
            asked_of_a = c.arm(seed, sa, "seed asks a", timeout=120).ticket
            c.signal(seed, sb, "for b only")
            values = {SESSION: sb, CLAIM: b_claim, ASK_MADE: asked_by_b, ASK_RECEIVED: asked_of_b, LIVE_KEY: sb,
                      LAYER_READ: "personal", LAYER_WRITE: "kernel", MEMORY_PATH: "handoffs/local/sess-x+sess-y.md"}
            own = {"brain_claim": {"item": "src/a.py"}, "brain_signal": {"target": seed, "text": "hi"},
                   "reply": {"ticket": asked_of_a, "answer": "mine"}, "brain_read": {"path": "now.md"},
                   "brain_write": {"path": "notes/a.md", "text": "a"}, "brain_delete": {"path": "notes/a.md"},
                   "brain_move": {"path": "now.md", "to": "notes/moved.md"},
                   "brain_edit": {"path": "notes/a.md", "operation": "append", "text": "a"}}
            before = store_rows(b)
            results = {}
            for name, tool in registry.tools.items():
                for argument, marker in tool.access.items():
                    if isinstance(marker, ActsAs):
                        args = own.get(name, {}) | {argument: values[marker.kind]}
                        results[(name, argument)] = await a.call_tool(name, args)
            results[("workstate_set", "key", "role")] = await a.call_tool("workstate_set", {"key": "frontend",
                                                                                          "intent": "as bob's role"})
            after = store_rows(b)
            return results, before, after

    results, before, after = run(body)
    assert len(results) >= 14
    for (name, argument, *_), result in results.items():
        data = result.structured_content
        assert result.is_error, (name, argument, text_of(result))
        assert (data["error"], data["principal"], data["tool"], data["argument"]) == \
            ("forbidden", "alice", name, argument), (name, argument, data)
    assert after == before


def test_a_token_still_acts_as_itself_and_reads_the_boards(team):
    b, url, alice, bob, seed = team

    async def body():
        async with client_for(url, alice, "a") as a, client_for(url, bob, "b") as bb:
            sb = _session_of(await bb.call_tool("brain_sessions", {}))
            await bb.call_tool("workstate_set", {"intent": "b's intent"})
            sa = _session_of(await a.call_tool("brain_sessions", {}))
            return (sa, sb, await a.call_tool("brain_boot", {"session": sa}),
                    await a.call_tool("workstate_read", {"key": sb}),
                    await a.call_tool("workstate_set", {"key": sa, "intent": "mine"}),
                    await a.call_tool("workstate_set", {"key": "release-train", "intent": "shared stream"}),
                    await a.call_tool("brain_signal", {"target": sb, "text": "hello b"}))

    sa, sb, boot, board, mine, stream, signal_ = run(body)
    for result in (boot, board, mine, stream, signal_):
        assert not result.is_error, text_of(result)
    assert [e["key"] for e in board.structured_content["items"]] == [sb]


@pytest.fixture
def layered(brain, repo, brain_home):
    b = brainlib.open_brain(repo)
    b.layers.ensure()
    (brain_home / "personal" / "diary.md").write_text("personal canary zebraquokka\n")
    (brain_home / "instance" / "paths.md").write_text("instance canary okapinarwhal\n")
    (brain_home / "kernel" / "agents" / "reviewer.md").write_text("---\nname: reviewer\n---\nReview kindly.\n")
    (brain_home / "personal" / "mine.md").write_text("---\nname: mine\ntier: always\n---\nprofile canary ibexlemur\n")
    (brain_home / "kernel" / "agents" / "stolen.md").symlink_to(brain_home / "personal" / "mine.md")  # a cloned link
    tokens = {}
    for name, extra in (("alice", ["--role", "backend"]), ("carol", ["--role", "lead", "--layer", "personal"]),
                        ("kim", ["--role", "kernel-scribe"])):
        out = subprocess.run([sys.executable, "-m", "brain", "token", "create", name, "--json", *extra], cwd=repo,
                             capture_output=True, text=True, timeout=BOUND, env=os.environ)
        assert out.returncode == 0, out.stderr
        import json

        tokens[name] = json.loads(out.stdout)["token"]
    with team_server(repo) as url:
        yield b, url, tokens, brain_home


def test_user_layers_are_not_served_and_the_kernel_is_read_only(layered):
    b, url, tokens, home = layered
    kernel_file = home / "kernel" / "agents" / "reviewer.md"
    kernel_before = kernel_file.read_bytes()

    async def body():
        out = {}
        async with client_for(url, tokens["alice"], "a") as a:
            out["read_personal"] = await a.call_tool("brain_read", {"path": "diary.md", "layer": "personal"})
            out["read_instance"] = await a.call_tool("brain_read", {"path": "paths.md", "layer": "instance"})
            out["write_personal"] = await a.call_tool("brain_write", {"path": "x.md", "text": "x",
                                                                      "layer": "personal"})
            out["read_kernel"] = await a.call_tool("brain_read", {"path": "agents/reviewer.md", "layer": "kernel"})
            out["write_kernel"] = await a.call_tool("brain_write", {"path": "agents/reviewer.md", "text": "evil",
                                                                    "layer": "kernel"})
            out["search"] = await a.call_tool("brain_search", {"query": "personal instance canary diary paths"})
            out["boot"] = await a.call_tool("brain_boot", {"task": "personal instance canary diary paths"})
        async with client_for(url, tokens["carol"], "c") as c:
            out["carol_personal"] = await c.call_tool("brain_read", {"path": "diary.md", "layer": "personal"})
            out["carol_instance"] = await c.call_tool("brain_read", {"path": "paths.md", "layer": "instance"})
            out["carol_kernel"] = await c.call_tool("brain_write", {"path": "agents/reviewer.md", "text": "x",
                                                                    "layer": "kernel"})
        async with client_for(url, tokens["kim"], "k") as k:
            out["kim_kernel"] = await k.call_tool("brain_write", {"path": "agents/scribe.md",
                                                                  "text": "---\nname: scribe\n---\nok\n",
                                                                  "layer": "kernel"})
        return out

    out = run(body)
    for key in ("read_personal", "read_instance", "write_personal", "write_kernel", "carol_instance",
                "carol_kernel"):
        assert out[key].is_error and out[key].structured_content["error"] == "forbidden", key
        assert out[key].structured_content["argument"] == "layer"
    assert not out["read_kernel"].is_error and "Review kindly" in text_of(out["read_kernel"])
    for key in ("search", "boot"):
        assert not out[key].is_error
        assert "zebraquokka" not in text_of(out[key]) and "okapinarwhal" not in text_of(out[key])
        assert "ibexlemur" not in text_of(out[key])  # a kernel profile linked into personal/ is not served
    assert not out["carol_personal"].is_error and "zebraquokka" in text_of(out["carol_personal"])
    assert not out["kim_kernel"].is_error and (home / "kernel" / "agents" / "scribe.md").is_file()
    assert kernel_file.read_bytes() == kernel_before and not (home / "personal" / "x.md").exists()


# -- binding and Host checks ------------------------------------------------------------------------------------

@contextmanager
def ui_server(repo, host: str):
    proc = subprocess.Popen([sys.executable, "-m", "brain", "ui", "--host", host, "--port", "0"], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        reader = LineReader(proc.stderr)
        url = None
        while url is None:
            line = reader.readline()
            if line is None:
                raise RuntimeError(f"brain ui exited before listening (code {proc.wait(timeout=BOUND)})")
            found = re.search(r"serving .* at (http://\S+)", line)
            url = found.group(1) if found else None
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=BOUND)


def _get(url: str, host_header: str | None, method: str = "GET") -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=BOUND)
    try:
        conn.putrequest(method, parts.path or "/", skip_host=True)
        if host_header is not None:
            conn.putheader("Host", host_header)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Accept", "application/json, text/event-stream")
        conn.putheader("Content-Length", "2")
        conn.endheaders(b"{}")
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
def test_both_servers_refuse_a_hostile_host_header_on_every_loopback_bind(brain, repo, bind):
    port_of = lambda url: urlsplit(url).port  # noqa: E731
    with team_server(repo, None, "--host", bind) as mcp_url, ui_server(repo, bind) as ui_url:
        for url, method in ((mcp_url, "POST"), (ui_url, "GET")):
            port = port_of(url)
            for hostile in (f"evil.example:{port}", "evil.example", f"{bind}.evil.example:{port}",
                            f"localhost.:{port}", f"{bind}:{port + 1 if port < 65535 else 1}", "", None):
                # 421 from brain; a request without any Host is refused 400 by the HTTP parser already
                assert _get(url, hostile, method) == (421 if hostile is not None else 400), (url, hostile)
            assert _get(url, f"{bind}:{port}", method) != 421
            assert _get(url, f"localhost:{port}", method) != 421


def test_allowed_hosts_setting_adds_a_name(brain, repo):
    (brain.dir / "brain.yml").write_text("version: 1\nserver:\n  allowed_hosts: [brain.example.com]\n")
    with team_server(repo, None, "--host", "127.0.0.2") as url:
        assert _get(url, "brain.example.com", "POST") != 421
        assert _get(url, "other.example.com", "POST") == 421


@pytest.mark.parametrize("command", [["ui"], ["serve", "--http"]])
def test_a_non_loopback_bind_without_tokens_is_refused(brain, repo, command):
    out = subprocess.run([sys.executable, "-m", "brain", *command, "--host", "0.0.0.0", "--port", "0"], cwd=repo,
                         capture_output=True, text=True, timeout=BOUND, env=os.environ, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) <= 2


def test_a_page_of_another_site_cannot_call_the_mcp_server(brain, repo):
    with team_server(repo, None, "--host", "127.0.0.2") as url:
        port = urlsplit(url).port
        parts = urlsplit(url)

        def post(origin):
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=BOUND)
            try:
                conn.request("POST", parts.path, body=b"{}", headers={
                    "Host": f"127.0.0.2:{port}", "Origin": origin, "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream"})
                return conn.getresponse().status
            finally:
                conn.close()

        assert post("http://evil.example") == 403
        assert post(f"http://evil.example:{port}") == 403
        assert post("http://localhost:6274") != 403  # a local tool's page (the MCP Inspector) on this machine
        assert post(f"http://127.0.0.2:{port}") != 403


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(labels=st.lists(_LABEL, min_size=1, max_size=4), port=st.integers(0, 65535),
       bind=st.sampled_from(["127.0.0.1", "127.0.0.2", "::1", "10.1.2.3", "0.0.0.0"]),
       bound=st.integers(1, 65535))
def test_host_allow_list_property(labels, port, bind, bound):
    """Only the bound port answers; a foreign name never does, in any case or with a trailing dot."""
    from brain.team.hosts import allowed_hosts, is_loopback

    allow = allowed_hosts(bind, bound, ["proxy.example"])
    name = ".".join(labels)
    shown = f"[{bind}]" if ":" in bind else bind
    local = is_loopback(bind) or bind == "0.0.0.0"
    expected = name in ("localhost", "proxy.example") and (name == "proxy.example" or (local and port == bound))
    assert allow.allows(f"{name}:{port}") is expected
    assert allow.allows(f"{name.upper()}:{port}") is expected
    assert allow.allows(f"{name}.:{port}") is False
    assert allow.allows(f"{name}@{shown}:{bound}") is False
    if bind != "0.0.0.0":
        assert allow.allows(f"{shown}:{bound}") and allow.allows(f"{shown}:{port}") is (port == bound)
    assert allow.allows(f"localhost:{bound}") is local
    assert allow.allows(f"{shown}:{bound}/x") is False and allow.allows(f"{shown}:{bound}:{bound}") is False


def test_a_rebound_name_never_reaches_the_ui_sign_in_form(brain, repo):
    brain.tokens.create("alice", role="backend")
    with ui_server(repo, "127.0.0.2") as url:
        port = urlsplit(url).port
        assert _get(url + "login", f"evil.example:{port}") == 421
        assert _get(url, f"evil.example:{port}") == 421
        assert _get(url, f"127.0.0.2:{port}") == 401  # the right name: the token form
