"""The coordination CLI as a user runs it: real subprocesses on a real repository (SQLite by
default; the PostgreSQL URL through BRAIN_BACKEND when the server is configured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from brain.backends.testing import isolated_postgres


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request, brain):
    extra = {"BRAIN_ASK_TIMEOUT": "0"}
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        with isolated_postgres(url) as isolated:
            yield {**extra, "BRAIN_BACKEND": isolated}
    else:
        yield extra


def run(repo, env, *args, check=True):
    out = subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=60)
    if check:
        assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out


def js(repo, env, *args):
    return json.loads(run(repo, env, *args, "--json").stdout)


def test_session_claim_release_and_watchdog(repo, env):
    a = js(repo, env, "session", "start", "--role", "build")
    b = js(repo, env, "session", "start", "--role", "build")
    assert set(a) == {"session"} and a["session"] != b["session"]
    a, b = a["session"], b["session"]
    g1 = js(repo, env, "claim", "src/auth", "--session", a, "--ttl", "600")
    assert g1["overlaps"] == [] and isinstance(g1["claim"], int) and isinstance(g1["fence"], int)
    g2 = js(repo, env, "claim", "src/auth/*.py", "--session", b)
    assert {"claim", "fence", "overlaps"} <= set(g2)
    assert g2["overlaps"] == [{"session": a, "item": "src/auth", "claim": g1["claim"]}]
    watch = run(repo, env, "claims", "--watch", "--count", "1", "--json").stdout.splitlines()
    assert len(watch) == 1 and len(json.loads(watch[0])["overlaps"]) == 1
    js(repo, env, "claims", "--decide", str(g1["claim"]), str(g2["claim"]), "--decision", "build first")
    listed = js(repo, env, "claims")
    assert [o["decision"] for o in listed["overlaps"]] == ["build first"]
    renewed = js(repo, env, "claim", "--renew", str(g1["claim"]), "--session", a)
    assert renewed["fence"] == g1["fence"]
    assert js(repo, env, "release", str(g1["claim"]), "--session", a)["released"] == [g1["claim"]]
    lost = run(repo, env, "claim", "--renew", str(g1["claim"]), "--session", a, "--json", check=False)
    assert lost.returncode == 6 and json.loads(lost.stderr)["error"] == "claim_lost"
    actions = [e["action"] for e in js(repo, env, "audit")]
    assert {"grant", "release", "decide", "renew"} <= set(actions)


def test_bad_input_is_refused_and_writes_nothing(repo, env):
    a = js(repo, env, "session", "start", "--role", "build")["session"]
    out = run(repo, env, "claim", "--session", a, "--json", check=False)
    assert out.returncode == 2 and json.loads(out.stderr)["error"] == "invalid_input"
    out = run(repo, env, "claim", "x", "--session", a, "--ttl", "-3", "--json", check=False)
    assert out.returncode == 2
    out = run(repo, env, "claim", "x", "--session", "sess-nobody", "--json", check=False)
    assert out.returncode == 5
    assert js(repo, env, "claims", "--all")["claims"] == []


def test_signals_and_checkpoint_in_the_boot(repo, env):
    a = js(repo, env, "session", "start", "--role", "build")["session"]
    b = js(repo, env, "session", "start", "--role", "review")["session"]
    sent = js(repo, env, "signal", f"project@{os.environ.get('BRAIN_MACHINE', 'testbox')}", "rebase soon", "--session", a)
    assert sent["recipients"] == [b]
    got = js(repo, env, "signals", "--session", b, "--ack")
    assert [s["body"] for s in got] == ["rebase soon"]
    assert js(repo, env, "signals", "--session", b) == []
    js(repo, env, "claim", "src/x.py", "--session", a)
    cp = js(repo, env, "checkpoint", "--session", a, "--step", "writing tests", "--note", "next: CI")
    assert cp["step"] == "writing tests" and len(cp["claims"]) == 1
    boot = js(repo, env, "boot", "--session", a, "--no-record")
    slots = [s["slot"] for s in boot["sections"]]
    assert slots[:2] == ["now", "checkpoint"]
    assert "writing tests" in boot["text"] and "next: CI" in boot["text"]


def test_ask_blocks_until_the_reply_from_another_process(repo, env):
    a = js(repo, env, "session", "start", "--role", "build")["session"]
    b = js(repo, env, "session", "start", "--role", "review")["session"]
    asker = subprocess.Popen([sys.executable, "-m", "brain", "ask", b, "which port?", "--session", a, "--json"],
                             cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 30
        inbox = []
        while not inbox:
            assert time.monotonic() < deadline and asker.poll() is None
            inbox = js(repo, env, "inbox", "--session", b)
        assert inbox == [{"ticket": inbox[0]["ticket"], "from": a, "question": "which port?"}]
        run(repo, env, "reply", inbox[0]["ticket"], "8080", "--session", b)
        out, err = asker.communicate(timeout=30)
    finally:
        if asker.poll() is None:
            asker.kill()
    assert asker.returncode == 0, err
    assert json.loads(out) == {"outcome": "reply", "answer": "8080", "ticket": inbox[0]["ticket"]}
    again = run(repo, env, "reply", inbox[0]["ticket"], "9090", "--session", b, "--json", check=False)
    assert again.returncode == 6 and json.loads(again.stderr)["state"] == "replied"
    timed = js(repo, env, "ask", b, "anyone?", "--session", a, "--timeout", "0.3")
    assert timed["outcome"] == "timeout" and timed["answer"] is None
    # waiting again on a resolved ticket (as after a restart) returns its one outcome at once
    assert js(repo, env, "ask", "--ticket", timed["ticket"], "--session", a) == timed
    assert run(repo, env, "ask", "--session", a, check=False).returncode == 2


@pytest.mark.parametrize("command", ["session", "claim", "release", "claims", "signal", "signals", "checkpoint",
                                     "ask", "inbox", "reply", "workstate", "audit"])
def test_every_coordination_command_has_help(command, repo):
    out = subprocess.run([sys.executable, "-m", "brain", command, "--help"], cwd=repo, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "usage" in out.stdout
