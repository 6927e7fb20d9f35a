"""Helpers for the MCP tests (no tests here): run `python -m brain serve` as a real subprocess and talk to it."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import anyio

BOUND = 60.0  # seconds any wait on the server may take before the test fails


def wait_for(predicate, bound: float = BOUND, every: float = 0.02):
    """Poll ``predicate`` until it returns something true, at most ``bound`` seconds (a condition, not a delay)."""
    deadline = time.monotonic() + bound
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(every)


def server_env(**extra: str) -> dict[str, str]:
    """The variables the server needs (the stdio client adds PATH, HOME...)."""
    env = {k: os.environ[k] for k in ("BRAIN_HOME", "BRAIN_MACHINE", "PYTHONPATH") if k in os.environ}
    env.update(extra)
    return env


def stdio_params(repo: Path, *args: str, **env: str):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "brain", "serve", *args], cwd=str(repo),
                                 env=server_env(**env))


def with_client(target, body, *, mode: str = "auto"):
    """Run ``await body(client)`` with an SDK client connected to ``target``, bounded in time."""
    from mcp import Client

    async def main():
        with anyio.fail_after(BOUND):
            async with Client(target, mode=mode) as client:
                return await body(client)

    return anyio.run(main)


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


class LineReader:
    """Read lines from a pipe with a deadline (no sleeps: select wakes on data)."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.buffer = b""
        self.selector = selectors.DefaultSelector()
        self.selector.register(stream, selectors.EVENT_READ)

    def readline(self, timeout: float = BOUND) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no complete line within {timeout}s (have {self.buffer[-200:]!r})")
            if not self.selector.select(left):
                continue
            chunk = os.read(self.stream.fileno(), 65536)
            if not chunk:  # EOF
                rest, self.buffer = self.buffer, b""
                return rest.decode() if rest else None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


class RawStdioServer:
    """`brain serve` spoken to line by line, so the test sees every byte of stdout."""

    def __init__(self, repo: Path, **env: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "brain", "serve"], cwd=repo, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **server_env(**env)})
        self.out = LineReader(self.proc.stdout)
        self.lines: list[str] = []
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> dict | None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        if notify:
            return None
        while True:
            line = self.out.readline()
            if line is None:
                raise EOFError("server closed stdout")
            self.lines.append(line)
            data = json.loads(line)  # every stdout line must be JSON-RPC: a log line would fail here
            if data.get("id") == self.next_id:
                return data

    def close(self) -> tuple[list[str], str]:
        """Close stdin, wait for a clean exit, return (remaining stdout lines, stderr)."""
        self.proc.stdin.close()
        while (line := self.out.readline()) is not None:
            self.lines.append(line)
        stderr = self.proc.stderr.read().decode()
        self.proc.wait(timeout=BOUND)
        return self.lines, stderr


LISTENING = "brain MCP server listening on "


@contextmanager
def serve_http(repo: Path, env: dict[str, str] | None = None, *extra: str):
    """`brain serve --http --port 0` in ``repo``; yields the URL once the socket listens."""
    proc = subprocess.Popen([sys.executable, "-m", "brain", "serve", "--http", "--port", "0", *extra], cwd=repo,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    try:
        err = LineReader(proc.stderr)
        url = None
        while url is None:
            line = err.readline()
            if line is None:
                raise RuntimeError(f"server exited before listening (code {proc.wait(timeout=BOUND)})")
            if line.startswith(LISTENING):
                url = line[len(LISTENING):].strip()
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=BOUND)
