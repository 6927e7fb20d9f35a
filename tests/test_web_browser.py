"""The web UI in a real browser: Playwright for Python driving Debian's Chromium.

A real uvicorn server (in a thread, on a free port) serves a brain filled by library
calls; the tests click through every panel and check what a person sees. Screenshots go
to test-artifacts/ (kept by CI). Skipped when /usr/bin/chromium or playwright is absent;
never runs `playwright install`.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("uvicorn")

import brain as brainlib
from brain.backends.testing import FakeClock, isolated_postgres
from brain.coord.factory import coordinator_for

from test_web import fill_brain

# one Chromium (the module fixture) for all these tests: under pytest-xdist the group keeps them on one worker
pytestmark = pytest.mark.xdist_group("browser")

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


class Server:
    """uvicorn serving ``app`` on 127.0.0.1:<free port> in a thread; ready when ``started``."""

    def __init__(self, app) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:  # bounded wait on the server's own readiness flag
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the UI server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    home = tmp_path_factory.mktemp("chromium-home")  # its crash reports and dconf land here, not in the user's HOME
    env = {**os.environ, "HOME": str(home), **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "CACHE")}}
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, env=env)
        yield b
        b.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, repo, monkeypatch):
    from brain.web import create_app

    pg = None
    if request.param == "postgresql":
        pg = isolated_postgres(request.getfixturevalue("postgres_url"))
        monkeypatch.setenv("BRAIN_BACKEND", pg.__enter__())
    try:
        b = brainlib.init(repo)
        clock = FakeClock(time.time())
        b._coord = coordinator_for(b, b.backend, clock=clock)  # liveness windows without waiting
        ids = fill_brain(b)
        clock.advance(130)  # past the stall window: docs is stalled, build and review come back
        b.coord.heartbeat(ids["build"])
        b.coord.heartbeat(ids["review"])
        app = create_app(b, poll_seconds=0.5)
        with Server(app) as server:
            yield server, b, ids, clock, request.param
        b.backend.close()
    finally:
        if pg is not None:
            pg.__exit__(None, None, None)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # a page served with 409 (an edit that met a concurrent change) is logged by Chromium as a failed load
    expected = "the server responded with a status of 409"
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and expected not in msg.text else None)
    yield pg
    context.close()
    assert not errors, errors  # no script errors, no CSP violations


def shot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"web-{name}.png"), full_page=True)


def test_work_state_panel_live(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/")
    expect(page.locator("h1")).to_have_text("Work state")
    build = page.locator("article.session", has_text=ids["build"])
    expect(build.locator(".badge")).to_have_text("Alive")
    expect(build).to_contain_text("ship the login rework")
    expect(build).to_contain_text("tests green, docs next")
    expect(build).to_contain_text("auth/**")
    expect(page.locator("article.session", has_text=ids["docs"]).locator(".badge")).to_have_text("Stalled")
    ask = page.locator("tr.ask")
    expect(ask).to_contain_text("is the login API frozen?")
    expect(ask).to_contain_text(ids["review"])
    expect(ask.locator("li.next")).to_contain_text("stall")
    expect(ask).to_contain_text("timeout at")
    if kind == "sqlite":
        shot(page, "work-state")
    # a new session and its live state appear without a reload
    new = b.coord.start_session("release").id
    b.livestate.set(new, intent="cut release 1.2")
    expect(page.locator("article.session", has_text=new)).to_contain_text("cut release 1.2", timeout=10000)
    b.coord.end_session(new)
    expect(page.locator("article.session", has_text=new).locator(".badge")).to_have_text("Gone", timeout=10000)


def test_claims_board_decision(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/claims")
    overlap = page.locator("li.overlap").first
    expect(overlap).to_contain_text("auth/**")
    expect(overlap).to_contain_text("auth/__init__.py")
    expect(page.locator("h2", has_text="Overlaps")).to_contain_text("1 undecided")
    overlap.get_by_text("Decide").click()
    expect(page.locator("aside#decide-panel #decision")).to_be_visible()
    page.fill("#decision", "build keeps auth; review rebases after")
    if kind == "sqlite":
        shot(page, "claims-deciding")
    page.get_by_role("button", name="Record decision").click()
    expect(page.locator("li.overlap .decision")).to_contain_text("build keeps auth; review rebases after")
    expect(page.locator("aside#decide-panel .flash")).to_contain_text("Decision recorded")
    expect(page.locator("aside#decide-panel")).to_contain_text("Recorded.")  # the form is cleared, in its place
    expect(page.locator("#decision")).to_have_count(0)
    assert b.coord.overlaps()[0].decision == "build keeps auth; review rebases after"
    if kind == "sqlite":
        shot(page, "claims-decided")


def test_signals_send_and_list(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/signals")
    expect(page.locator("li.signal.broadcast")).to_contain_text("freeze on auth until noon")
    expect(page.locator("li.signal", has_text="rebasing main")).to_contain_text(ids["review"])
    page.select_option("#target", ids["review"])
    page.fill("#body", "please review PR 12 before lunch")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#signal-status")).to_contain_text("Signal sent to 1")
    expect(page.locator("li.signal").first).to_contain_text("please review PR 12 before lunch")
    assert "please review PR 12 before lunch" in [s.body for s in b.coord.signals(ids["review"])]
    page.select_option("#session-filter", ids["docs"])
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#signals")).to_contain_text("freeze on auth until noon")
    expect(page.locator("#signals")).not_to_contain_text("rebasing main")
    if kind == "sqlite":
        shot(page, "signals")


def test_thread_viewer(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/threads")
    page.select_option("#a", ids["build"])
    page.select_option("#b", ids["review"])
    page.get_by_role("button", name="Open thread").click()
    expect(page.locator("#thread")).to_contain_text("page 3 of 3")
    expect(page.locator("ol.turns")).to_contain_text("turn 120:")
    expect(page.locator("ol.turns li").last).to_contain_text("is the login API frozen?")  # the ask, recorded
    expect(page.locator("aside.handoff")).to_contain_text("Handoff")
    expect(page.locator("aside.handoff .md")).not_to_be_empty()
    if kind == "sqlite":
        shot(page, "thread")
    page.locator("nav.pager").first.get_by_role("link", name="1", exact=True).click()
    expect(page.locator("#thread")).to_contain_text("page 1 of 3")
    expect(page.locator("ol.turns li").first).to_contain_text("turn 1:")
    page.get_by_text("Replay this page turn by turn").click()
    expect(page.locator("ol.turns li")).to_have_count(1)
    page.locator("#next-turn").click()
    expect(page.locator("ol.turns li")).to_have_count(2)
    expect(page.locator("ol.turns li").last).to_contain_text("turn 2:")


def test_memory_browser_and_search(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/memory")
    expect(page.locator("section.panel", has_text="Now")).to_contain_text("Shipping the login rework")
    expect(page.locator("ul.cards li", has_text="auth")).to_contain_text("stale")
    expect(page.locator("ul.cards li", has_text="billing")).to_contain_text("contract diverges")
    expect(page.locator("ul.decisions")).to_contain_text("Use server sessions")
    if kind == "sqlite":
        shot(page, "memory")
    page.get_by_role("link", name="billing").click()
    expect(page.locator("section.divergence")).to_contain_text("refund")
    page.goto(server.url + "/memory")
    page.get_by_role("link", name="tokens").click()
    expect(page.locator("article.doc")).to_contain_text("<script>window.pwned = 1</script>")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("article.doc script").count() == 0
    if kind == "sqlite":
        shot(page, "note-sanitized")
    page.goto(server.url + "/memory/decisions")
    first = page.locator("details.decision").first
    expect(first).to_contain_text("superseded by 0002")
    first.locator("summary").click()
    expect(first).to_contain_text("Stateless tokens")
    page.fill("header input[name=q]", "tokens rotate")
    page.press("header input[name=q]", "Enter")
    expect(page.locator("ol.hits li").first.locator("mark").first).to_be_visible()
    expect(page.locator("ol.hits")).to_contain_text("notes/tokens.md")
    if kind == "sqlite":
        shot(page, "search")


def test_usage_page(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    page.goto(server.url + "/usage")
    expect(page.locator("table.figures")).to_contain_text("all sessions")
    img = page.locator("figure.chart img")
    expect(img).to_be_visible()
    page.wait_for_function("document.querySelector('figure.chart img').complete")
    assert page.evaluate("document.querySelector('figure.chart img').naturalWidth") > 0
    if kind == "sqlite":
        shot(page, "usage")


def test_edit_a_note_and_meet_a_concurrent_change(site, page):
    server, b, ids, clock, kind = site
    expect = sync_api.expect
    b.write("notes/runbook.md", "# Runbook\n\nRestart the worker.\n")
    page.goto(server.url + "/memory/doc/notes/runbook.md")
    page.locator("a#edit").click()
    expect(page.locator("textarea#text")).to_have_value("# Runbook\n\nRestart the worker.\n")
    page.fill("textarea#text", "# Runbook\n\nRestart the worker, then the queue.\n")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("article.doc")).to_contain_text("then the queue")
    assert b.read("notes/runbook.md").text == "# Runbook\n\nRestart the worker, then the queue.\n"
    page.locator("a#edit").click()
    b.edit("notes/runbook.md", "append", value="- an agent wrote this meanwhile")
    page.fill("textarea#text", "# Runbook\n\nmine\n")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("p.flash.warn")).to_contain_text("changed since you opened it")
    expect(page.locator("pre.theirs")).to_contain_text("an agent wrote this meanwhile")
    expect(page.locator("textarea#text")).to_have_value("# Runbook\n\nmine\n")
    assert "mine" not in b.read("notes/runbook.md").text
    if kind == "sqlite":
        shot(page, "edit-conflict")


def test_a_thread_from_another_worktree(repo, page):
    """A person supervising agents in worktrees reads their conversations from the main checkout's UI."""
    from brain.web import create_app
    from conftest import git

    brainlib.init(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "brain")
    tree = repo.parent / "wt-parser"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "parser-fix")
    agent = brainlib.open(tree)
    for i in range(1, 61):
        agent.record_turn(None, "user" if i % 2 else "agent-parser", f"turn {i}: the parser drops comments",
                          to="agent-parser" if i % 2 else "user")
    expect = sync_api.expect
    with Server(create_app(brainlib.open(repo), poll_seconds=0.5)) as server:
        page.goto(server.url + "/threads")
        expect(page.locator("p.empty")).to_contain_text("in this checkout")
        table = page.locator("table[data-worktree='wt-parser']")
        expect(table).to_contain_text("agent-parser")
        table.get_by_role("link").first.click()
        expect(page.locator("main p.muted").first).to_contain_text("In worktree wt-parser")
        expect(page.locator("#thread")).to_contain_text("page 2 of 2")
        expect(page.locator("ol.turns")).to_contain_text("turn 60:")
        expect(page.locator("aside.handoff .md")).not_to_be_empty()
        page.locator("nav.pager").first.get_by_role("link", name="1", exact=True).click()
        expect(page.locator("ol.turns li").first).to_contain_text("turn 1:")
        page.get_by_text("Replay this page turn by turn").click()
        page.locator("#next-turn").click()
        expect(page.locator("ol.turns li")).to_have_count(2)
        expect(page.locator("ol.turns li").last).to_contain_text("turn 2:")
        shot(page, "thread-other-worktree")

        # the agent is done and its worktree removed: its conversation stays readable, marked as removed
        from brain.checkout import read_checkout_id

        key = read_checkout_id(tree / ".brain" / "runtime")
        git(repo, "worktree", "remove", str(tree))
        page.goto(server.url + "/threads")
        gone = page.locator(f"table.removed[data-worktree='{key}']")
        expect(gone).to_contain_text("agent-parser")
        expect(page.locator("h2").filter(has_text="removed worktree")).to_contain_text("last on parser-fix")
        gone.get_by_role("link").first.click()
        expect(page.locator("main p.muted").first).to_contain_text("In removed worktree wt-parser (last on parser-fix)")
        expect(page.locator("ol.turns")).to_contain_text("turn 60:")
        expect(page.locator("aside.handoff .md")).not_to_be_empty()
        shot(page, "thread-removed-worktree")
