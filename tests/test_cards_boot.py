"""Boot slots for cards and decisions: the task module's card, its dependencies, staleness, cuts."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def write(repo, rel, text):
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make(brain):
    repo = brain.repo
    write(repo, "api/__init__.py", "from core import load\nfrom util import fmt\nfrom util import pad\n\ndef serve(port: int) -> None:\n    load(); fmt()\n")
    write(repo, "api/views.py", "import core\n\ndef index():\n    return core.load()\n")
    write(repo, "core/__init__.py", '"""Core."""\n\ndef load() -> dict:\n    """Load everything."""\n    return {}\n')
    write(repo, "util/__init__.py", "def fmt(x: str) -> str:\n    return x\n\ndef pad(x: str) -> str:\n    return x\n")
    brain.map()
    brain.report_done("core", how_to_use="Call load() once at start.\n")
    write(brain.dir, "contracts/core.yml", "exposes: [load, save]\n")
    brain.map()


def test_boot_serves_full_card_and_dependency_integration_parts(brain):
    make(brain)
    result = brain.boot("add a route", module="api", record=False)
    text = result.text
    assert "## Module card: `api`" in text and "`serve(port: int) -> None`" in text
    assert "STALE" not in text
    dep = text[text.index("## Dependency `core`"):]
    assert "`load() -> dict` — Load everything." in dep
    assert "Call load() once at start." in dep
    assert "**declared but missing in code**: `save`" in dep
    assert "### Files" not in dep  # dependencies carry only exposes, how to use, contract
    sources = [s["source"] for s in result.sections if s["slot"] == "cards"]
    assert sources == [".brain/modules/api.md", ".brain/modules/core.md#integration", ".brain/modules/util.md#integration"]
    assert "api/views.py" in result.files and "core/__init__.py" in result.files
    assert "<!-- brain:" not in text


def test_stale_card_is_marked(brain):
    make(brain)
    write(brain.repo, "core/__init__.py", "def load(fast: bool) -> dict:\n    return {}\n")
    text = brain.boot(module="api", record=False).text
    assert "## Module card: `api`" in text and "## Module card: `api` — STALE" not in text
    assert "## Dependency `core`: exposes, how to use, contract — STALE" in text


def test_dependencies_cut_by_budget_are_declared(brain):
    make(brain)
    write(brain.repo, "util/__init__.py", "".join(f"def helper_{i}(value_{i}: str, other_{i}: int = {i}) -> str:\n"
                                                  f"    '''Helper number {i} does things.'''\n    return value_{i}\n"
                                                  for i in range(120)))
    brain.map()
    full = brain.boot(module="api", record=False, budget=100000)
    small = brain.boot(module="api", record=False, budget=1500)
    assert any(s["source"] == ".brain/modules/util.md#integration" for s in full.sections)
    omitted = {o.source for o in small.omitted}
    assert ".brain/modules/util.md#integration" in omitted
    assert "brain read modules/util.md" in small.text and small.tokens <= 1500


def test_missing_card_and_unknown_module(brain):
    write(brain.repo, "lib/__init__.py", "X = 1\n")
    text = brain.boot(module="lib", record=False).text
    assert "No card for `lib` yet" in text
    assert "## Module card" not in brain.boot(record=False).text


def test_decisions_slot_and_cli(brain):
    make(brain)
    brain.new_decision("Cache core loads in memory", modules=["core"], status="accepted")
    brain.new_decision("Serve the api with uvicorn", modules=["api"])
    brain.new_decision("Unrelated logging policy")
    text = brain.boot("speed up core loading", module="api", record=False).text
    part = text[text.index("## Decisions that bear on this task"):]
    assert "Serve the api with uvicorn" in part and "Unrelated logging policy" not in part
    env = {**os.environ}
    out = subprocess.run([sys.executable, "-m", "brain", "decisions", "--module", "core", "--json"], cwd=brain.repo,
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0
    assert [d["number"] for d in json.loads(out.stdout)] == [1]


def test_dependency_exposes_keeps_only_the_modules_used(brain):
    repo = brain.repo
    write(repo, "app/__init__.py", "from lib import alpha\nfrom lib.beta import thing\n\ndef run() -> None:\n    alpha.go(); thing()\n")
    write(repo, "lib/__init__.py", "")
    write(repo, "lib/alpha.py", "def go() -> None:\n    '''Go now.'''\n")
    write(repo, "lib/beta.py", "def thing() -> int:\n    return 1\n")
    write(repo, "lib/gamma.py", "def unused_helper() -> str:\n    return ''\n")
    brain.map()
    text = brain.boot(module="app", record=False).text
    dep = text[text.index("## Dependency `lib`"):]
    assert "### Exposes (the parts used)" in dep
    assert "`go() -> None` — Go now." in dep and "`thing() -> int`" in dep
    assert "unused_helper" not in dep and "Also exposes (not used here): `lib.gamma`" in dep
    assert "brain:uses" not in text


def test_module_given_as_a_file_path(brain):
    make(brain)
    text = brain.boot(module="core/__init__.py", record=False).text
    assert "## Module card: `core`" in text


def test_inferred_module_is_said_so():
    from brain.boot.parts import BootRequest
    from brain.boot.slots import cards as slot

    class FakeBrain:  # only what load_card needs is never reached: no module means no part
        pass

    assert slot.collect(FakeBrain(), BootRequest(module=None)) == []
    assert "module_inferred" in BootRequest._fields


def test_inferred_module_title(brain):
    from brain.boot.parts import BootRequest
    from brain.boot.slots import cards as slot

    make(brain)
    parts = slot.collect(brain, BootRequest(module="api", module_inferred=True))
    assert parts[0].title == "Module card: `api` (inferred from the task)"


def test_dependency_exposing_nothing_spends_no_boot_budget(brain):
    """A Rust crate-private module (only `pub(crate)` items) exposes nothing: the boot skips it as a dependency part,
    unless a human wrote how to use it."""
    import pytest

    pytest.importorskip("tree_sitter_rust")
    write(brain.repo, "Cargo.toml", '[package]\nname = "shop"\nversion = "0.1.0"\n')
    write(brain.repo, "src/lib.rs", "pub mod orders;\nmod util;\n")
    write(brain.repo, "src/orders/mod.rs", "use crate::util::helpers::fmt_id;\n\n/// Places an order.\npub fn place() -> String { fmt_id(1) }\n"
                                            + "\n".join(f"pub fn extra_{i}() {{}}" for i in range(200)) + "\n")
    write(brain.repo, "src/util/mod.rs", "pub(crate) mod helpers;\n")
    write(brain.repo, "src/util/helpers.rs", "pub(crate) fn fmt_id(n: u32) -> String { n.to_string() }\n"
                                               + "\n".join(f"pub(crate) fn helper_{i}() {{}}" for i in range(200)) + "\n")
    brain.settings.values["cards.split_bytes"] = 2000
    brain.settings.values["cards.split_min_bytes"] = 100
    brain.map()
    card_text = (brain.dir / "modules" / "src" / "orders.md").read_text()
    assert "- `src/util`" in card_text  # the dependency is real and named on the card
    sources = [s["source"] for s in brain.boot("fix place", module="src/orders", record=False).sections if s["slot"] == "cards"]
    assert sources == [".brain/modules/src/orders.md"]
    brain.report_done("src/util", how_to_use="fmt_id pads nothing.\n")
    sources = [s["source"] for s in brain.boot("fix place", module="src/orders", record=False).sections if s["slot"] == "cards"]
    assert sources == [".brain/modules/src/orders.md", ".brain/modules/src/util.md#integration"]


def _cli(repo, *args):
    return subprocess.run([sys.executable, "-m", "brain", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_an_unknown_module_boots_without_a_card_and_names_a_command_that_works(brain):
    """`brain boot --module nosuch` used to advise `brain map --module nosuch`, which fails (not found). A boot
    must not fail on a typo (the session still needs now.md): the manifest names the module, why, and a command
    that works; a real module without a card yet is advised its `brain map --module`, which works."""
    write(brain.repo, "api/__init__.py", "def serve() -> None:\n    pass\n")
    write(brain.repo, "core/__init__.py", "def load() -> dict:\n    return {}\n")
    for given, close in (("nosuch", []), ("ap", ["api"])):
        out = _cli(brain.repo, "boot", "--module", given, "--json")
        assert out.returncode == 0, out.stderr
        boot = json.loads(out.stdout)
        assert boot["sections"][0]["source"] == "now.md"  # the boot itself is whole
        (entry,) = [o for o in boot["omitted"] if o["source"] == f"module {given}"]
        assert entry["reason"] == "unknown_module"
        assert all(f"`{name}`" in entry["detail"] for name in close)
        fetched = _cli(brain.repo, *entry["fetch"].split()[1:])
        assert entry["fetch"].startswith("brain ") and fetched.returncode == 0, fetched.stderr
        assert {"api", "core"} <= {line.split()[0] for line in fetched.stdout.splitlines() if line.strip()}
    out = _cli(brain.repo, "boot", "--module", "api", "--json")  # a module, no card yet
    boot = json.loads(out.stdout)
    assert out.returncode == 0 and not [o for o in boot["omitted"] if o["reason"] == "unknown_module"]
    (advice,) = [s for s in boot["sections"] if s["slot"] == "cards"]
    assert advice["source"] == "module api" and "`brain map --module api`" in boot["text"]
    assert _cli(brain.repo, "map", "--module", "api").returncode == 0
    boot = json.loads(_cli(brain.repo, "boot", "--module", "api", "--json").stdout)
    assert [s["source"] for s in boot["sections"] if s["slot"] == "cards"] == [".brain/modules/api.md"]


def test_an_inferred_module_whose_cut_is_empty_gets_its_whole_card_with_its_staleness(brain, monkeypatch):
    """The first read of an inferred module's card skips its staleness (the cut checks its own cards'); when
    the cut has nothing, the whole card is read again with it."""
    from brain.boot.parts import BootRequest
    from brain.boot.slots import cards as slot

    make(brain)
    write(brain.repo, "api/__init__.py", "def serve(port: int, host: str) -> None:\n    pass\n")
    monkeypatch.setattr(slot, "_cut_to_ranking", lambda *_: [])
    request = BootRequest(task="serve on a port", module="api", role=None, session=None, budget=8000,
                          module_inferred=True)
    parts = slot.collect(brain, request)
    assert parts[0].title == "Module card: `api` (inferred from the task) — STALE: the code changed since this card " \
                             "was built (`brain map --module api`)"
