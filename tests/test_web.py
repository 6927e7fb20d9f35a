"""The web UI over HTTP (Starlette's TestClient): every route, on SQLite and on PostgreSQL.

The brain is filled by real library calls (sessions, claims with an overlap, a pending
ask, live state, a 120-turn conversation, cards with a stale one and a diverging
contract, a supersede chain of decisions, a note holding a script tag). The browser
tests (test_web_browser.py) reuse ``fill_brain``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

pytest.importorskip("starlette")
pytest.importorskip("markdown_it")

import brain as brainlib
from brain.backends.testing import isolated_postgres

HOST = "127.0.0.1:8766"
BASE = f"http://{HOST}"
XSS_NOTE = "# Login tokens\n\nTokens rotate daily. <script>window.pwned = 1</script>\n\n[bad](javascript:alert(1))\n"


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fill_brain(b, *, turns: int = 120) -> dict:
    """A brain as people see it mid-work; returns the ids the tests look for."""
    repo = b.repo
    _write(repo, "pyproject.toml", '[project]\nname = "shop"\n')
    _write(repo, "auth/__init__.py", '"""Auth."""\n\ndef login(user: str) -> bool:\n    """Log in."""\n    return True\n')
    _write(repo, "billing/__init__.py", '"""Billing."""\n\ndef charge(amount: int) -> int:\n    """Charge."""\n    return amount\n')
    _write(b.dir, "contracts/billing.yml", "exposes: [charge, refund]\n")
    b.map()
    _write(repo, "auth/__init__.py", '"""Auth."""\n\ndef login(user: str, otp: str) -> bool:\n    return True\n')  # stale
    b.write("now.md", "# Now\n\nShipping the login rework this week.\n")
    b.write("focus.md", "# Focus\n\nAuth first, billing after.\n")
    b.write("notes/tokens.md", XSS_NOTE)
    b.new_decision("Use JWT for sessions", status="accepted", modules=["auth"], body="Stateless tokens.\n")
    b.new_decision("Use server sessions", status="accepted", modules=["auth"], supersedes=1,
                   body="Revocation matters more.\n")
    c = b.coord
    build = c.start_session("build").id
    review = c.start_session("review").id
    docs = c.start_session("docs").id
    a = c.claim(build, "auth/**")
    o = c.claim(review, "auth/__init__.py")
    c.claim(docs, "docs/guide.md")
    b.livestate.set(build, intent="ship the login rework", progress="tests green, docs next")
    for i in range(turns):
        speaker, other = (build, review) if i % 2 == 0 else (review, build)
        b.record_turn(None, speaker, f"turn {i + 1}: about the login redirect", to=other)
    ask = c.arm(review, build, "is the login API frozen?")  # recorded as the thread's last turn
    c.signal(build, review, "rebasing main in 5 min")
    c.signal(build, c.broadcast_address, "freeze on auth until noon")
    return {"build": build, "review": review, "docs": docs, "claim_a": a.claim, "claim_b": o.claim,
            "ticket": ask.ticket, "thread": b.thread_between(build, review)}


@pytest.fixture(params=["sqlite", "postgresql"])
def filled(request, repo, monkeypatch):
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_url")
        with isolated_postgres(url) as isolated:
            monkeypatch.setenv("BRAIN_BACKEND", isolated)
            b = brainlib.init(repo)
            yield b, fill_brain(b)
            b.backend.close()
    else:
        b = brainlib.init(repo)
        yield b, fill_brain(b)


@pytest.fixture
def client(filled):
    from starlette.testclient import TestClient

    from brain.web import create_app

    b, ids = filled
    with TestClient(create_app(b, warm=False), base_url=BASE) as c:
        yield c, b, ids


def token_of(html: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_work_state_shows_sessions_liveness_live_state_claims_and_asks(client):
    c, b, ids = client
    r = c.get("/work")
    assert r.status_code == 200
    for sid in (ids["build"], ids["review"], ids["docs"]):
        assert sid in r.text
    assert "Alive" in r.text and "ship the login rework" in r.text and "tests green, docs next" in r.text
    assert "auth/**" in r.text and "docs/guide.md" in r.text
    text = text_of(r.text)
    assert "is the login API frozen?" in text
    assert re.search(r"reply .*stall .*timeout at", text)
    assert 'hx-trigger="every 2s"' in r.text
    frag = c.get("/fragments/work")
    assert frag.status_code == 200 and "<html" not in frag.text and ids["build"] in frag.text


def test_claims_board_shows_the_overlap_and_records_a_decision(client):
    c, b, ids = client
    r = c.get("/claims")
    assert r.status_code == 200 and "1 undecided" in r.text
    assert "auth/**" in r.text and "auth/__init__.py" in r.text
    form = c.get(f"/claims/decide?a={ids['claim_a']}&b={ids['claim_b']}&ia=auth%2F**&ib=x")
    assert form.status_code == 200 and 'name="decision"' in form.text
    token = token_of(form.text)
    r = c.post("/claims/decide", data={"csrf": token, "a": ids["claim_a"], "b": ids["claim_b"],
                                       "decision": "build keeps auth; review waits"},
               headers={"Origin": BASE, "HX-Request": "true"})
    assert r.status_code == 200 and "Decision recorded" in r.text and "build keeps auth; review waits" in r.text
    [report] = b.coord.overlaps()
    assert report.decision == "build keeps auth; review waits"
    assert report.decided_by.startswith("sess-") and "human" in report.decided_by
    assert "undecided" not in c.get("/claims").text


def test_forged_posts_are_refused_and_change_nothing(client):
    c, b, ids = client
    token = token_of(c.get("/signals").text)
    before = len(b.coord.history(limit=1000))
    decision = {"a": ids["claim_a"], "b": ids["claim_b"], "decision": "forged"}
    # no token, a wrong token, a foreign Origin, no Origin nor Referer, a foreign Host
    attempts = [
        ({**decision}, {"Origin": BASE}),
        ({**decision, "csrf": "0" * 64}, {"Origin": BASE}),
        ({**decision, "csrf": token}, {"Origin": "http://evil.example"}),
        ({**decision, "csrf": token}, {"Referer": "http://evil.example/page"}),
        ({**decision, "csrf": token}, {}),
    ]
    for data, headers in attempts:
        r = c.post("/claims/decide", data=data, headers=headers)
        assert r.status_code == 403, (data, headers)
    r = c.post("/claims/decide", data={**decision, "csrf": token},
               headers={"Origin": "http://evil.example", "Host": "evil.example"})
    assert r.status_code == 421
    r = c.post("/signals", data={"csrf": "bad", "target": ids["review"], "body": "forged"}, headers={"Origin": BASE})
    assert r.status_code == 403
    # a token is bound to its cookie: another browser's token does not work with this cookie
    from starlette.testclient import TestClient

    other = TestClient(c.app, base_url=BASE)
    other_token = token_of(other.get("/signals").text)
    assert other_token != token
    r = c.post("/claims/decide", data={**decision, "csrf": other_token}, headers={"Origin": BASE})
    assert r.status_code == 403
    assert b.coord.overlaps()[0].decision is None
    assert len(b.coord.history(limit=1000)) == before
    assert all(s.role != "human" for s in b.coord.sessions(include_gone=True))
    # the Referer alone (no Origin) from this very host is accepted
    r = c.post("/claims/decide", data={**decision, "decision": "fine", "csrf": token},
               headers={"Referer": f"{BASE}/claims"}, follow_redirects=False)
    assert r.status_code == 303 and b.coord.overlaps()[0].decision == "fine"


def test_responses_carry_the_cookie_and_protective_headers(client):
    c, b, ids = client
    fresh = c.__class__(c.app, base_url=BASE)
    r = fresh.get("/work")
    cookie = r.headers["set-cookie"]
    assert "brain_csrf=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    assert fresh.get("/work", headers={"Host": "attacker.example"}).status_code == 421
    assert fresh.get("/work", headers={"Host": "localhost:8766"}).status_code == 200


def test_signals_listed_per_session_and_broadcast_and_sent(client):
    c, b, ids = client
    r = c.get("/signals")
    assert "rebasing main in 5 min" in r.text and "freeze on auth until noon" in r.text
    assert "broadcast" in r.text
    assert r.text.count("freeze on auth until noon") == 1  # one broadcast, shown once with its recipients
    mine = c.get("/signals", params={"session": ids["docs"]}).text
    assert "freeze on auth until noon" in mine and "rebasing main in 5 min" not in mine
    seen_before = b.coord.session(ids["review"]).last_seen
    token = token_of(r.text)
    r = c.post("/signals", data={"csrf": token, "target": ids["review"], "body": "please look at PR 12",
                                 "kind": "note"}, headers={"Origin": BASE, "HX-Request": "true"})
    assert r.status_code == 200 and "please look at PR 12" in r.text and "Signal sent to 1" in r.text
    got = [s.body for s in b.coord.signals(ids["review"], include_acked=True)]
    assert "please look at PR 12" in got
    assert b.coord.session(ids["review"]).last_seen >= seen_before
    frag = c.get("/fragments/signals").text
    assert "please look at PR 12" in frag and "<html" not in frag


def test_reading_pages_never_heartbeats_a_session(client):
    c, b, ids = client
    before = {s.id: s.last_seen for s in b.coord.sessions(include_gone=True)}
    for url in ("/work", "/fragments/work", "/claims", "/signals", f"/signals?session={ids['review']}", "/threads"):
        assert c.get(url).status_code == 200
    after = {s.id: s.last_seen for s in b.coord.sessions(include_gone=True)}
    assert after == before


def test_thread_viewer_pages_replay_and_handoff(client):
    c, b, ids = client
    r = c.get("/threads")
    assert ids["thread"] in r.text and ids["build"] in r.text
    r = c.get("/threads/pair", params={"a": ids["review"], "b": ids["build"]}, follow_redirects=False)
    assert r.status_code == 303 and unquote(r.headers["location"]).endswith(ids["thread"])
    last = c.get(f"/threads/{ids['thread']}")
    assert last.status_code == 200 and "page 3 of 3" in last.text and "turn 120:" in last.text
    assert "turn 100:" not in last.text and "Handoff summary" in last.text
    from brain.web.render import render_markdown

    handoff = text_of(str(render_markdown(b.conversations.handoff(ids["thread"]).text))).strip()
    assert handoff and handoff[:60] in text_of(last.text)
    first = c.get(f"/threads/{ids['thread']}?page=1")
    assert "turn 1:" in first.text and "turn 50:" in first.text and "turn 51:" not in first.text
    step = c.get(f"/threads/{ids['thread']}?page=2&upto=3", headers={"HX-Request": "true"})
    assert "<html" not in step.text and "turn 53:" in step.text and "turn 54:" not in step.text
    assert "Turn 3 of 50" in step.text and "upto=4" in step.text
    assert c.get(f"/threads/{ids['thread']}?page=9").status_code == 400
    assert c.get("/threads/nobody+else").status_code == 404


def test_memory_browser_cards_decisions_notes_and_sanitized_markdown(client):
    c, b, ids = client
    r = c.get("/memory")
    assert "Shipping the login rework" in r.text and "Auth first" in r.text
    text = text_of(r.text)
    assert re.search(r"auth stale", text) and re.search(r"billing contract diverges", text)
    assert "0002" in r.text and "0001" in text
    card = c.get("/memory/card/billing")
    assert card.status_code == 200 and "Contract divergence" in card.text and "refund" in card.text
    assert "stale" in c.get("/memory/card/auth").text
    assert c.get("/memory/card/nothing").status_code == 404
    dec = c.get("/memory/decisions").text
    assert "superseded by" in dec and "Revocation matters more" in dec and "supersedes" in dec
    note = c.get("/memory/doc/notes/tokens.md")
    assert note.status_code == 200
    assert "<script>" not in note.text and "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in note.text
    assert 'href="javascript:' not in note.text
    assert c.get("/memory/doc/runtime/brain.db").status_code == 400
    assert c.get("/memory/doc/../../etc/passwd").status_code in (400, 404)


def test_search_highlights_matches_and_escapes(client):
    c, b, ids = client
    r = c.get("/search", params={"q": "tokens rotate"})
    assert r.status_code == 200
    assert "<mark>" in r.text and "notes/tokens.md" in r.text
    assert "<script>window" not in r.text
    r = c.get("/search", params={"q": "zzzqqqnothing"})
    assert "Nothing matches" in r.text


def test_usage_page_and_chart(client):
    c, b, ids = client
    r = c.get("/usage")
    assert r.status_code == 200 and "brain stats" in r.text and 'src="/usage/chart.svg"' in r.text
    svg = c.get("/usage/chart.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.startswith("<svg")


def test_static_files_and_health(client):
    c, b, ids = client
    js = c.get("/static/htmx.min.js")
    assert js.status_code == 200 and "Zero-Clause BSD" in js.text[:300] and "htmx" in js.text
    assert c.get("/static/style.css").status_code == 200
    assert c.get("/healthz").text == "ok"
    assert c.get("/", follow_redirects=False).headers["location"] == "/work"


def test_auth_hook_and_extra_middleware(filled):
    from starlette.middleware import Middleware
    from starlette.testclient import TestClient

    from brain.web import create_app

    b, ids = filled
    seen = []

    class Tag:
        def __init__(self, app):
            self.app = app

        async def __call__(self, scope, receive, send):
            seen.append(scope.get("path"))
            await self.app(scope, receive, send)

    app = create_app(b, warm=False, middleware=[Middleware(Tag)],
                     auth=lambda request: request.headers.get("authorization") == "Bearer s3cret")
    with TestClient(app, base_url=BASE) as c:
        assert c.get("/work").status_code == 401
        assert c.get("/work", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert [p for p in seen if p] == ["/work", "/work"]


def test_the_human_session_ends_with_the_server(filled):
    from starlette.testclient import TestClient

    from brain.web import create_app

    b, ids = filled
    app = create_app(b, warm=False)
    with TestClient(app, base_url=BASE) as c:
        token = token_of(c.get("/signals").text)
        assert c.post("/signals", data={"csrf": token, "target": b.coord.broadcast_address, "body": "hello all"},
                      headers={"Origin": BASE}, follow_redirects=False).status_code == 303
        human = app.state.human.id
        assert b.coord.session(human).role == "human"
        assert {ids["build"], ids["review"], ids["docs"]} <= {s.recipient for s in _all_signals(b, "hello all")}
    assert b.coord.session(human).liveness == "gone"


def _all_signals(b, body):
    out = []
    for s in b.coord.sessions():
        out += [x for x in b.coord.signals(s.id, include_acked=True) if x.body == body]
    return out


def test_bad_inputs_are_clear_errors(client):
    c, b, ids = client
    token = token_of(c.get("/signals").text)
    r = c.post("/signals", data={"csrf": token, "target": "sess-nobody", "body": "x"}, headers={"Origin": BASE})
    assert r.status_code == 404
    r = c.post("/claims/decide", data={"csrf": token, "a": 99999, "b": 99998, "decision": "x"}, headers={"Origin": BASE})
    assert r.status_code == 404
    r = c.post("/claims/decide", data={"csrf": token, "a": ids["claim_a"], "b": ids["claim_b"], "decision": "  "},
               headers={"Origin": BASE})
    assert r.status_code == 400
    assert c.get("/threads/pair", params={"a": ids["build"], "b": ids["build"]}).status_code == 400


def test_cli_ui_help_and_bad_port(repo):
    import subprocess
    import sys

    brainlib.init(repo)
    out = subprocess.run([sys.executable, "-m", "brain", "ui", "--help"], capture_output=True, text=True, cwd=repo)
    assert out.returncode == 0 and "--port" in out.stdout and "127.0.0.1" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "brain", "ui", "--port", "70000"], capture_output=True, text=True,
                         cwd=repo)
    assert bad.returncode == 2


def test_cli_ui_serves_until_terminated(repo):
    import signal
    import subprocess
    import sys
    import urllib.request

    b = brainlib.init(repo)
    proc = subprocess.Popen([sys.executable, "-m", "brain", "ui", "--port", "0"], cwd=repo, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stderr.readline()  # printed once the socket listens
        url = re.search(r"http://\S+", line).group(0)
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "healthz", timeout=30) as r:
            assert r.read() == b"ok"
        with urllib.request.urlopen(url + "work", timeout=30) as r:
            assert b"Work state" in r.read()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a clean shutdown


def test_a_fresh_brain_shows_empty_panels_and_creates_no_database(brain):
    from starlette.testclient import TestClient

    from brain.web import create_app

    with TestClient(create_app(brain, warm=False), base_url=BASE) as c:
        for url in ("/work", "/fragments/work", "/claims", "/fragments/claims", "/signals", "/fragments/signals",
                    "/threads", "/memory", "/memory/decisions", "/usage", "/search?q=x"):
            assert c.get(url).status_code == 200, url
        assert "No sessions yet" in c.get("/work").text
        assert "No overlapping claims" in c.get("/claims").text
    assert not (brain.store_dir / "brain.db").exists()
