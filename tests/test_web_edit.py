"""Editing memory in the web UI: now.md, focus.md and notes, saved only over the version the page was opened on."""

from __future__ import annotations

import pytest

import brain as brainlib
from test_web import BASE, token_of

pytest.importorskip("starlette")


@pytest.fixture
def site(repo):
    from starlette.testclient import TestClient

    from brain.web import create_app

    b = brainlib.init(repo)
    b.write("notes/setup.md", "# Setup\n\nInstall uv.\n")
    with TestClient(create_app(b, warm=False), base_url=BASE) as c:
        yield c, b


def _form(c, path):
    page = c.get(f"/memory/edit/{path}")
    assert page.status_code == 200
    import re

    return token_of(page.text), re.search(r'name="hash" value="([0-9a-f]+)"', page.text).group(1), page.text


def test_edit_saves_over_the_version_opened(site):
    c, b = site
    assert 'href="/memory/edit/notes/setup.md"' in c.get("/memory/doc/notes/setup.md").text
    csrf, version, html = _form(c, "notes/setup.md")
    assert "Install uv." in html
    r = c.post("/memory/edit/notes/setup.md", data={"csrf": csrf, "hash": version, "text": "# Setup\r\n\r\nInstall uv and git.\r\n"},
               headers={"Origin": BASE}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/memory/doc/notes/setup.md?saved=")
    assert b.read("notes/setup.md").text == "# Setup\n\nInstall uv and git.\n"
    assert "saved (sha256" in c.get(r.headers["location"]).text


def test_a_file_changed_meanwhile_is_not_overwritten_and_the_typed_text_comes_back(site):
    c, b = site
    csrf, version, _ = _form(c, "now.md")
    b.edit("now.md", "append", value="- written by an agent meanwhile")
    r = c.post("/memory/edit/now.md", data={"csrf": csrf, "hash": version, "text": "# Now\n\nmy typed text\n"},
               headers={"Origin": BASE})
    assert r.status_code == 409
    assert "my typed text" in r.text and "written by an agent meanwhile" in r.text
    assert "written by an agent meanwhile" in b.read("now.md").text and "my typed text" not in b.read("now.md").text
    fresh = b.read("now.md").hash
    assert f'name="hash" value="{fresh}"' in r.text  # saving again from this page merges over the new version


def test_edit_refuses_forgery_and_what_the_ui_does_not_edit(site):
    c, b = site
    csrf, version, _ = _form(c, "notes/setup.md")
    before = b.read("notes/setup.md").text
    forged = c.post("/memory/edit/notes/setup.md", data={"csrf": "0" * 64, "hash": version, "text": "x"},
                    headers={"Origin": BASE})
    cross = c.post("/memory/edit/notes/setup.md", data={"csrf": csrf, "hash": version, "text": "x"},
                   headers={"Origin": "http://evil.example"})
    assert forged.status_code == cross.status_code == 403 and b.read("notes/setup.md").text == before
    b.write("modules/core.md", "# Module core\n")
    assert c.get("/memory/edit/modules/core.md").status_code == 400
    assert c.get("/memory/edit/notes/../brain.yml").status_code in (400, 404)
    assert c.post("/memory/edit/notes/setup.md", data={"csrf": csrf, "text": "x"},
                  headers={"Origin": BASE}).status_code == 400
