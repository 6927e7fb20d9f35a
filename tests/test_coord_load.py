"""Faults and load on both backends, with real processes.

- 32 processes claim, renew and release overlapping items at once: no grant is lost
  or duplicated, and every grant reports exactly the overlapping claims that were live
  at its (serialised) moment — checked by replaying the audit history.
- A process SIGKILLed while holding claims and a pending ask: its claims expire, the
  asks it was part of resolve, nothing else is affected.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from brain.backends import open_backend
from brain.backends.testing import FakeClock
from brain.coord import Coordinator
from brain.coord.overlap import items_overlap
from coordkit import backend_spec  # noqa: F401  (fixture)

WORKER = textwrap.dedent("""
    import json, random, sys
    from brain.backends import open_backend
    from brain.coord import Coordinator
    from brain.errors import ClaimLost
    spec, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(n)
    items = ["src", "src/a.py", "src/*.py", "src/b/c.py", "docs", "docs/**/*.md", "name:deploy", "tests/t_%d.py" % (n % 4)]
    c = Coordinator(open_backend(spec), brain_name="proj", machine="box")
    me = c.start_session("w%d" % n).id
    held = []
    for _ in range(rounds):
        r = rng.random()
        if held and r < 0.25:
            cid = held.pop(rng.randrange(len(held)))
            c.release(me, cid)
            print(json.dumps({"op": "release", "claim": cid}))
        elif held and r < 0.45:
            cid = rng.choice(held)
            g = c.renew(me, cid, ttl=3600)
            print(json.dumps({"op": "renew", "claim": cid, "fence": g.fence}))
        else:
            g = c.claim(me, rng.choice(items), ttl=3600)
            held.append(g.claim)
            print(json.dumps({"op": "grant", "claim": g.claim, "fence": g.fence, "item": g.item, "session": me,
                              "overlaps": sorted(o.claim for o in g.overlaps)}))
        sys.stdout.flush()
""")


def test_32_processes_claiming_renewing_releasing(backend_spec, tmp_path):
    setup = open_backend(backend_spec)
    setup.migrate()  # the schema exists before the crowd arrives
    setup.close()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    procs = [subprocess.Popen([sys.executable, str(script), backend_spec, str(n), "12"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(32)]
    grants, errors = [], []
    for p in procs:
        out, err = p.communicate(timeout=240)
        if p.returncode != 0:
            errors.append(err[-2000:])
        grants += [json.loads(line) for line in out.splitlines() if '"grant"' in line]
    assert errors == []

    # no lost or duplicated grant: each reported grant is one row, with a unique fence
    assert len({g["claim"] for g in grants}) == len(grants)
    assert len({g["fence"] for g in grants}) == len(grants)
    b = open_backend(backend_spec)
    try:
        c = Coordinator(b, brain_name="proj", machine="box")
        with b.transaction(write=False) as tx:
            rows = tx.execute("SELECT id, fence FROM claims ORDER BY id")
        assert sorted((g["claim"], g["fence"]) for g in grants) == [tuple(r) for r in rows]
        events = list(reversed(c.history(limit=100_000)))
    finally:
        b.close()

    # every overlap reported: replay the serialised history and recompute each grant's overlaps
    reported = {g["claim"]: g["overlaps"] for g in grants}
    live: dict[int, tuple[str, str]] = {}
    checked = 0
    for e in events:
        cid = int(e.subject.split(":")[1]) if e.subject.startswith("claim:") else None
        if e.action == "grant":
            expected = sorted(k for k, (s, item) in live.items() if s != e.session and items_overlap(item, e.detail["item"]))
            assert reported[cid] == expected, (cid, reported[cid], expected)
            assert sorted(o["claim"] for o in e.detail["overlaps"]) == expected
            live[cid] = (e.session, e.detail["item"])
            checked += 1
        elif e.action in ("release", "expire"):
            live.pop(cid, None)
    assert checked == len(grants) and any(reported.values())


VICTIM = textwrap.dedent("""
    import os, sys
    from brain.backends import open_backend
    from brain.coord import Coordinator
    spec, target = sys.argv[1], sys.argv[2]
    c = Coordinator(open_backend(spec), brain_name="proj", machine="box")
    me = c.start_session("victim", pid=os.getpid()).id  # a long-lived process names itself
    c.claim(me, "src/core", ttl=60)
    c.claim(me, "name:deploy", ttl=60)
    ticket = c.arm(me, target, "are we there yet?").ticket
    print(me, ticket, flush=True)
    c.wait(ticket)          # blocks: the parent kills us here
