"""The web UI: a Starlette app over one opened Brain (server-rendered, htmx for live parts).

``create_app(brain, middleware=..., auth=...)`` is the factory: ``middleware`` is a list
of ``starlette.middleware.Middleware`` placed outermost (team mode adds its bearer-token
layer there), ``auth(request) -> bool`` (sync or async) refuses a request with 401 when
it returns false. Reads go through ``views``; the write actions (overlap decision, signal, a
memory file's edit) are POSTs checked by ``security`` (CSRF token + Origin + Host).
Library calls block (SQLite, PostgreSQL, files), so they run in the thread pool.
"""

from __future__ import annotations

import inspect
import os
import threading
from pathlib import Path
from typing import Awaitable, Callable, Sequence
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import BrainError, InvalidInput, NotFound
from . import security, views
from .render import highlight, render_markdown, terms_of

__all__ = ["create_app", "HumanSession", "PAGE_SIZE", "HUMAN_ROLE"]

HERE = Path(__file__).parent
PAGE_SIZE = 50
HUMAN_ROLE = "human"  # under tokens, only tokens of this role may use the web UI (it is the people's surface)
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'")


class HumanSession:
    """The person at the browser as a coordination session (role ``human``), started at their first write.

    Signals need a sender; a human decision is recorded under it too. It ends when the server stops.
    """

    def __init__(self, brain, role: str = "human") -> None:
        self.brain = brain
        self.role = role
        self.id: str | None = None
        self._lock = threading.Lock()

    def ensure(self) -> str:
        with self._lock:
            if self.id is not None:
                try:
                    self.brain.coord.heartbeat(self.id)
                    return self.id
                except NotFound:  # ended by someone else: start afresh
                    self.id = None
            self.id = self.brain.coord.start_session(self.role, pid=os.getpid()).id
            return self.id

    def end(self) -> None:
        with self._lock:
            if self.id is not None:
                try:
                    self.brain.coord.end_session(self.id)
                except BrainError:
                    pass
                self.id = None


