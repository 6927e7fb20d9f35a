"""`brain serve --http --workers N`: several processes on one port, one session per token, no orphans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import brain as brainlib  # noqa: E402
from test_mcp_helpers import BOUND, LISTENING, LineReader  # noqa: E402
from test_team_helpers import post  # noqa: E402

pytestmark = pytest.mark.timeout(180)

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def call(url: str, token: str, tool: str, arguments: dict | None = None) -> dict:
    """One tools/call on a new connection (so the kernel may hand it to any worker)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments or {}}}).encode()
    status, raw = post(url, token, body, {"mcp-protocol-version": "2025-06-18"})
    assert status == 200, raw
    result = json.loads(raw)["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return {int(p) for p in handle.read().split()}


def wait_for(predicate, what: str):
    """Poll ``predicate`` until true, bounded: process tables have no event to wait on."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def start(repo: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "brain", "serve", "--http", "--port", "0", *extra], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=os.environ)
    err = LineReader(proc.stderr)
    while True:
        line = err.readline()
        if line is None:
            raise RuntimeError(f"server exited before listening (code {proc.wait(timeout=BOUND)})")
        if line.startswith(LISTENING):
            return proc, line[len(LISTENING):].strip()


@pytest.fixture
def served(brain, repo):
    token, _ = brain.tokens.create("alice", role="backend", machine="m1")
    other, _ = brain.tokens.create("bob", role="frontend", machine="m2")
    proc, url = start(repo, "--workers", "2")
    yield proc, url, token, other
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=BOUND)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process table from /proc")
def test_workers_share_the_port_and_agree_on_each_tokens_session(served, repo):
    proc, url, token, other = served
    workers = wait_for(lambda: len(children(proc.pid)) == 2 and children(proc.pid), "two workers")
    status, _ = post(url, token, json.dumps(INIT).encode())
    assert status == 200
    mine = {call(url, token, "brain_sessions")["you"] for _ in range(12)}
    theirs = {call(url, other, "brain_sessions")["you"] for _ in range(12)}
    assert len(mine) == 1 and len(theirs) == 1 and mine != theirs  # one session per token, whichever worker
    grant = call(url, token, "brain_claim", {"item": "src/api/**"})
    seen = call(url, other, "brain_claim", {"item": "src/api/views.py"})
    assert [o["session"] for o in seen["overlaps"]] == [grant["session"]]
    record = brainlib.open_brain(repo).tokens.get("alice")
    assert record.sessions == sorted(mine)  # the store recorded one session, not one per worker

    os.kill(sorted(workers)[0], signal.SIGKILL)  # a worker dies: another replaces it, the port keeps answering
    wait_for(lambda: len(children(proc.pid)) == 2 and children(proc.pid) != workers, "a replacement worker")
    assert call(url, token, "brain_sessions")["you"] in mine

    survivors = children(proc.pid)
    proc.send_signal(signal.SIGINT)  # stop: every worker goes, the parent exits cleanly
    assert proc.wait(timeout=BOUND) == 0
    assert all(not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
               for pid in survivors)


def test_workers_apply_to_http_only_need_tokens_and_are_bounded(brain, repo):
    """Without tokens a caller has no identity that every worker shares: refused before anything listens."""
    for args in (["serve", "--workers", "2"], ["serve", "--http", "--workers", "0"],
                 ["serve", "--http", "--port", "0", "--workers", "2"]):
        out = subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                             timeout=BOUND, env=os.environ, stdin=subprocess.DEVNULL)
        assert out.returncode == 2, out.stderr
        assert "--workers" in out.stderr
