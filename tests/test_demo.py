"""`brain demo`: the product on a generated project, in seconds, nothing written outside its folder."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


def _tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


def test_demo_shows_card_ranked_boot_and_overlap_inside_its_folder(tmp_path, brain_home):
    home = tmp_path / "user-home"
    home.mkdir()
    folder = tmp_path / "demo"
    before = _tree(brain_home)
    out = subprocess.run([sys.executable, "-m", "brain", "demo", "--dir", str(folder), "--json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["card"] == "modules/shop.md" and (folder / "shop/.brain/modules/shop.md").is_file()
    assert data["boot"]["files"][0] == "shop/pricing.py" and "apply_discount" in data["boot"]["functions"]
    assert data["boot"]["tokens"] <= data["boot"]["budget"]
    assert data["overlaps"] and data["overlaps"][0]["item"] == "shop/pricing.py"
    assert data["brain_home"] == str(folder / "home")
    assert _tree(home) == [] and _tree(brain_home) == before  # nothing outside the demo's folder
    again = subprocess.run([sys.executable, "-m", "brain", "demo", "--dir", str(folder)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "empty folder" in again.stderr


def test_demo_ui_serves_the_demo_brain(tmp_path):
    pytest.importorskip("uvicorn")
    proc = subprocess.Popen([sys.executable, "-m", "brain", "demo", "--dir", str(tmp_path / "d"), "--ui"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        selector = selectors.DefaultSelector()
        selector.register(proc.stderr, selectors.EVENT_READ)
        url, deadline = None, time.monotonic() + 90
        while url is None and time.monotonic() < deadline:  # bounded wait for the server's own announcement
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stderr.readline()
            if not line:
                break
            if "serving" in line and "http://" in line:
                url = line.split("http://", 1)[1].strip()
        assert url, "the demo's UI did not announce its address"
        with urllib.request.urlopen(f"http://{url}claims", timeout=30) as page:
            body = page.read().decode()
        assert "shop/pricing.py" in body
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not _processes_naming(tmp_path / "d"), "stopping `brain demo --ui` left its UI server running"


def _processes_naming(folder) -> list[int]:
    """Live processes whose command line names the folder (Linux /proc; empty elsewhere)."""
    found = []
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return found
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder).encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
