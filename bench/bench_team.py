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
    python bench/bench_team.py --only claims --src BASE/src    # a baseline: the same bench on other code
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
    for i in range(8):  # a little code, committed: a team's repository has a HEAD (an unborn branch cannot
        (repo / "src" / f"pay{i}").mkdir(parents=True)  # prove a code refresh a no-op, so every boot would walk)
        (repo / "src" / f"pay{i}" / "webhook.py").write_text(
            f"def retry_payment_{i}(event):\n    \"\"\"Retry the payment webhook {i}.\"\"\"\n    return event\n")
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "project"], check=True)
    tokens = [b.tokens.create(f"agent{i:02d}", role="worker", machine=f"m{i:02d}")[0] for i in range(clients)]
    return repo, env, tokens


def start_server(repo: Path, env: dict, workers: int = 1, profile: str | None = None):
    command = [sys.executable, "-m", "brain"]
    if profile:  # every thread under cProfile, stats written when the server stops
        command = [sys.executable, str(HERE / "serve_profiled.py"), profile]
    proc = subprocess.Popen([*command, "serve", "--http", "--port", "0", "--workers", str(workers)],
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


async def run_clients(url: str, tokens: list[str], loops: int, calls=None) -> dict[str, list[float]]:
    """Every client connects, learns its session, then runs ``loops`` of ``calls`` (boot, claim and signal)."""
    calls = calls or mix_calls
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
                for kind, tool, args in calls(i, n, peer):
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


MIX = ("boot", "claim", "signal")


def mix_calls(i: int, n: int, peer: str) -> tuple:
    return (("boot", "brain_boot", {"task": "add a retry to the payment webhook", "budget": 2000}),
            ("claim", "brain_claim", {"item": f"src/mod{i}/file{n}.py", "ttl": 600}),
            ("signal", "brain_signal", {"target": peer, "text": f"ping {n}"}))


def claim_calls(i: int, n: int, peer: str) -> tuple:
    """The claims-only run: each client claims files of its own folder, a third of them in a folder its
    neighbour also claims (an overlap to report: the board is not empty)."""
    folder = f"src/mod{i}" if n % 3 else f"src/shared{i // 2}"
    return (("claim", "brain_claim", {"item": f"{folder}/file{n}.py", "ttl": 600}),)


def run_raw_clients(url: str, tokens: list[str], loops: int, calls=mix_calls) -> dict[str, list[float]]:
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
                for kind, tool, args in calls(i, n, peer):
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
    for kind in MIX:
        values = timings[kind]
        if not values:
            continue
        total = sum(values)
        out[kind] = {"ops": len(values), "p50_ms": round(percentile(values, 50) * 1000, 2),
                     "p90_ms": round(percentile(values, 90) * 1000, 2),
                     "p99_ms": round(percentile(values, 99) * 1000, 2),
                     "max_ms": round(max(values) * 1000, 2),
                     # this kind's share of throughput: its ops per second of the clients' time spent on it
                     "ops_per_s": round(len(values) / (total / clients), 1) if total else None}
    wall = timings["_wall"][0]
    out["wall_s"] = round(wall, 2)
    out["all_ops_per_s"] = round(sum(len(timings[k]) for k in MIX) / wall, 1)
    return out


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its live descendants (the server and its workers), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def postgres_cpu(url: str, tag: str) -> dict[int, float]:
    """CPU seconds of each PostgreSQL backend process whose connection is named ``tag`` (``application_name``),
    from /proc (the server runs on this machine): PostgreSQL's own share of a claim, which the server's
    process tree does not hold."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", (tag,))]
    return {pid: process_tree_cpu(pid) for pid in pids}


def library_claims(root: Path, clients: int, loops: int, backend: str | None) -> dict:
    """The baseline of the same run: the claims-only calls made by the library in this process (one thread,
    ``clients`` sessions in turn), so the table shows what HTTP, MCP and the server add to a claim."""
    from brain.workspace import open_brain

    repo, env, _tokens = setup(root, 0, backend)
    brain = open_brain(repo, env=env)
    sessions = [brain.coord.start_session(f"agent{i:02d}").id for i in range(clients)]
    cpu0, t0 = time.process_time(), time.perf_counter()
    count = 0
    for n in range(loops):
        for i, sid in enumerate(sessions):
            for _kind, _tool, args in claim_calls(i, n, ""):
                brain.coord.claim(sid, args["item"], ttl=args["ttl"])
                count += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"claims": count, "claims_per_s": round(count / wall, 1), "wall_s": round(wall, 2),
            "cpu_ms_per_claim": round(cpu / count * 1000, 3)}


def layers(root: Path, count: int, backend: str | None) -> dict:
    """CPU per claim of each layer, one caller, in this process: the library; the team app as ASGI without
    HTTP (tokens, Host check, depth guard, the MCP dispatch: through the lane, then through the SDK's own
    per-request session); the whole server over loopback HTTP comes from the one-client run."""
    import anyio

    from brain.mcp import lane
    from brain.team.server import team_app
    from brain.workspace import open_brain

    repo, env, tokens = setup(root, 1, backend)
    brain = open_brain(repo, env=env)
    sid = brain.coord.start_session("layers").id
    cpu = time.process_time()
    for n in range(count):
        brain.coord.claim(sid, f"lib/f{n}.py", ttl=600)
    out = {"library_ms": (time.process_time() - cpu) / count * 1000}
    app = team_app(brain)
    headers = [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {tokens[0]}".encode()),
               (b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", b"2025-06-18")]

    async def post(message: dict) -> bytes:
        scope = {"type": "http", "method": "POST", "path": "/mcp", "scheme": "http", "headers": headers,
                 "server": ("127.0.0.1", 8765), "client": ("127.0.0.1", 5000), "root_path": "", "query_string": b"",
                 "http_version": "1.1"}
        sent, done = [], False

        async def receive():
            nonlocal done
            if done:
                await anyio.sleep_forever()
            done = True
            return {"type": "http.request", "body": json.dumps(message).encode(), "more_body": False}

        async def send(event):
            sent.append(event)

        await app(scope, receive, send)
        return b"".join(e.get("body", b"") for e in sent if e["type"] == "http.response.body")

    async def main() -> None:
        startup, stop = anyio.Event(), anyio.Event()

        async def lifespan_receive():
            if not startup.is_set():
                return {"type": "lifespan.startup"}
            await stop.wait()
            return {"type": "lifespan.shutdown"}

        async def lifespan_send(event):
            if event["type"] == "lifespan.startup.complete":
                startup.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan_receive, lifespan_send)
            await startup.wait()
            await post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "layers", "version": "1"}}})
            for label, meta in (("lane_ms", {}), ("sdk_session_ms", {"_meta": {}})):  # _meta: the SDK's path
                cpu = time.process_time()
                for n in range(count):
                    answer = await post({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                                         "params": {"name": "brain_claim", "arguments": {
                                             "item": f"{label}/f{n}.py", "ttl": 600}, **meta}})
                    if b'"isError":false' not in answer:
                        raise RuntimeError(f"claim failed: {answer[:300]!r}")
                out[label] = (time.process_time() - cpu) / count * 1000
            stop.set()

    assert lane.ToolCallLane  # the app above has the lane in front of the SDK's
    anyio.run(main)
    return {k: round(v, 3) for k, v in out.items()}


def serve_and_run(args, n: int, backend: str | None, loops: int, calls) -> dict:
    tag = f"brain_bench_{os.getpid()}_{time.monotonic_ns()}"
    if backend:  # every connection of this run named, so PostgreSQL's processes serving it can be found
        backend += ("&" if "?" in backend else "?") + f"application_name={tag}"
    with tempfile.TemporaryDirectory() as tmp:
        repo, env, tokens = setup(Path(tmp), n, backend)
        proc, url = start_server(repo, env, args.workers, args.profile)
        try:
            pg0 = postgres_cpu(backend, tag) if backend else {}
            cpu0, client0 = process_tree_cpu(proc.pid), time.process_time()
            timings = (asyncio.run(run_clients(url, tokens, loops, calls)) if args.sdk
                       else run_raw_clients(url, tokens, loops, calls))
            cpu, client_cpu = process_tree_cpu(proc.pid) - cpu0, time.process_time() - client0
            # the backends that connected meanwhile count from 0 (their connection set-up included)
            pg_cpu = sum(t - pg0.get(pid, 0.0) for pid, t in postgres_cpu(backend, tag).items()) if backend else None
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    out = summarize(timings, n)
    ops = sum(len(timings[k]) for k in MIX)
    # the server's CPU covers the clients' handshakes too (a few requests each): a slight overestimate
    out.update(server_cpu_s=round(cpu, 2), server_cpu_ms_per_op=round(cpu / ops * 1000, 3),
               client_cpu_s=round(client_cpu, 2), client_cpu_ms_per_op=round(client_cpu / ops * 1000, 3))
    if pg_cpu is not None:
        out.update(postgres_cpu_s=round(pg_cpu, 2), postgres_cpu_ms_per_op=round(pg_cpu / ops * 1000, 3))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--loops", type=int, default=10, help="loops of boot, claim and signal per client (mix run)")
    parser.add_argument("--claims", type=int, default=50, help="claims per client in the claims-only run")
    parser.add_argument("--only", choices=("mix", "claims", "layers"), help="run one of the runs only")
    parser.add_argument("--postgres", metavar="URL", help="run the coordination on PostgreSQL (fresh schema)")
    parser.add_argument("--sdk", action="store_true", help="use the MCP SDK client instead of the thin one")
    parser.add_argument("--workers", type=int, default=1, help="server processes (`brain serve --http --workers N`)")
    parser.add_argument("--profile", metavar="FILE", help="run the server under cProfile (every thread; "
                                                          "bench/serve_profiled.py), stats of the last server to FILE")
    parser.add_argument("--src", type=Path, help="the brain source tree to measure (default: this checkout's src/), "
                                                   "e.g. the code before a change for a baseline in the same run")
    parser.add_argument("--out", type=Path, help="results file (default bench/results/team[-postgres][-sdk][-wN].json)")
    args = parser.parse_args()
    src = str((args.src or HERE.parent / "src").resolve())
    sys.path.insert(0, src)  # the library measured in process, and the server's (below) are the same code
    os.environ["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    results = {"src": "this checkout" if args.src is None else "--src", "clients": args.clients, "loops": args.loops, "claims_per_client": args.claims,
               "backend": "postgresql" if args.postgres else "sqlite",
               "client": "mcp-sdk" if args.sdk else "thin-jsonrpc", "workers": args.workers, "cpus": os.cpu_count(),
               "load_start": [round(x, 2) for x in os.getloadavg()]}
    runs = [("mix", args.loops, mix_calls), ("claims", args.claims, claim_calls)]
    runs = [r for r in runs if args.only in (None, r[0])]
    schema = None

    def fresh_backend():  # a fresh PostgreSQL schema for each server (None: SQLite in the temp folder)
        nonlocal schema
        if schema is not None:
            schema.__exit__(None, None, None)
            schema = None
        if not args.postgres:
            return None
        from brain.backends.testing import isolated_postgres

        schema = isolated_postgres(args.postgres, prefix="brain_bench")
        return schema.__enter__()

    try:
        for name, loops, calls in runs:
            results[name] = {label: serve_and_run(args, n, fresh_backend(), loops, calls)
                             for label, n in (("one_client", 1), ("concurrent", args.clients))}
        if "claims" in results:
            with tempfile.TemporaryDirectory() as tmp:
                results["claims"]["library"] = library_claims(Path(tmp), args.clients, args.claims, fresh_backend())
        if args.only in (None, "layers"):
            with tempfile.TemporaryDirectory() as tmp:
                results["layers"] = layers(Path(tmp), 1000, fresh_backend())
    finally:
        if schema is not None:
            schema.__exit__(None, None, None)
    results["load_end"] = [round(x, 2) for x in os.getloadavg()]
    report(results, args)
    out = args.out or HERE / "results" / (f"team{'-postgres' if args.postgres else ''}{'-sdk' if args.sdk else ''}"
                                          f"{f'-w{args.workers}' if args.workers > 1 else ''}.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {out}")


def report(results: dict, args) -> None:
    print(f"team server, {results['backend']}, {args.clients} {results['client']} clients "
          f"(loopback HTTP, bearer tokens, {args.workers} server worker{'s' if args.workers > 1 else ''}), "
          f"{results['cpus']} CPUs, load average {results['load_start'][0]} at start, {results['load_end'][0]} at end")
    if "mix" in results:
        one, many = results["mix"]["one_client"], results["mix"]["concurrent"]
        print(f"mix run, {args.loops} loops of boot, claim, signal per client")
        print(f"{'op':<8}{'1 client ops/s':>16}{'p99 ms':>9}{f'{args.clients} clients ops/s':>20}{'p50 ms':>9}"
              f"{'p99 ms':>9}")
        for kind in MIX:
            print(f"{kind:<8}{one[kind]['ops_per_s']:>16}{one[kind]['p99_ms']:>9}{many[kind]['ops_per_s']:>20}"
                  f"{many[kind]['p50_ms']:>9}{many[kind]['p99_ms']:>9}")
        print(f"all operations: 1 client {one['all_ops_per_s']} ops/s, {args.clients} clients "
              f"{many['all_ops_per_s']} ops/s; server CPU {many['server_cpu_ms_per_op']} ms/op, "
              f"clients' CPU {many['client_cpu_s']} s over {many['wall_s']} s of wall")
    if "claims" in results:
        c = results["claims"]
        print(f"claims-only run, {args.claims} claims per client")
        print(f"{'':<22}{'claims/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'wall s':>8}{'server CPU ms/claim':>21}"
              f"{'clients CPU ms/claim':>22}{'PostgreSQL CPU ms/claim':>25}")
        for label, name in (("one_client", "1 client"), ("concurrent", f"{args.clients} clients")):
            r = c[label]
            print(f"{name:<22}{r['all_ops_per_s']:>10}{r['claim']['p50_ms']:>9}{r['claim']['p99_ms']:>9}"
                  f"{r['wall_s']:>8}{r['server_cpu_ms_per_op']:>21}{r['client_cpu_ms_per_op']:>22}"
                  f"{r.get('postgres_cpu_ms_per_op', '-'):>25}")
        lib = c["library"]
        print(f"{'library, in process':<22}{lib['claims_per_s']:>10}{'':>9}{'':>9}{lib['wall_s']:>8}"
              f"{lib['cpu_ms_per_claim']:>21}")
    if "layers" in results:
        layer = results["layers"]
        print(f"CPU ms per claim, one caller, 1,000 claims: library {layer['library_ms']}; team app in process "
              f"(no HTTP) through the lane {layer['lane_ms']}, through the SDK's per-request session "
              f"{layer['sdk_session_ms']}")


if __name__ == "__main__":
    main()
