"""Coordination throughput and ask->reply release latency, on SQLite and PostgreSQL.

Operations per second through the library for claim, signal and live-state writes;
claims/s of one session alone against the same claims with 64 other sessions holding 10
claims each (the ratio, target <= 1.5x: a claim's cost must not grow with the board);
ask->reply release latency p50/p99 (target p99 <= 50 ms) both in one process (threads)
and across processes (the asker in a child process, as two agents would be). The
same operations through the MCP server (stdio, official SDK client) with --mcp.

    python bench/bench_coord.py                       # SQLite only
    python bench/bench_coord.py --board-only          # only the busy-board case (coord-board.json)
    BRAIN_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5432/test python bench/bench_coord.py --mcp

With --agent-mail PYTHON (the interpreter of a separate environment where the
`mcp-agent-mail` package is installed), its file reservation and message send are
measured the same way (its MCP server over stdio, same SDK client) and the ratios printed.

Writes bench/results/coord.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent

ASKER = r"""
import json, sys, time
from brain.backends import open_backend
from brain.coord import Coordinator
spec, me, target, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Coordinator(open_backend(spec), brain_name="bench", machine="box")
for i in range(n):
    res = c.ask(me, target, "q%d" % i, timeout=60)
    print(json.dumps({"ticket": res.ticket, "released": time.time(), "outcome": res.outcome}), flush=True)
