"""Territories (scribes): each memory area has one owning role; other roles are refused, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import brain as brainlib
from brain.errors import PathEscape, PathRefused, SettingsError, TerritoryRefused
from brain.security.territories import Territories, glob_regex

TERRITORIES = """version: 1
territories:
  decisions/**: architect
  notes/**: lead
  notes/backend: backend
  now.md: lead
  kernel:agents/*.md: kernel-scribe
"""


def snapshot(*roots):
    """Every file (path -> bytes) under the roots, runtime/ excepted: what a refusal must leave unchanged."""
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "runtime" not in path.relative_to(root).parts:
                out[str(path)] = path.read_bytes()
    return out


@pytest.fixture
def scribed(brain):
    (brain.dir / "brain.yml").write_text(TERRITORIES)
    return brainlib.open_brain(brain.repo)


segment = st.text(alphabet="abcxyz_-", min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(area=st.lists(segment, min_size=1, max_size=3), rest=st.lists(segment, max_size=3), sibling=segment)
def test_plain_area_covers_itself_and_below_never_a_sibling(area, rest, sibling):
    base = "/".join(area)
    rx = glob_regex(base)
    assert rx.match(base) and rx.match("/".join([base, *rest]))
    assert not rx.match(base + sibling)  # notes/back never covers notes/backend
    other = sibling + "/" + base
    assert bool(rx.match(other)) == (other == base or other.startswith(base + "/"))


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(segment, min_size=1, max_size=4))
def test_glob_stars(parts):
    path = "/".join(parts)
    assert glob_regex("**").match(path)
    assert bool(glob_regex("*").match(path)) == (len(parts) == 1)
    assert bool(glob_regex(f"{parts[0]}/**").match(path)) == (len(parts) > 1)


def test_most_specific_area_wins_and_layers_are_apart():
    t = Territories.parse({"notes/**": "lead", "notes/backend/**": "backend", "kernel:agents/**": "k"})
    assert t.owner_of("notes/x.md").owner == "lead"
    assert t.owner_of("notes/backend/api.md").owner == "backend"
    assert t.owner_of("agents/a.md") is None and t.owner_of("agents/a.md", "kernel").owner == "k"
    assert t.allows("notes/x.md", None) == (True, t.owner_of("notes/x.md"))  # no role: not checked
    with pytest.raises(SettingsError):
        Territories.parse({"../out/**": "x"})


def test_other_role_is_refused_with_the_owner_and_nothing_is_written(scribed):
    scribed.write("notes/backend/api.md", "v1\n", role="backend")
    before = snapshot(scribed.dir, scribed.layers.home)
    for path, owner in (("notes/backend/api.md", "backend"), ("notes/backend/new.md", "backend"),
                        ("decisions/0001-x.md", "architect"), ("now.md", "lead"), ("notes/other.md", "lead")):
        with pytest.raises(TerritoryRefused) as err:
            scribed.write(path, "intruder\n", role="frontend")
        assert (err.value.owner, err.value.role, err.value.path) == (owner, "frontend", path)
        assert "signal" in err.value.signal and err.value.exit_code == 8
    with pytest.raises(TerritoryRefused) as err:
        scribed.write("agents/reviewer.md", "x", layer="kernel", role="lead")
    assert err.value.owner == "kernel-scribe" and err.value.layer == "kernel"
    assert snapshot(scribed.dir, scribed.layers.home) == before


def test_owners_unowned_areas_and_unnamed_writers_pass(scribed):
    assert scribed.write("notes/backend/api.md", "ok\n", role="backend").text == "ok\n"
    assert scribed.write("decisions/0002-y.md", "ok\n", role="architect")
    assert scribed.write("focus.md", "anyone\n", role="frontend")  # no area covers focus.md
    assert scribed.write("now.md", "a person at the CLI\n")  # role None: not checked
    assert scribed.write("agents/reviewer.md", "k\n", layer="kernel", role="kernel-scribe")


def test_no_territories_means_every_role_writes(brain):
    assert brain.write("decisions/0001-x.md", "x\n", role="anyone")
    assert not brain.territories


def test_symlink_into_a_territory_and_escapes_are_refused(scribed, tmp_path):
    (scribed.dir / "decisions").mkdir(exist_ok=True)
    (scribed.dir / "shortcut").symlink_to(scribed.dir / "decisions")
    before = snapshot(scribed.dir)
    with pytest.raises(PathRefused) as err:  # the path rule refuses every symlink before territories are asked
        scribed.write("shortcut/0003-z.md", "x", role="frontend")
    assert err.value.reason == "symlink"
    with pytest.raises(PathEscape):
        scribed.write("../outside.md", "x", role="architect")
    assert snapshot(scribed.dir) == before and not (scribed.repo / "outside.md").exists()


def test_refusal_names_the_owners_live_session(scribed):
    sid = scribed.coord.start_session("backend").id
    with pytest.raises(TerritoryRefused) as err:
        scribed.write("notes/backend/x.md", "x", role="frontend")
    assert err.value.owner_sessions == [sid] and sid in err.value.signal


def test_cli_role_refusal_exit_code_and_json(scribed, repo):
    before = snapshot(scribed.dir)
    out = subprocess.run([sys.executable, "-m", "brain", "write", "--path", "decisions/0009-x.md", "--role", "dev",
                          "--json"], cwd=repo, input="x\n", capture_output=True, text=True, timeout=60, env=os.environ)
    assert out.returncode == 8 and out.stdout == ""
    import json

    err = json.loads(out.stderr)
    assert err["error"] == "territory" and err["owner"] == "architect" and err["role"] == "dev"
    assert snapshot(scribed.dir) == before


def test_mcp_write_uses_the_connection_role(scribed, monkeypatch):
    from brain.mcp.tools import collect

    write = collect().tools["brain_write"].fn
    scribed.env["BRAIN_ROLE"] = "frontend"
    with pytest.raises(TerritoryRefused):
        write(scribed, path="notes/backend/x.md", text="x")
    scribed.env["BRAIN_ROLE"] = "backend"
    assert write(scribed, path="notes/backend/x.md", text="x").data["path"] == "notes/backend/x.md"