""")


def test_sigkill_while_holding_claims_and_a_pending_ask(backend_spec, tmp_path):
    b = open_backend(backend_spec)
    start = time.time()
    clock = FakeClock(start)
    c = Coordinator(b, brain_name="proj", machine="box", clock=clock)
    target = c.start_session("target").id
    bystander = c.start_session("bystander").id
    safe = c.claim(bystander, "docs", ttl=7200)
    script = tmp_path / "victim.py"
    script.write_text(VICTIM)
    proc = subprocess.Popen([sys.executable, str(script), backend_spec, target], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        victim, victim_ticket = line.split()
        # someone was also waiting on the victim when it died
        asker_ticket = c.arm(bystander, victim, "status?").ticket
        out: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: out.put(c.wait(asker_ticket)), daemon=True).start()
        assert {cl.session for cl in c.claims()} == {victim, bystander}
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    res = out.get(timeout=15)                           # its process is gone: no clock needs to move
    assert res.outcome == "stalled"                     # the ask made of the dead process resolves
    assert c.session(victim).liveness == "gone"
    clock.advance(time.time() - clock() + 61)           # past the victim's claim TTL (granted on its real clock)
    c.heartbeat(target)
    c.heartbeat(bystander)
    assert {cl.claim for cl in c.claims()} == {safe.claim}  # its claims expired, the bystander's did not
    resolved = dict(c.sweep())                          # its own ask: nobody will ever wait on it
    assert resolved.get(victim_ticket) == "abandoned"
    assert c.inbox(target) == []
    assert c.check_fence(safe.claim, safe.fence)
    assert c.session(victim).liveness == "gone"
    b.close()


def test_asker_process_killed_mid_wait_resumes_with_the_stored_deadline(backend_spec, tmp_path):
    """`brain ask` is killed while waiting (a restart); `brain ask --ticket` in a new process is released
    by the deadline stored at arming, not by a fresh timeout."""
    import brain as brainlib

    repo = tmp_path / "proj"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {**os.environ, "BRAIN_BACKEND": backend_spec} if backend_spec.startswith("postgres") else dict(os.environ)
    env.pop("BRAIN_ASK_TIMEOUT", None)
    b = brainlib.init(repo, env=env)
    if not backend_spec.startswith("postgres"):
        spec = f"sqlite:{b.store_dir / 'brain.db'}"  # the repository's shared store
    else:
        spec = backend_spec
    c = Coordinator(open_backend(spec), brain_name=b.name, machine=b.settings.machine)
    asker, target = c.start_session("asker").id, c.start_session("target").id
    cmd = [sys.executable, "-m", "brain", "ask", target, "still there?", "--session", asker, "--timeout", "4", "--json"]
    armed_at = time.time()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not c.asks(session=target):
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else ""
            c.backend.wait(("brain_ask",), 0.05)
        [ask] = c.asks(session=target)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    resumed = subprocess.run([sys.executable, "-m", "brain", "ask", "--ticket", ask.ticket, "--session", asker, "--json"],
                             cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    released_at = time.time()
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {"outcome": "timeout", "answer": None, "ticket": ask.ticket}
    assert ask.deadline <= released_at < armed_at + 4 + 30  # the stored deadline, not a fresh 600 s
    c.backend.close()