"""


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1)


def bench_library(spec: str, n: int) -> dict:
    from brain.backends import open_backend
    from brain.coord import Coordinator

    b = open_backend(spec)
    b.migrate()
    c = Coordinator(b, brain_name="bench", machine="box")
    a, r = c.start_session("bench").id, c.start_session("peer").id
    for i in range(50):  # a realistic board: 50 live claims of another session
        c.claim(r, f"pkg{i}/module")
    t = time.perf_counter()
    for i in range(n):
        c.claim(a, f"src/area{i % 200}/file{i}.py")
    claim = rate(n, time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n):
        c.signal(a, r, f"message {i}")
    signal = rate(n, time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n):
        c.livestate.set(f"key{i % 50}", progress=f"step {i}")
    live = rate(n, time.perf_counter() - t)
    b.close()
    return {"claim_ops_s": claim, "signal_ops_s": signal, "livestate_write_ops_s": live}


def bench_board(alone_spec: str, busy_spec: str, n: int, sessions: int = 64, held: int = 10,
                rounds: int = 5) -> dict:
    """Claims/s of one session alone on its board against the same claims on a busy board, where
    ``sessions`` other sessions hold ``held`` claims each in the same folders (issue 21: a claim's cost
    must not grow with the board; target: within 1.5x). Two stores, measured in alternating rounds so a
    drift of the machine's speed during the run falls on both. The CPU is this process's: on PostgreSQL
    the server's is not in it."""
    from brain.backends import open_backend
    from brain.coord import Coordinator

    stores = {"one_session": open_backend(alone_spec), "busy_board": open_backend(busy_spec)}
    coords = {case: Coordinator(b, brain_name="bench-board", machine="box") for case, b in stores.items()}
    busy = coords["busy_board"]
    for s in range(sessions):
        sid = busy.start_session(f"holder{s}").id
        for k in range(held):
            busy.claim(sid, f"src/area{(s * held + k) % 200}/held{s}_{k}.py")
    claimants = {case: c.start_session("claimant").id for case, c in coords.items()}
    spent = {case: [0.0, 0.0] for case in coords}  # wall, CPU
    for r in range(rounds):
        for case, c in coords.items():
            wall, cpu = time.perf_counter(), time.process_time()
            for i in range(r, n, rounds):
                c.claim(claimants[case], f"src/area{i % 200}/file{i}.py")
            spent[case][0] += time.perf_counter() - wall
            spent[case][1] += time.process_time() - cpu
    for b in stores.values():
        b.close()
    out = {case: {"claims_s": rate(n, wall), "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}
           for case, (wall, cpu) in spent.items()}
    return {**out, "sessions": sessions, "held_each": held, "rounds": rounds,
            "ratio": round(out["one_session"]["claims_s"] / out["busy_board"]["claims_s"], 2)}


def _replier(c, me: str, n: int, stamps: dict, done: threading.Event) -> None:
    answered = 0
    while answered < n and not done.is_set():
        pending = [x for x in c.asks(session=me) if x.target == me]
        if not pending:
            c.backend.wait(("brain_ask",), 0.05)
            continue
        for x in pending:
            stamps[x.ticket] = time.time()
            c.reply(me, x.ticket, "a")
            answered += 1


@contextmanager
def _replying(spec: str, n: int):
    """An asker session and a target whose replier thread answers ``n`` asks, stamping each reply."""
    from brain.backends import open_backend
    from brain.coord import Coordinator

    b = open_backend(spec)
    c = Coordinator(b, brain_name="bench", machine="box")
    asker, target = c.start_session("asker").id, c.start_session("target").id
    stamps: dict[str, float] = {}
    done = threading.Event()
    th = threading.Thread(target=_replier, args=(c, target, n, stamps, done), daemon=True)
    th.start()
    try:
        yield c, asker, target, stamps
    finally:
        done.set()
        th.join(10)
        b.close()


def bench_latency_threads(spec: str, n: int) -> dict:
    lat = []
    with _replying(spec, n) as (c, asker, target, stamps):
        for i in range(n):
            res = c.ask(asker, target, f"q{i}", timeout=60)
            released = time.time()
            assert res.outcome == "reply", res
            lat.append((released - stamps[res.ticket]) * 1000)
    return {"p50_ms": round(pct(lat, 50), 2), "p99_ms": round(pct(lat, 99), 2), "n": n}


def bench_latency_processes(spec: str, n: int) -> dict:
    with _replying(spec, n) as (_, asker, target, stamps):
        out = subprocess.run([sys.executable, "-c", ASKER, spec, asker, target, str(n)], capture_output=True,
                             text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    lat = [(row["released"] - stamps[row["ticket"]]) * 1000 for row in rows if row["outcome"] == "reply"]
    return {"p50_ms": round(pct(lat, 50), 2), "p99_ms": round(pct(lat, 99), 2), "n": len(lat)}


def bench_mcp(spec: str | None, n: int) -> dict:
    """The same writes through `brain serve` (stdio) driven by the official SDK client."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    import brain as brainlib

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "proj"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        env = {k: v for k, v in os.environ.items() if k.startswith(("BRAIN_", "PATH", "HOME"))}
        env["BRAIN_HOME"] = str(Path(tmp) / "home")
        if spec and not spec.startswith("sqlite"):
            env["BRAIN_BACKEND"] = spec
        else:
            env.pop("BRAIN_BACKEND", None)
        brainlib.init(repo, env=env)
        params = StdioServerParameters(command=sys.executable, args=["-m", "brain", "serve"], cwd=str(repo), env=env)

        async def main():
            async with Client(params) as client:
                await client.call_tool("brain_sessions", {})
                out = {}
                for key, tool, args in (("claim_ops_s", "brain_claim", lambda i: {"item": f"src/f{i}.py"}),
                                        ("signal_ops_s", "brain_signal", lambda i: {"target": "proj@box", "text": f"m{i}"}),
                                        ("livestate_write_ops_s", "workstate_set",
                                         lambda i: {"key": f"k{i % 50}", "progress": f"p{i}"})):
                    t = time.perf_counter()
                    for i in range(n):
                        result = await client.call_tool(tool, args(i))
                        assert not result.is_error, result
                    out[key] = rate(n, time.perf_counter() - t)
                return out

        return anyio.run(main)


def bench_agent_mail(python: str, n: int) -> dict:
    """mcp-agent-mail's file_reservation_paths and send_message over stdio, SQLite storage, LLM off."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "STORAGE_ROOT": f"{tmp}/store",
               "DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/mail.sqlite3", "LLM_ENABLED": "false",
               "MCP_TOOLS_MODE": "extended", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        params = StdioServerParameters(command=python, args=["-c", "from mcp_agent_mail.app import build_mcp_server; "
                                                                   "build_mcp_server().run()"], cwd=tmp, env=env)
        project = f"{tmp}/proj"

        async def main():
            async with Client(params) as client:
                await client.call_tool("ensure_project", {"human_key": project})
                names = []
                for _ in range(2):
                    r = await client.call_tool("register_agent", {"project_key": project, "program": "bench",
                                                                  "model": "none"})
                    names.append(r.structured_content["name"])
                out = {}
                t = time.perf_counter()
                for i in range(n):
                    r = await client.call_tool("file_reservation_paths", {"project_key": project, "agent_name": names[0],
                                                                          "paths": [f"src/f{i}.py"], "ttl_seconds": 3600})
                    assert not r.is_error, r
                out["file_reservation_ops_s"] = rate(n, time.perf_counter() - t)
                t = time.perf_counter()
                for i in range(n):
                    r = await client.call_tool("send_message", {"project_key": project, "sender_name": names[0],
                                                                "to": [names[1]], "subject": f"s{i}", "body_md": "hello"})
                    assert not r.is_error, r
                out["send_message_ops_s"] = rate(n, time.perf_counter() - t)
                return out

        return anyio.run(main)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000, help="operations per measurement (default 1000)")
    parser.add_argument("--asks", type=int, default=300, help="ask/reply round trips per latency measurement")
    parser.add_argument("--postgres", default=os.environ.get("BRAIN_TEST_POSTGRES"),
                        help="PostgreSQL URL (default $BRAIN_TEST_POSTGRES); measured in a temporary schema")
    parser.add_argument("--mcp", action="store_true", help="also measure through the MCP server (stdio)")
    parser.add_argument("--agent-mail", metavar="PYTHON", help="interpreter with mcp-agent-mail installed, to compare")
    parser.add_argument("--board-only", action="store_true",
                        help="only the busy-board case: 64 sessions x 10 claims held against 1 session")
    parser.add_argument("--out", default=None, help="results file (default bench/results/coord.json, "
                        "or coord-board.json with --board-only)")
    args = parser.parse_args()
    args.out = args.out or str(HERE / "results" / ("coord-board.json" if args.board_only else "coord.json"))

    results: dict = {"ops": args.ops, "asks": args.asks, "python": sys.version.split()[0], "cpus": os.cpu_count(),
                     "loadavg_start": round(os.getloadavg()[0], 1)}
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        specs = {"sqlite": f"sqlite:{Path(tmp) / 'brain.db'}"}
        if args.postgres:
            from brain.backends.testing import isolated_postgres

            specs["postgresql"] = stack.enter_context(isolated_postgres(args.postgres, prefix="brain_bench"))
        # two fresh stores for the board case: the session alone, the busy board
        board_specs = {"sqlite": [f"sqlite:{Path(tmp) / f'{case}.db'}" for case in ("alone", "busy")]}
        if args.postgres:
            board_specs["postgresql"] = [stack.enter_context(isolated_postgres(args.postgres, prefix=f"brain_{case}"))
                                         for case in ("alone", "busy")]
        for name, spec in specs.items():
            if args.board_only:
                results[name] = {"board": bench_board(*board_specs[name], args.ops)}
                continue
            row = {"library": bench_library(spec, args.ops), "board": bench_board(*board_specs[name], args.ops),
                   "ask_reply_threads": bench_latency_threads(spec, args.asks),
                   "ask_reply_processes": bench_latency_processes(spec, args.asks)}
            if args.mcp:
                if name == "sqlite":
                    row["mcp"] = bench_mcp(None, max(50, args.ops // 5))
                else:
                    with isolated_postgres(args.postgres, prefix="brain_bench_mcp") as mcp_spec:
                        row["mcp"] = bench_mcp(mcp_spec, max(50, args.ops // 5))
            results[name] = row
        if args.agent_mail and not args.board_only:
            results["mcp_agent_mail"] = bench_agent_mail(args.agent_mail, min(args.ops, 50))
            if "mcp" not in results["sqlite"]:
                results["sqlite"]["mcp"] = bench_mcp(None, min(args.ops, 200))

    print(f"{'backend':<11} {'claims in the library':<34} {'claims/s':>9} {'CPU s':>7} {'wall s':>7}")
    for name in ("sqlite", "postgresql"):
        if name in results:
            r = results[name]["board"]
            for key, label in (("one_session", "1 session alone"),
                               ("busy_board", f"{r['sessions']} sessions x {r['held_each']} claims held")):
                print(f"{name:<11} {label:<34} {r[key]['claims_s']:>9} {r[key]['cpu_s']:>7} {r[key]['wall_s']:>7}")
            print(f"{name:<11} ratio 1 session / busy board: {r['ratio']} (target <= 1.5)")
    if args.board_only:
        return _finish(results, args.out)
    print(f"\n{'backend':<11} {'surface':<8} {'claim/s':>9} {'signal/s':>9} {'live/s':>9}")
    for name in ("sqlite", "postgresql"):
        if name not in results:
            continue
        for surface in ("library", "mcp"):
            if surface in results[name]:
                r = results[name][surface]
                print(f"{name:<11} {surface:<8} {r['claim_ops_s']:>9} {r['signal_ops_s']:>9} {r['livestate_write_ops_s']:>9}")
    print(f"\n{'backend':<11} {'ask->reply release':<22} {'p50 ms':>8} {'p99 ms':>8}")
    for name in ("sqlite", "postgresql"):
        if name not in results:
            continue
        for kind in ("threads", "processes"):
            r = results[name][f"ask_reply_{kind}"]
            print(f"{name:<11} {kind:<22} {r['p50_ms']:>8} {r['p99_ms']:>8}")
    if "mcp_agent_mail" in results:
        am, ours = results["mcp_agent_mail"], results["sqlite"]["mcp"]
        print(f"\nmcp-agent-mail over MCP stdio (SQLite): file reservations {am['file_reservation_ops_s']}/s, "
              f"messages {am['send_message_ops_s']}/s")
        print(f"brain over MCP stdio (SQLite): claims {ours['claim_ops_s']}/s "
              f"(x{ours['claim_ops_s'] / am['file_reservation_ops_s']:.1f}), signals {ours['signal_ops_s']}/s "
              f"(x{ours['signal_ops_s'] / am['send_message_ops_s']:.1f})")
    return _finish(results, args.out)


def _finish(results: dict, out: str) -> int:
    """The machine's load next to the figures, and the results file."""
    results["loadavg_end"] = round(os.getloadavg()[0], 1)
    print(f"\n1-minute load average: {results['loadavg_start']} at start, {results['loadavg_end']} at end "
          f"({results['cpus']} CPUs): latency figures on a saturated machine are scheduling-bound")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
