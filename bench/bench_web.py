"""Server-side render time of every web UI page at scale, on SQLite (and PostgreSQL).

A brain is filled through the library with 200 sessions (live state for each), 2,000
claims (some overlapping, a few decided), pending asks, signals, and one 100,000-turn
conversation (paginated, 50 turns a page), plus cards, decisions and notes. Each page
is then requested through Starlette's in-process client (no network) --repeat times; the
server-side time (request in to last body byte, an ASGI middleware given to create_app)
is reported as median, p95 and max, with the process CPU time of the whole round trip
beside it (client included: an upper bound that other jobs on the machine do not inflate).
The first request of the 100k-turn thread is reported apart, twice: as the app's very first
request of an app created with warm=False (templates compiled, markdown-it loaded, the thread's
lines counted), and again once the templates are warm but the thread's line checkpoints were
dropped (brain.log.pages counts the whole thread again). The second is the worst a person sees:
`brain ui` compiles the templates and loads markdown-it before it accepts a request, and counts
the logs' lines in the background.
A 300 KB note (/memory/doc/notes/big.md) is timed too: its first request (a bounded rendering,
brain.web.render) is reported apart, the repeated ones come from the render cache.
Target: every page <= 100 ms.

    python bench/bench_web.py
    BRAIN_TEST_POSTGRES=postgresql://postgres@127.0.0.1:5432/test python bench/bench_web.py --postgres

Writes bench/results/web.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))


BIG_NOTE_KB = 300


def big_note(kb: int) -> str:
    """A markdown note of about ``kb`` KiB: headings, emphasis, code spans and links (what markdown-it is slow on)."""
    paragraph = "Tokens rotate **daily**; see `auth/login.py` and [the runbook](https://example.invalid/rb).\n\n"
    parts, size, i = ["# Big note\n\n"], 0, 0
    while size < kb * 1024:
        parts.append(f"## Part {i}\n\n" + paragraph * 5)
        size += len(parts[-1])
        i += 1
    return "".join(parts)


def fill(b, sessions: int, claims: int, turns: int) -> dict:
    from brain.log.turns import Turn

    started = time.perf_counter()
    repo = b.repo
    for name in ("auth", "billing", "shop"):
        (repo / name).mkdir(exist_ok=True)
        (repo / name / "__init__.py").write_text(f'"""{name}."""\n\ndef run(x: int) -> int:\n    return x\n')
    (repo / "pyproject.toml").write_text('[project]\nname = "bench"\n')
    b.map()
    b.write("now.md", "# Now\n\nBenchmarking the web UI.\n")
    b.write("focus.md", "# Focus\n\nSpeed.\n")
    for i in range(20):
        b.write(f"notes/n{i}.md", f"# Note {i}\n\nlogin tokens rotate, note {i}\n")
    (b.dir / "notes" / "big.md").write_text(big_note(BIG_NOTE_KB))  # as a clone may ship it (above write_bytes)
    b.new_decision("First", status="accepted")
    b.new_decision("Second", status="accepted", supersedes=1)
    c = b.coord
    ids = [c.start_session(f"r{i % 9}").id for i in range(sessions)]
    for i, sid in enumerate(ids):
        b.livestate.set(sid, intent=f"task {i}", progress=f"step {i % 5} of 5")
    grants = []
    for i in range(claims):
        sid = ids[i % sessions]
        item = f"src/m{i % 397}/**" if i % 20 == 0 else f"src/m{i % 400}/f{i}.py"  # ~500 overlapping pairs
        grants.append(c.claim(sid, item, ttl=7200))
    overlaps = c.overlaps() if claims <= 3000 else []
    for o in overlaps[:10]:
        c.decide_overlap(o.a.claim, o.b.claim, "a keeps it")
    for i in range(min(10, sessions // 2)):
        c.arm(ids[i], ids[i + sessions // 2], f"question {i}?")
    for i in range(50):
        c.signal(ids[i % sessions], ids[(i + 1) % sessions], f"signal {i}")
    c.signal(ids[0], c.broadcast_address, "broadcast to all")
    a, z = ids[0], ids[1]
    for i in range(min(turns, 100)):
        b.record_turn(None, a if i % 2 == 0 else z, f"turn {i} about the login redirect", to=z if i % 2 == 0 else a)
    thread = b.thread_between(a, z)
    log = b.conversations.log
    now = time.time()
    for i in range(100, turns):
        log.append(Turn(thread=thread, speaker=a if i % 2 == 0 else z, to=z if i % 2 == 0 else a, at=now + i,
                        text=f"turn {i}: looked at src/auth/login.py, the redirect keeps the query string"))
    return {"thread": thread, "overlaps": len(overlaps), "seconds": round(time.perf_counter() - started, 1)}


class ServerTimer:
    """ASGI middleware (passed through create_app's ``middleware=`` hook): request start to last body byte."""

    last_ms: float = 0.0

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()

        async def timed_send(message):
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                ServerTimer.last_ms = (time.perf_counter() - start) * 1000

        await self.app(scope, receive, timed_send)


def _stats(times: list[float]) -> dict:
    times = sorted(times)
    return {"median": round(statistics.median(times), 1), "p95": round(times[max(0, -(-len(times) * 95 // 100) - 1)], 1),
            "max": round(times[-1], 1)}


def timed(client, url: str, repeat: int) -> dict:
    server, round_trip, cpu = [], [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        r = client.get(url)
        round_trip.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        server.append(ServerTimer.last_ms)
        if r.status_code != 200:
            raise SystemExit(f"{url}: HTTP {r.status_code}\n{r.text[:500]}")
    return {"url": url, "server_ms": _stats(server), "client_ms": _stats(round_trip), "cpu_ms": _stats(cpu),
            "bytes": len(r.content)}


def run(backend: str | None, args) -> dict:
    from starlette.middleware import Middleware
    from starlette.testclient import TestClient

    import brain
    from brain.web import create_app

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["BRAIN_HOME"] = str(Path(tmp) / "home")
        if backend:
            os.environ["BRAIN_BACKEND"] = backend
        else:
            os.environ.pop("BRAIN_BACKEND", None)
        b = brain.init(repo)
        seeded = fill(b, args.sessions, args.claims, args.turns)
        print(f"  filled in {seeded['seconds']} s ({seeded['overlaps']} overlapping pairs)", file=sys.stderr)
        app = create_app(b, warm=False, middleware=[Middleware(ServerTimer)])
        thread = seeded["thread"]
        with TestClient(app, base_url="http://127.0.0.1:8766") as client:
            t = time.perf_counter()
            client.get(f"/threads/{thread}")
            cold = round(ServerTimer.last_ms, 1)
            b.conversations.log.page_index.forget()
            client.get(f"/threads/{thread}")
            recount = round(ServerTimer.last_ms, 1)
            client.get("/search?q=login")  # builds the derived index once, as `brain index` would
            from brain.web.render import RENDER_CACHE

            RENDER_CACHE.clear()
            client.get("/memory/doc/notes/big.md")
            big_first = round(ServerTimer.last_ms, 1)  # rendered (its bounded head); later requests hit the cache
            urls = ["/work", "/fragments/work", "/claims", "/fragments/claims", "/signals", "/fragments/signals",
                    "/threads", f"/threads/{thread}", f"/threads/{thread}?page=1",
                    f"/threads/{thread}?page={args.turns // 100}", f"/threads/{thread}?page=5&upto=10",
                    "/memory", "/memory/card/auth", "/memory/decisions", "/memory/doc/notes/n1.md",
                    "/memory/doc/notes/big.md",
                    "/search?q=login+tokens", "/usage", "/usage/chart.svg"]
            rows = [timed(client, url, args.repeat) for url in urls]
        b.backend.close()
    return {"backend": "postgresql" if backend else "sqlite", "cold_thread_ms": cold, "recount_thread_ms": recount,
            "big_note_first_ms": big_first,
            "pages": rows,
            "load_average": [round(x, 1) for x in os.getloadavg()], "cpus": os.cpu_count(), **seeded}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--postgres", action="store_true", help="also run on BRAIN_TEST_POSTGRES (own schema)")
    args = parser.parse_args()
    results = []
    print(f"sqlite: {args.sessions} sessions, {args.claims} claims, {args.turns} turns", file=sys.stderr)
    results.append(run(None, args))
    if args.postgres:
        from brain.backends.testing import isolated_postgres

        url = os.environ.get("BRAIN_TEST_POSTGRES")
        if not url:
            raise SystemExit("--postgres needs BRAIN_TEST_POSTGRES")
        print("postgresql", file=sys.stderr)
        with isolated_postgres(url, prefix="brain_bench") as isolated:
            results.append(run(isolated, args))
    for res in results:
        print(f"\n{res['backend']}: first request of the {args.turns}-turn thread: {res['cold_thread_ms']} ms cold "
              f"(the app's first request), {res['recount_thread_ms']} ms with warm templates and its lines counted "
              f"afresh; load average {res['load_average']} on {res['cpus']} CPUs")
        print(f"first request of a {BIG_NOTE_KB} KB note: {res['big_note_first_ms']} ms (then from the render cache)")
        print(f"{'page':42} {'server median':>13} {'p95':>7} {'max':>7} {'CPU p50':>8} {'KiB':>6}")
        for row in res["pages"]:
            url = row["url"].replace(res["thread"], "<thread>")
            sv, cl = row["server_ms"], row["client_ms"]
            print(f"{url:42} {sv['median']:>11.1f}ms {sv['p95']:>5.1f}ms {sv['max']:>5.1f}ms {row['cpu_ms']['median']:>6.1f}ms "
                  f"{row['bytes'] / 1024:>6.1f}")
        worst = max(r["server_ms"]["p95"] for r in res["pages"])
        print(f"worst p95: {worst} ms ({'within' if worst <= 100 else 'ABOVE'} the 100 ms target)")
    out = HERE / "results" / "web.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