class _Guard:
    """ASGI middleware: auth hook, Host check, the CSRF cookie, and security headers on every response."""

    def __init__(self, app, *, secret: bytes, allowed_hosts: frozenset[str] | None,
                 auth: Callable[[Request], bool | Awaitable[bool]] | None) -> None:
        self.app = app
        self.secret = secret
        self.allowed_hosts = allowed_hosts
        self.auth = auth

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        if not security.host_allowed(request.headers.get("host"), self.allowed_hosts):
            return await PlainTextResponse("unknown host", status_code=421)(scope, receive, send)
        if self.auth is not None:
            ok = self.auth(request)
            if inspect.isawaitable(ok):
                ok = await ok
            if not ok:
                return await PlainTextResponse("unauthorized", status_code=401,
                                               headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
        from ..team.identity import principal_of_scope

        principal = principal_of_scope(scope)
        if principal is not None and principal.session_role != HUMAN_ROLE and request.url.path != "/healthz":
            # the UI shows every conversation log and acts for people (signals, overlap decisions): an
            # agent's token reads and acts through MCP only, as its own session
            return await PlainTextResponse(f"token {principal.name!r} has role {principal.session_role!r}: the web UI "
                                           f"is for tokens created with --role {HUMAN_ROLE}",
                                           status_code=403)(scope, receive, send)
        cookie = request.cookies.get(security.COOKIE)
        fresh = not cookie or len(cookie) > 100
        if fresh:
            cookie = security.new_cookie()
        scope.setdefault("state", {})["csrf_cookie"] = cookie
        scope["state"]["csrf_token"] = security.token_for(self.secret, cookie)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                            (b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin")]
                if fresh:
                    headers.append((b"set-cookie", f"{security.COOKIE}={cookie}; Path=/; HttpOnly; "
                                                   f"SameSite=Strict".encode()))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_with_headers)


EDITABLE_FOLDERS = ("notes/", "workflows/", "agents/")  # cards, decisions and handoffs have their own commands


def _editable(path: str) -> str:
    """``path`` when the UI edits it (now.md, focus.md, notes, workflows, agent profiles), else InvalidInput:
    the write path then normalizes and checks it like any other."""
    rel = (path or "").strip().lstrip("/")
    if rel in ("now.md", "focus.md") or (rel.endswith(".md") and rel.startswith(EDITABLE_FOLDERS)):
        return rel
    raise InvalidInput(f"{rel or 'that path'} is not edited in the web UI", field="path",
                       hint="the UI edits now.md, focus.md and notes; cards come from `brain map`, decisions "
                            "from `brain decision`")


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["markdown"] = render_markdown
    env.filters["urlq"] = lambda s: quote(str(s), safe="")
    env.filters["urlpath"] = lambda s: quote(str(s), safe="/")
    env.filters["when"] = views.stamp
    return env


def create_app(brain, *, middleware: Sequence = (), auth: Callable[[Request], bool | Awaitable[bool]] | None = None,
               allowed_hosts: Sequence[str] | None = tuple(security.LOOPBACK_HOSTS), poll_seconds: float = 2.0,
               warm: bool = True) -> Starlette:
    """The UI app over ``brain``. ``allowed_hosts=None`` accepts any Host header (only behind a proxy that checks)."""
    env = _env()
    secret = security.new_secret()
    human = HumanSession(brain)
    usage = views.UsageCache()
    hosts = (allowed_hosts if allowed_hosts is None or hasattr(allowed_hosts, "allows")  # a HostAllowList
             else frozenset(h.lower() for h in allowed_hosts))

    def render(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
        context.update(request=request, csrf=request.state.csrf_token, poll=f"every {poll_seconds:g}s",
                       brain_name=brain.name, section=context.get("section", ""))
        return HTMLResponse(env.get_template(template).render(**context), status_code=status)

    def partial(request: Request) -> bool:
        return request.headers.get("hx-request") == "true" and request.headers.get("hx-history-restore-request") != "true"

    async def check_post(request: Request):
        """The form of a POST that passed the CSRF token and Origin checks, else an error response."""
        if not security.origin_ok(request.headers.get("origin"), request.headers.get("referer"),
                                  request.headers.get("host")):
            return None, PlainTextResponse("cross-site request refused (Origin)", status_code=403)
        form = await request.form()
        token = request.headers.get(security.HEADER) or form.get(security.FIELD)
        if not security.token_ok(secret, request.cookies.get(security.COOKIE), token):
            return None, PlainTextResponse("cross-site request refused (CSRF token)", status_code=403)
        return form, None

    # -- pages ------------------------------------------------------------------------------------------------
    def acting_session(request: Request) -> str:
        """Who a write of the UI acts as: the signed-in token's own session (each person is told apart,
        every action attributable), or, without tokens, the local person's human session."""
        from ..team.identity import bound_session, principal_of_scope

        principal = principal_of_scope(request)
        return bound_session(brain, principal) if principal is not None else human.ensure()

    async def home(request):
        return RedirectResponse("/work", status_code=302)

    async def health(request):
        return PlainTextResponse("ok")

    async def work(request):
        data = await run_in_threadpool(views.work_state, brain)
        template = "_work.html" if partial(request) else "work.html"
        return render(request, template, section="work", **data)

    async def work_fragment(request):
        if human.id is not None:  # an open tab keeps the human's session alive
            await run_in_threadpool(human.ensure)
        data = await run_in_threadpool(views.work_state, brain)
        return render(request, "_work.html", **data)

    async def claims(request):
        session = request.query_params.get("session") or None
        page = _int(request.query_params.get("page"), 1, "page")
        data = await run_in_threadpool(lambda: views.claims_board(brain, session=session, page=page))
        template = "_claims.html" if request.url.path.startswith("/fragments") else "claims.html"
        return render(request, template, section="claims", **data)

    async def decide_form(request):
        a, b = _int(request.query_params.get("a"), 0, "a"), _int(request.query_params.get("b"), 0, "b")
        return render(request, "_decide.html", a=a, b=b, item_a=request.query_params.get("ia", ""),
                      item_b=request.query_params.get("ib", ""))

    async def decide(request):
        form, refused = await check_post(request)
        if refused:
            return refused
        a, b = _int(form.get("a"), 0, "a"), _int(form.get("b"), 0, "b")
        text = (form.get("decision") or "").strip()
        if not text:
            raise InvalidInput("write the decision", field="decision")

        def record():
            by = acting_session(request)
            return brain.coord.decide_overlap(a, b, text, by=by)

        await run_in_threadpool(record)
        if partial(request):
            data = await run_in_threadpool(lambda: views.claims_board(brain))
            return render(request, "_claims.html", flash=f"Decision recorded for claims {a} and {b}.", **data)
        return RedirectResponse("/claims", status_code=303)

    async def signals(request):
        session = request.query_params.get("session") or None
        data = await run_in_threadpool(lambda: views.recent_signals(brain, session=session))
        if request.url.path.startswith("/fragments"):
            return render(request, "_signals.html", **data)
        targets = await run_in_threadpool(
            lambda: [s.id for s in brain.coord.sessions()] if brain.has_coordination_store() else [])
        return render(request, "signals.html", section="signals", targets=targets, human=human.id, **data)

    async def send_signal(request):
        form, refused = await check_post(request)
        if refused:
            return refused
        target = (form.get("target") or "").strip()
        body = form.get("body") or ""
        kind = (form.get("kind") or "note").strip() or "note"

        def send():
            return brain.coord.signal(acting_session(request), target, body, kind=kind)

        result = await run_in_threadpool(send)
        if partial(request):
            data = await run_in_threadpool(lambda: views.recent_signals(brain))
            return render(request, "_signals.html", flash=f"Signal sent to {len(result['recipients'])} "
                                                          f"recipient(s).", **data)
        return RedirectResponse("/signals", status_code=303)

    async def threads(request):
        data = await run_in_threadpool(views.thread_list, brain)
        return render(request, "threads.html", section="threads", **data)

    async def pair(request):
        a, b = request.query_params.get("a", "").strip(), request.query_params.get("b", "").strip()
        if not a or not b or a == b:
            raise InvalidInput("pick two different parties", field="pair")
        return RedirectResponse(f"/threads/{quote(brain.thread_between(a, b), safe='')}", status_code=303)

    async def thread(request):
        name = request.path_params["thread"]
        page = request.query_params.get("page")
        number = None if page in (None, "", "last") else _int(page, 1, "page")
        upto = request.query_params.get("upto")
        upto = None if upto is None else _int(upto, 0, "upto")  # checked before any lookup: 400, not 404
        worktree = request.query_params.get("worktree") or None

        def load():
            if worktree is not None:  # another worktree's log, looked up by git's id (never a path)
                from ..log.worktrees import worktree_log

                other = worktree_log(brain, worktree)
                if other is None:
                    raise NotFound(f"worktree {worktree!r} with conversation logs")
                where = f"{'removed worktree' if other.removed else 'worktree'} {other.name}" \
                    + (f" (last on {other.branch})" if other.removed and other.branch else "")
                return other.log.page(name, number, PAGE_SIZE), other.handoff(name), other.log.parties(name), where
            found = brain.conversations.page(name, number, PAGE_SIZE)  # numbered as `brain log` does
            handoff = brain.conversations.handoff(name)
            parties = brain.conversations.log.parties(name)
            return found, handoff.text if handoff else "", parties, None

        found, handoff, parties, where = await run_in_threadpool(load)
        turns = found.turns
        step = None
        if upto is not None:
            step = max(0, min(upto, len(turns)))
            turns = turns[:step]
        first_index = (found.page - 1) * found.size
        base = f"/threads/{quote(name, safe='')}?" + (f"worktree={quote(worktree, safe='')}&" if worktree else "")
        context = dict(section="threads", thread=name, page=found, turns=turns, step=step, first_index=first_index,
                       handoff=handoff or "", parties=parties, worktree=worktree, where=where, base=base,
                       nav=_page_nav(found.page, found.pages))
        return render(request, "_thread.html" if partial(request) else "thread.html", **context)

    async def memory(request):
        data = await run_in_threadpool(views.memory_overview, brain)
        return render(request, "memory.html", section="memory", **data)

    async def card(request):
        data = await run_in_threadpool(views.card_view, brain, request.path_params["module"])
        if data is None:
            raise NotFound(f"card of {request.path_params['module']}")
        return render(request, "card.html", section="memory", card=data)

    async def document(request):
        path = request.path_params["path"]
        doc = await run_in_threadpool(brain.read, path)
        try:
            editable = bool(_editable(doc.path))
        except InvalidInput:
            editable = False
        saved = (request.query_params.get("saved") or "")[:12]
        return render(request, "doc.html", section="memory", path=doc.path, text=doc.text, editable=editable,
                      saved=saved if saved.isalnum() else "")

    async def edit_form(request):
        doc = await run_in_threadpool(brain.read, _editable(request.path_params["path"]))
        return render(request, "edit.html", section="memory", path=doc.path, text=doc.text, hash=doc.hash)

    async def save_document(request):
        """Write the edited text over the version the form was opened on (its hash): a file that changed
        meanwhile is not overwritten; the page comes back with both texts, so nothing typed is lost."""
        from ..errors import Conflict
        from ..team.identity import principal_of_scope

        form, refused = await check_post(request)
        if refused:
            return refused
        path = _editable(request.path_params["path"])
        text = (form.get("text") or "").replace("\r\n", "\n")
        expected = form.get("hash") or ""
        if not expected:
            raise InvalidInput("the form lost the version it was opened on; open the page again", field="hash")
        principal = principal_of_scope(request)
        role = principal.session_role if principal is not None else None  # a local person: as the CLI, unchecked
        try:
            doc = await run_in_threadpool(lambda: brain.write(path, text, expected_hash=expected, role=role,
                                                              reason="edited in the web UI"))
        except Conflict:
            current = await run_in_threadpool(brain.read, path)
            return render(request, "edit.html", status=409, section="memory", path=current.path, text=text,
                          hash=current.hash, theirs=current.text,
                          flash="This file changed since you opened it. Your text is below; the current "
                                "version is beside it. Merge them and save again.")
        return RedirectResponse(f"/memory/doc/{quote(doc.path, safe='/')}?saved={doc.hash[:12]}", status_code=303)

    async def raw_document(request):
        """A memory file as plain text: where a big note's rendering stops, the rest is read here."""
        doc = await run_in_threadpool(brain.read, request.path_params["path"])
        return PlainTextResponse(doc.text)

    async def decisions(request):
        data = await run_in_threadpool(views.decisions_view, brain)
        return render(request, "decisions.html", section="memory", **data)

    async def search(request):
        query = (request.query_params.get("q") or "").strip()
        hits, terms = [], []
        if query:
            hits = await run_in_threadpool(lambda: brain.search(query, limit=30))
            terms = terms_of(query)
        shown = [{**h, "snippet_html": highlight(h.get("snippet", ""), terms),
                  "title_html": highlight(h.get("title", ""), terms)} for h in hits]
        return render(request, "search.html", section="search", query=query, hits=shown)

    async def usage_page(request):
        report = await run_in_threadpool(usage.report, brain)
        return render(request, "usage.html", section="usage", **views.usage_view(report))

    async def usage_chart(request):
        from ..log.stats import render_svg

        report = await run_in_threadpool(usage.report, brain)
        return Response(render_svg(report), media_type="image/svg+xml")

    async def brain_error(request, exc: BrainError):
        from ..errors import BackendError

        # the caller's mistake: 4xx; the server's own store unusable (damaged, unreachable): 503, never a 500 trace
        status = 404 if isinstance(exc, NotFound) else 503 if isinstance(exc, BackendError) else 400
        return render(request, "error.html", status=status, message=str(exc), hint=getattr(exc, "hint", None),
                      kind=exc.kind)

    routes = [
        Route("/", home), Route("/healthz", health),
        Route("/work", work), Route("/fragments/work", work_fragment),
        Route("/claims", claims), Route("/fragments/claims", claims),
        Route("/claims/decide", decide_form, methods=["GET"]), Route("/claims/decide", decide, methods=["POST"]),
        Route("/signals", signals, methods=["GET"]), Route("/signals", send_signal, methods=["POST"]),
        Route("/fragments/signals", signals),
        Route("/threads", threads), Route("/threads/pair", pair), Route("/threads/{thread}", thread),
        Route("/memory", memory), Route("/memory/card/{module:path}", card), Route("/memory/doc/{path:path}", document),
        Route("/memory/raw/{path:path}", raw_document),
        Route("/memory/edit/{path:path}", edit_form, methods=["GET"]),
        Route("/memory/edit/{path:path}", save_document, methods=["POST"]),
        Route("/memory/decisions", decisions), Route("/search", search),
        Route("/usage", usage_page), Route("/usage/chart.svg", usage_chart),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]

    def startup():
        if warm:  # one-time costs off the request path, before the server accepts its first request
            try:  # templates and markdown-it (~0.1 s): so even the first page renders within its budget
                for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
                    env.get_template(name)
                render_markdown("warm")
            except Exception:  # noqa: BLE001 - warming is an optimisation; a failure shows up on the page itself
                pass

            def count_log_lines():  # every thread's line count, in the background: there may be many
                try:
                    for info in brain.conversations.threads():
                        brain.conversations.log.entries(info.thread)
                except Exception:  # noqa: BLE001
                    pass

            threading.Thread(target=count_log_lines, name="brain-ui-warm", daemon=True).start()

    def shutdown():
        human.end()

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app):
        startup()
        try:
            yield
        finally:
            await run_in_threadpool(shutdown)

    from starlette.middleware import Middleware

    stack = [*middleware, Middleware(_Guard, secret=secret, allowed_hosts=hosts, auth=auth)]
    app = Starlette(routes=routes, middleware=stack, exception_handlers={BrainError: brain_error}, lifespan=lifespan)
    app.state.brain = brain
    app.state.human = human
    return app


def _int(value, default: int, field: str) -> int:
    """A query or form integer: ``default`` when absent, 400 (InvalidInput) when not an integer or out of
    bounds (brain.bounds: page numbers within MAX_PAGE, ids within 64 bits; never an OverflowError and a 500)."""
    from ..bounds import MAX_ID, MAX_PAGE, query_int

    bound = MAX_PAGE if field in ("page", "upto") else MAX_ID
    return query_int(value, field, default, low=-bound, high=bound)


def _page_nav(page: int, pages: int) -> list[int | None]:
    """Page numbers to link: the first, the last, and a window around the current one (None = a gap)."""
    wanted = sorted({1, pages, *range(max(1, page - 2), min(pages, page + 2) + 1)})
    out: list[int | None] = []
    for n in wanted:
        if out and out[-1] is not None and n - out[-1] > 1:
            out.append(None)
        out.append(n)
    return out
