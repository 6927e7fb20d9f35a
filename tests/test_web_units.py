"""Pure parts of the web UI: sanitizing markdown, highlighting, CSRF/Origin/Host rules and the
fast overlap board (property-tested against the coordinator). The thread viewer's pages are the
log library's (tests/test_log_pages.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("markdown_it")

from brain.coord.model import ClaimInfo
from brain.coord.overlap import normalize_item, normalized_overlap
from brain.web import security
from brain.coord.overlap import literal_key, overlapping_pairs
from brain.web.render import highlight, render_markdown


# -- markdown -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("evil", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<iframe src='http://evil'></iframe>",
    "<a href='javascript:alert(1)'>x</a>",
    "<div onclick=\"alert(1)\">x</div>",
])
def test_raw_html_is_shown_as_text(evil):
    html = str(render_markdown(f"# Note\n\n{evil}\n"))
    assert "<script" not in html and "<img" not in html and "<iframe" not in html and "<div" not in html
    assert "<a href" not in html
    assert "&lt;" in html


def test_dangerous_link_targets_are_not_links():
    html = str(render_markdown("[a](javascript:alert(1)) [b](vbscript:x) [c](https://example.com/ok)"))
    assert "javascript:" not in html.split("href=")[-1] or 'href="javascript' not in html
    assert 'href="javascript' not in html and 'href="vbscript' not in html
    assert 'href="https://example.com/ok"' in html


def test_markdown_renders_tables_and_code():
    html = str(render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n<b>x</b>\n```\n"))
    assert "<table>" in html and "&lt;b&gt;x&lt;/b&gt;" in html


@given(st.text(max_size=300))
@settings(max_examples=200, deadline=None)
def test_no_input_produces_a_tag_it_did_not_render_itself(text):
    html = str(render_markdown(text))
    for tag in ("<script", "<img", "<iframe", "<style", "<svg", "<object", "<input", "<form"):
        assert tag not in html.lower()


# -- highlight ----------------------------------------------------------------------------------------------
def test_highlight_escapes_then_marks():
    out = str(highlight("Login <b>tokens</b> rotate; LOGIN again", ["login", "tokens"]))
    assert out == ("<mark>Login</mark> &lt;b&gt;<mark>tokens</mark>&lt;/b&gt; rotate; <mark>LOGIN</mark> again")
    assert str(highlight("<script>", [])) == "&lt;script&gt;"


@given(st.text(max_size=80), st.lists(st.text(min_size=1, max_size=5), max_size=3))
@settings(max_examples=200, deadline=None)
def test_highlight_never_lets_markup_through(text, terms):
    out = str(highlight(text, terms))
    stripped = out.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in stripped and ">" not in stripped


# -- security -----------------------------------------------------------------------------------------------
def test_tokens_are_bound_to_cookie_and_secret():
    secret, cookie = security.new_secret(), security.new_cookie()
    token = security.token_for(secret, cookie)
    assert security.token_ok(secret, cookie, token)
    assert not security.token_ok(secret, security.new_cookie(), token)
    assert not security.token_ok(security.new_secret(), cookie, token)
    assert not security.token_ok(secret, None, token) and not security.token_ok(secret, cookie, None)
    assert not security.token_ok(secret, cookie, "")


@pytest.mark.parametrize("origin,referer,host,ok", [
    ("http://127.0.0.1:8766", None, "127.0.0.1:8766", True),
    (None, "http://127.0.0.1:8766/claims", "127.0.0.1:8766", True),
    ("http://127.0.0.1:9999", None, "127.0.0.1:8766", False),
    ("http://evil.example", "http://127.0.0.1:8766/", "127.0.0.1:8766", False),
    ("null", None, "127.0.0.1:8766", False),
    (None, None, "127.0.0.1:8766", False),
    ("file://", None, "127.0.0.1:8766", False),
    ("http://127.0.0.1:8766", None, None, False),
])
def test_origin_rule(origin, referer, host, ok):
    assert security.origin_ok(origin, referer, host) is ok


@pytest.mark.parametrize("host,ok", [
    ("127.0.0.1:8766", True), ("localhost", True), ("[::1]:80", True), ("LOCALHOST:1", True),
    ("evil.example", False), ("127.0.0.1.evil.example:8766", False), ("", False), (None, False),
])
def test_host_rule(host, ok):
    assert security.host_allowed(host, security.LOOPBACK_HOSTS) is ok
    assert security.host_allowed(host, None) is True


# -- overlaps -----------------------------------------------------------------------------------------------
def test_literal_key():
    assert literal_key("src/auth/**") == ("src", "auth")
    assert literal_key("src/*/login.py") == ("src",)
    assert literal_key("") == ()
    assert literal_key("name:release") == ("\0name", "name:release")


def _all_pairs(claims):
    out = []
    for i, a in enumerate(claims):
        for b in claims[i + 1:]:
            if a.session != b.session and normalized_overlap(a.item, b.item):
                out.append((a.claim, b.claim))
    return out


segment = st.sampled_from(["src", "auth", "a", "b", "login.py", "*", "**", "*.py", "a?", "[ab]", "x[", "name:rel"])
items = st.lists(segment, min_size=0, max_size=4).map(lambda parts: normalize_item("/".join(parts)))


@given(st.lists(st.tuples(st.integers(0, 3), items), max_size=30))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fast_overlaps_equal_every_pair_compared(rows):
    claims = [ClaimInfo(i + 1, f"s{s}", item, i + 1, 0.0, 1.0, "held") for i, (s, item) in enumerate(rows)]
    got = [(a.claim, b.claim) for a, b in overlapping_pairs(claims)]
    assert got == _all_pairs(claims)


def test_board_overlaps_match_the_coordinator(brain):
    from brain.web.overlaps import board_overlaps

    c = brain.coord
    s = [c.start_session(r).id for r in ("a", "b", "c")]
    for i, item in enumerate(["src/auth/**", "src/auth/login.py", "src/*/login.py", "docs", "docs/x.md",
                              "name:release", "name:release", "src/billing", "**/*.md"]):
        c.claim(s[i % 3], item)
    c.decide_overlap(1, 2, "a keeps it")
    expected = [(o.a.claim, o.b.claim, o.decision) for o in c.overlaps()]
    assert expected and [(o.a.claim, o.b.claim, o.decision) for o in board_overlaps(brain)] == expected
