"""MCP tool-call latency over stdio, after the session is up, on a generated brain.

Target (issue 2): an MCP tool call over stdio p50 <= 5 ms. The brain is the one
bench_boot.py generates (5,000 notes, 2,000 module-card-sized files). Each call is
timed at the client (the official SDK client, talking to `python -m brain serve` as a
subprocess), so the figure includes JSON-RPC framing, the pipe, the SDK on both
sides and the worker thread the tool runs on. Baseline in the same run: the same
library call in-process (what the tool does, without the protocol).

    python bench/bench_mcp.py            # prints a table and writes bench/results/mcp.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_boot import build, percentile  # noqa: E402

TASK = "add a retry to the payment webhook"
CALLS = {
    "brain_read": ({"path": "now.md"}, lambda b: b.read("now.md")),
    "brain_boot": ({"task": TASK}, lambda b: b.boot(TASK)),
}


def in_process(b, fn, runs: int) -> list[float]:
    for _ in range(10):
        fn(b)
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(b)
        out.append((time.perf_counter() - start) * 1000)
    return out


def _children_cpu_seconds() -> float:
    """CPU time (user + system) of this process's live children, from /proc (Linux): the server."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def over_stdio(repo: Path, runs: dict[str, int], mode: str, handle: bool = False) -> dict[str, dict]:
    """Wall time of each call at the client, and the CPU both sides spent per call (immune to machine load).

    ``handle``: every call names its session by a handle (``brain_session_start``, the ``brain/session``
    ``_meta`` key), as a stateless caller does: the handle's cost (its HMAC, one session read, the
    heartbeat) on top of the same call."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "brain", "serve"], cwd=str(repo),
                                   env={"BRAIN_HOME": os.environ["BRAIN_HOME"]})
    out: dict[str, dict] = {}

    async def main():
        async with Client(params, mode=mode) as client:
            meta = None
            if handle:
                started = await client.call_tool("brain_session_start", {"role": "bench"})
                meta = {"brain/session": started.structured_content["handle"]}
            for name, (arguments, _) in CALLS.items():
                for _ in range(10):  # warm: first calls import lazily and fill caches
                    assert not (await client.call_tool(name, arguments, meta=meta)).is_error
                samples = []
                client_cpu, server_cpu = time.process_time(), _children_cpu_seconds()
                for _ in range(runs[name]):
                    start = time.perf_counter()
                    result = await client.call_tool(name, arguments, meta=meta)
                    samples.append((time.perf_counter() - start) * 1000)
                    assert not result.is_error
                out[name] = {"samples": samples,
                             "client_cpu_ms": round((time.process_time() - client_cpu) * 1000 / runs[name], 3),
                             "server_cpu_ms": round((_children_cpu_seconds() - server_cpu) * 1000 / runs[name], 3)}

    anyio.run(main)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples), 3), "p95_ms": round(percentile(samples, 0.95), 3)}


def cpu(run: dict) -> dict[str, float]:
    return {"client_cpu_ms": run["client_cpu_ms"], "server_cpu_ms": run["server_cpu_ms"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=300, help="timed brain_read calls")
    parser.add_argument("--boot-calls", type=int, default=60, help="timed brain_boot calls (a boot costs more)")
    parser.add_argument("--out", default=str(HERE / "results" / "mcp.json"))
    args = parser.parse_args()

    import brain

    root = Path(tempfile.mkdtemp(prefix="brain-bench-mcp-"))
    os.environ["BRAIN_HOME"] = str(root / "home")
    try:
        repo = build(root, args.notes, args.cards)
        b = brain.open(repo)
        runs = {"brain_read": args.calls, "brain_boot": args.boot_calls}
        results: dict = {"notes": args.notes, "cards": args.cards, "calls": runs, "tools": {}}
        stdio = {mode: over_stdio(repo, runs, mode) for mode in ("auto", "legacy")}
        stdio["handle"] = over_stdio(repo, runs, "auto", handle=True)
        for name, (_, fn) in CALLS.items():
            results["tools"][name] = {
                "in_process": summary(in_process(b, fn, runs[name])),
                "stdio_2026": summary(stdio["auto"][name]["samples"]) | cpu(stdio["auto"][name]),
                "stdio_handshake": summary(stdio["legacy"][name]["samples"]) | cpu(stdio["legacy"][name]),
                "stdio_2026_handle": summary(stdio["handle"][name]["samples"]) | cpu(stdio["handle"][name]),
            }
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print(f"MCP tool call over stdio, {args.notes} notes + {args.cards} cards, calls {runs} (ms)")
    print(f"{'tool':<12} {'path':<26} {'p50':>8} {'p95':>8} {'p50 - library':>14} {'CPU/call client+server':>23}")
    labels = {"in_process": "library call (baseline)", "stdio_2026": "stdio, 2026-07-28 client",
              "stdio_handshake": "stdio, handshake client", "stdio_2026_handle": "stdio, 2026 + session handle"}
    for name, rows in results["tools"].items():
        for key, label in labels.items():
            extra = rows[key]["p50_ms"] - rows["in_process"]["p50_ms"]
            cpu_text = "" if key == "in_process" else \
                f"{rows[key]['client_cpu_ms']:.2f} + {rows[key]['server_cpu_ms']:.2f}"
            print(f"{name:<12} {label:<26} {rows[key]['p50_ms']:>8.2f} {rows[key]['p95_ms']:>8.2f} "
                  f"{'' if key == 'in_process' else f'{extra:+.2f}':>14} {cpu_text:>23}")
    read = results["tools"]["brain_read"]
    worst = max(read["stdio_2026"]["p50_ms"], read["stdio_handshake"]["p50_ms"])
    print(f"target: a tool call over stdio p50 <= 5 ms (brain_read, worst client): "
          f"{'met' if worst <= 5 else 'NOT met'} ({worst:.2f} ms); brain_boot adds the library's boot time")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
