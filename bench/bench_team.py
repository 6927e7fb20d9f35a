"""Team server under load: 64 concurrent clients over authenticated HTTP (loopback only).

Each client has its own bearer token (so its own session) and its own keep-alive
connection to one `python -m brain serve --http` process: by default a thin
JSON-RPC client (initialize handshake, then tools/call; one thread per client, so
the figures measure the server rather than client-side SDK overhead), or with
``--sdk`` the official MCP SDK client (64 of them in one event loop). Every client
runs a bounded loop of each operation; latency is timed at the client (HTTP,
JSON-RPC, bearer check, tool, backend). Baseline in the same run: the same loop
with one client, so the table shows what concurrency costs.

    python bench/bench_team.py                          # SQLite backend
    python bench/bench_team.py --postgres postgresql://postgres@127.0.0.1:5432/test
    # prints a table and writes bench/results/team[-postgres][-sdk].json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LISTENING = "brain MCP server listening on "


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = max(0, min(len(values) - 1, int(round(q / 100 * (len(values) - 1)))))
    return values[k]


def setup(root: Path, clients: int, backend: str | None) -> tuple[Path, dict, list[str]]:
    repo = root / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    env = {**os.environ, "BRAIN_HOME": str(root / "home"), "BRAIN_MACHINE": "bench"}
    env.pop("BRAIN_BACKEND", None)
    if backend:
        env["BRAIN_BACKEND"] = backend
    from brain.workspace import init_brain

    b, _ = init_brain(repo, env=env)
    b.write("now.md", "# Now\n\nLoad test of the team server.\n")
    for i in range(40):
        b.write(f"notes/n{i}.md", f"# note {i}\n\npayment retry webhook details {i}\n")
    tokens = [b.tokens.create(f"agent{i:02d}", role="worker", machine=f"m{i:02d}")[0] for i in range(clients)]
    return repo, env, tokens


def start_server(repo: Path, env: dict, workers: int = 1):
    proc = subprocess.Popen([sys.executable, "-m", "brain", "serve", "--http", "--port", "0", "--workers", str(workers)],
                            cwd=repo, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"server exited (code {proc.wait()})")
        if line.startswith(LISTENING):
            return proc, line[len(LISTENING):].strip()
    proc.kill()
    raise SystemExit("server did not listen within 60 s")


def client(url: str, token: str):
    """The SDK client with its bearer token; TCP_NODELAY on its socket (as production HTTP clients set),
    else each request's headers and body wait on the server's delayed ACK (about 40 ms)."""
    import socket

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    base = create_mcp_http_client()
    transport = httpx2.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=base.timeout,
                              follow_redirects=True, transport=transport)
    return Client(streamable_http_client(url, http_client=http))


async def run_clients(url: str, tokens: list[str], loops: int) -> dict[str, list[float]]:
    """Every client connects, learns its session, then runs ``loops`` of boot, claim and signal."""
    timings: dict[str, list[float]] = {"boot": [], "claim": [], "signal": []}
    ready = asyncio.Event()
    sessions: list[str | None] = [None] * len(tokens)
    connected = 0

    async def one(i: int, token: str):
        nonlocal connected
        async with client(url, token) as c:
            me = (await c.call_tool("brain_sessions", {})).structured_content["you"]
            sessions[i] = me
            connected += 1
            if connected == len(tokens):
                ready.set()
            await asyncio.wait_for(ready.wait(), 120)
            peer = sessions[(i + 1) % len(tokens)]
            for n in range(loops):
                for kind, tool, args in (
                        ("boot", "brain_boot", {"task": "add a retry to the payment webhook", "budget": 2000}),
                        ("claim", "brain_claim", {"item": f"src/mod{i}/file{n}.py", "ttl": 600}),
                        ("signal", "brain_signal", {"target": peer, "text": f"ping {n}"})):
                    t0 = time.perf_counter()
                    result = await c.call_tool(tool, args)
                    timings[kind].append(time.perf_counter() - t0)
                    if result.is_error:
                        raise RuntimeError(f"{tool} failed: {result.content}")

    start = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(one(i, t) for i, t in enumerate(tokens))), 1800)
    timings["_wall"] = [time.perf_counter() - start]
    return timings


class RawClient:
    """A minimal streamable-HTTP MCP client: one keep-alive connection, JSON-RPC over POST."""

    def __init__(self, url: str, token: str) -> None:
        import http.client
        import socket
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.path = parts.path
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.ids = 0

    def _send(self, payload: dict):
        import http.client
        import socket

        for attempt in (1, 2):  # the server closes idle keep-alive connections after 5 s: reconnect once
            try:
                self.conn.request("POST", self.path, body=json.dumps(payload).encode(), headers=self.headers)
                return self.conn.getresponse()
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                self.conn.close()
                if attempt == 2:
                    raise
                self.conn.connect()
                self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _post(self, payload: dict) -> tuple[object, dict | None]:
        resp = self._send(payload)
        body = resp.read().decode("utf-8", "replace")
        if resp.status >= 300:
            raise RuntimeError(f"HTTP {resp.status}: {body[:200]}")
        data = None
        for line in body.splitlines():  # an SSE stream of one message, or plain JSON
            if line.startswith("data:"):
                data = json.loads(line[5:])
        if data is None and body.strip().startswith("{"):
            data = json.loads(body)
        return resp, data

    def initialize(self) -> None:
        self.ids += 1
        resp, _ = self._post({"jsonrpc": "2.0", "id": self.ids, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "bench", "version": "1"}}})
        sid = resp.getheader("mcp-session-id")
        self.headers.update({"mcp-protocol-version": "2025-06-18", **({"mcp-session-id": sid} if sid else {})})
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict) -> dict:
        self.ids += 1
        _, data = self._post({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}})
        result = (data or {}).get("result") or {}
        if result.get("isError") or "error" in (data or {}):
            raise RuntimeError(f"{tool} failed: {str(data)[:300]}")
        return result.get("structuredContent") or {}


def run_raw_clients(url: str, tokens: list[str], loops: int) -> dict[str, list[float]]:
    import threading

    timings: dict[str, list[float]] = {"boot": [], "claim": [], "signal": []}
    sessions: list[str | None] = [None] * len(tokens)
    barrier = threading.Barrier(len(tokens) + 1)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def one(i: int, token: str) -> None:
        try:
            c = RawClient(url, token)
            c.initialize()
            sessions[i] = c.call("brain_sessions", {})["you"]
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        barrier.wait(timeout=300)
        if errors:
            return
        peer = sessions[(i + 1) % len(tokens)]
        try:
            for n in range(loops):
                for kind, tool, args in (
                        ("boot", "brain_boot", {"task": "add a retry to the payment webhook", "budget": 2000}),
                        ("claim", "brain_claim", {"item": f"src/mod{i}/file{n}.py", "ttl": 600}),
                        ("signal", "brain_signal", {"target": peer, "text": f"ping {n}"})):
                    t0 = time.perf_counter()
                    c.call(tool, args)
                    with lock:
                        timings[kind].append(time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i, t), daemon=True) for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    barrier.wait(timeout=300)  # every client connected and has its session: the clock starts
    start = time.perf_counter()
    for t in threads:
        t.join(timeout=1800)
    if errors:
        raise errors[0]
    timings["_wall"] = [time.perf_counter() - start]
    return timings


def summarize(timings: dict[str, list[float]], clients: int) -> dict:
    out = {}
    for kind in ("boot", "claim", "signal"):
        values = timings[kind]
        total = sum(values)
        out[kind] = {"ops": len(values), "p50_ms": round(percentile(values, 50) * 1000, 2),
                     "p99_ms": round(percentile(values, 99) * 1000, 2),
                     # this kind's share of throughput: its ops per second of the clients' time spent on it
                     "ops_per_s": round(len(values) / (total / clients), 1) if total else None}
    wall = timings["_wall"][0]
    out["wall_s"] = round(wall, 2)
    out["all_ops_per_s"] = round(sum(len(timings[k]) for k in ("boot", "claim", "signal")) / wall, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--loops", type=int, default=10, help="operations of each kind per client")
    parser.add_argument("--postgres", metavar="URL", help="run the coordination on PostgreSQL (fresh schema)")
    parser.add_argument("--sdk", action="store_true", help="use the MCP SDK client instead of the thin one")
    parser.add_argument("--workers", type=int, default=1, help="server processes (`brain serve --http --workers N`)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "src"))
    results = {"clients": args.clients, "loops": args.loops, "backend": "postgresql" if args.postgres else "sqlite",
               "client": "mcp-sdk" if args.sdk else "thin-jsonrpc", "workers": args.workers}
    schema_ctx = None
    backend = None
    if args.postgres:
        from brain.backends.testing import isolated_postgres

        schema_ctx = isolated_postgres(args.postgres, prefix="brain_bench")
        backend = schema_ctx.__enter__()
    try:
        for label, n in (("one_client", 1), ("concurrent", args.clients)):
            with tempfile.TemporaryDirectory() as tmp:
                repo, env, tokens = setup(Path(tmp), n, backend)
                proc, url = start_server(repo, env, args.workers)
                try:
                    timings = (asyncio.run(run_clients(url, tokens, args.loops)) if args.sdk
                               else run_raw_clients(url, tokens, args.loops))
                finally:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                results[label] = summarize(timings, n)
            if backend:  # a fresh schema for the second run
                schema_ctx.__exit__(None, None, None)
                schema_ctx = isolated_postgres(args.postgres, prefix="brain_bench")
                backend = schema_ctx.__enter__()
    finally:
        if schema_ctx is not None:
            schema_ctx.__exit__(None, None, None)
    print(f"team server, {results['backend']}, {args.clients} {results['client']} clients x {args.loops} loops "
          f"(loopback HTTP, bearer tokens, {args.workers} server worker{'s' if args.workers > 1 else ''})")
    print(f"{'op':<8}{'1 client ops/s':>16}{'p99 ms':>9}{f'{args.clients} clients ops/s':>20}{'p50 ms':>9}{'p99 ms':>9}")
    for kind in ("boot", "claim", "signal"):
        one, many = results["one_client"][kind], results["concurrent"][kind]
        print(f"{kind:<8}{one['ops_per_s']:>16}{one['p99_ms']:>9}{many['ops_per_s']:>20}{many['p50_ms']:>9}"
              f"{many['p99_ms']:>9}")
    print(f"all operations: 1 client {results['one_client']['all_ops_per_s']} ops/s, {args.clients} clients "
          f"{results['concurrent']['all_ops_per_s']} ops/s")
    out = HERE / "results" / (f"team{'-postgres' if args.postgres else ''}{'-sdk' if args.sdk else ''}"
                              f"{f'-w{args.workers}' if args.workers > 1 else ''}.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
