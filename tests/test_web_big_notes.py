"""Big notes in the web UI: rendering is bounded and cached (brain.web.render).

No timing asserts: the bound and the cache are checked directly (what is rendered, the
cache's hit count); the time is in bench/bench_web.py."""

from __future__ import annotations

import pytest

BASE = "http://127.0.0.1:8766"


def big_note(kb: int) -> str:
    paragraph = "Tokens rotate **daily**; see `auth/login.py` and [the runbook](https://example.invalid/rb).\n\n"
    parts = ["# Big note\n\n"]
    size, i = 0, 0
    while size < kb * 1024:
        text = f"## Part {i}\n\n" + paragraph * 5
        parts.append(text)
        size += len(text)
        i += 1
    parts.append("THE-LAST-LINE\n")
    return "".join(parts)


@pytest.fixture
def client(brain):
    from starlette.testclient import TestClient

    from brain.web import create_app
    from brain.web.render import RENDER_CACHE

    RENDER_CACHE.clear()
    with TestClient(create_app(brain, warm=False), base_url=BASE) as c:
        yield c, brain


def test_a_300kb_note_renders_only_its_head_with_a_raw_link(client):
    from brain.web.render import RENDER_MAX_BYTES

    c, b = client
    (b.dir / "notes" / "big.md").write_text(big_note(300))  # above limits.write_bytes: as a clone may ship it
    page = c.get("/memory/doc/notes/big.md")
    assert page.status_code == 200
    assert "THE-LAST-LINE" not in page.text  # the tail is not rendered...
    assert 'href="/memory/raw/notes/big.md"' in page.text and "of 301 KB are shown" in page.text
    assert page.text.count("<h2>") <= RENDER_MAX_BYTES // 400  # ...only what fits in the bound
    raw = c.get("/memory/raw/notes/big.md")  # ...and the whole file is one click away
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/plain")
    assert raw.text == b.read("notes/big.md").text and raw.text.endswith("THE-LAST-LINE\n")
    assert raw.headers["x-content-type-options"] == "nosniff"


def test_a_page_shown_again_is_served_from_the_cache(client):
    from brain.web.render import RENDER_CACHE

    c, b = client
    b.write("notes/big.md", big_note(120))
    assert c.get("/memory/doc/notes/big.md").status_code == 200
    misses, hits = RENDER_CACHE.misses, RENDER_CACHE.hits
    again = c.get("/memory/doc/notes/big.md")
    assert again.status_code == 200 and "Part 1" in again.text
    assert RENDER_CACHE.hits == hits + 1 and RENDER_CACHE.misses == misses
    b.write("notes/big.md", big_note(120).replace("Part 1\n", "Part one\n"))  # new content: rendered afresh
    assert "Part one" in c.get("/memory/doc/notes/big.md").text
    assert RENDER_CACHE.misses == misses + 1


def test_a_small_note_is_rendered_whole(client):
    c, b = client
    b.write("notes/small.md", "# Small\n\nall of it\n\nTHE-LAST-LINE\n")
    page = c.get("/memory/doc/notes/small.md")
    assert "THE-LAST-LINE" in page.text and "/memory/raw/" not in page.text


def test_raw_view_keeps_the_memory_path_rule(client):
    c, _ = client
    assert c.get("/memory/raw/runtime/brain.db").status_code in (400, 404)
    assert c.get("/memory/raw/..%2F..%2Fetc%2Fpasswd").status_code in (400, 404)


def test_the_cache_is_bounded_in_entries_and_bytes():
    from markupsafe import Markup

    from brain.web.render import RenderCache

    cache = RenderCache(entries=3, max_bytes=100)
    for i in range(5):
        cache.put((str(i), None), Markup("x" * 10))
    assert cache.get(("0", None)) is None and cache.get(("4", None)) is not None
    cache.put(("big", None), Markup("y" * 60))
    cache.put(("big2", None), Markup("z" * 60))
    assert cache.get(("big", None)) is None and cache.get(("big2", None)) is not None
    cache.put(("huge", None), Markup("w" * 101))  # larger than the whole cache: not kept
    assert cache.get(("huge", None)) is None
