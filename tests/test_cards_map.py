"""`brain map` on real files: determinism, incrementality, human sections, contracts, report-done."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.cards import load_card, module_of_path
from brain.cards.markers import END, BEGIN, join_card, parse_card
from brain.errors import InvalidInput, NotFound


def write(repo, rel, text):
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(brain):
    repo = brain.repo
    write(repo, "pyproject.toml", '[project]\nname = "shop"\ndependencies = ["requests>=2"]\n'
                                  '[project.scripts]\nshop = "shop.cli:main"\n')
    write(repo, "shop/__init__.py", '"""The shop."""\nfrom .orders import place_order\n__all__ = ["place_order"]\n')
    write(repo, "shop/orders.py", '"""Orders."""\nimport requests\nfrom billing import charge\n\n'
                                  'def place_order(item: str, qty: int = 1) -> dict:\n    """Place an order."""\n    return charge(qty)\n')
    write(repo, "shop/cli.py", "def main():\n    pass\n")
    write(repo, "shop/broken.py", "def nope(:\n")
    write(repo, "billing/__init__.py", '"""Billing."""\n\ndef charge(amount: int) -> int:\n    """Charge money."""\n    return amount\n')
    write(repo, "billing/api.py", 'from starlette.routing import Route\nroutes = [Route("/invoices", endpoint=lambda r: r, methods=["GET"])]\n')
    return brain


def card_text(brain, module):
    return (brain.dir / "modules" / f"{module}.md").read_text()


def test_map_writes_cards_with_sections(project):
    report = project.map()
    assert sorted(report.written) == ["billing", "shop"]
    shop = card_text(project, "shop")
    assert shop.startswith(BEGIN)
    assert "`place_order(item: str, qty: int = 1) -> dict` — Place an order." in shop
    assert "- `billing` (1 file: `orders.py`; imports `billing`)" in shop
    assert "`requests` — declared (`requests>=2`)" in shop
    assert "`shop` → `shop.cli:main` (console script)" in shop
    assert "not read: `broken.py` (syntax error line 1)" in shop
    assert "`GET /invoices`" in card_text(project, "billing")
    assert report.unread == {"shop": [["shop/broken.py", "syntax error line 1"]]}


def test_same_code_same_bytes_even_without_runtime(project):
    project.map()
    first = {m: card_text(project, m) for m in ("shop", "billing")}
    shutil.rmtree(project.runtime)
    for m in ("shop", "billing"):
        (project.dir / "modules" / f"{m}.md").unlink()
    project.map()
    assert {m: card_text(project, m) for m in ("shop", "billing")} == first
    shutil.rmtree(project.runtime)  # deleting runtime/ loses nothing: the cards still know they are fresh
    report = project.map(check=True)
    assert report.ok and report.unchanged == ["billing", "shop"]


def test_incremental_rebuilds_only_the_changed_module(project):
    project.map()
    assert project.map().written == []
    path = project.repo / "billing/__init__.py"
    path.write_text(path.read_text() + "\ndef refund(amount: int) -> int:\n    return -amount\n")
    check = project.map(check=True)
    assert check.stale == ["billing"] and not check.ok
    report = project.map()
    assert report.written == ["billing"] and report.unchanged == ["shop"]
    assert "`refund(amount: int) -> int`" in card_text(project, "billing")


def test_check_cli_exits_non_zero_and_names_stale_cards(project):
    env = {**os.environ, "BRAIN_HOME": str(project.settings.home)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "brain", *a], cwd=project.repo, capture_output=True, text=True, env=env)
    assert run("map", "--check").returncode == 1  # no cards yet
    assert run("map").returncode == 0
    ok = run("map", "--check", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["stale"] == []
    (project.repo / "shop/cli.py").write_text("def main():\n    return 1\n")
    bad = run("map", "--check")
    assert bad.returncode == 1 and "stale: shop" in bad.stdout
    assert run("map", "--module", "nope").returncode == 5


def test_human_section_survives_regeneration(project):
    project.map()
    path = project.dir / "modules/shop.md"
    human = "Call `place_order` first.\n\n" + END + "\n## How to use\n" + BEGIN + "\n<!-- brain:source sha256:" + "0" * 64 + " files:1 -->\n"
    path.write_text(parse_card(path.read_text()).generated + "\n## How to use\n\n" + human)
    (project.repo / "shop/cli.py").write_text("def main(argv=None):\n    pass\n")
    assert project.map().written == ["shop"]
    assert parse_card(path.read_text()).human == human
    assert "`main(argv=None)`" in path.read_text()


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(human=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).map(lambda s: s) |
       st.lists(st.sampled_from([BEGIN, END, "## How to use", "<!-- brain:source sha256:" + "a" * 64 + " files:2 -->",
                                 "\n", "text", "## Exposes", "\r\n", ""]), min_size=1).map("".join).filter(bool))
def test_any_human_text_round_trips_byte_for_byte(human):
    generated = BEGIN + "\n# Module `m`\n## Exposes\n\nx\n" + END + "\n"
    card = join_card(generated, human)
    parsed = parse_card(card)
    assert parsed.intact and parsed.generated == generated
    assert parsed.human == human
    # and regeneration with a different generated block keeps it
    again = parse_card(join_card(BEGIN + "\n# Module `m`\nother\n" + END + "\n", parsed.human))
    assert again.human == human


def test_damaged_markers_lose_no_human_text(project):
    project.map()
    path = project.dir / "modules/shop.md"
    path.write_text("my own notes, markers deleted\n")
    project.map(force=True)
    text = path.read_text()
    assert text.startswith(BEGIN) and "my own notes, markers deleted" in parse_card(text).human


def test_contract_divergence_both_ways(project):
    write(project.dir, "contracts/billing.yml", 'exposes: [charge, refund]\nroutes: ["GET /invoices", "POST /invoices"]\n')
    write(project.dir, "contracts/shop.yml", "exposes: [place_order, main]\n")
    project.map()
    billing = card_text(project, "billing")
    assert "**declared but missing in code**: `refund`" in billing
    assert "**declared routes missing in code**: `POST /invoices`" in billing
    assert "code matches the contract." in card_text(project, "shop")
    write(project.dir, "contracts/shop.yml", "exposes: []\n")  # a contract change makes the card stale
    assert project.map(check=True).stale == ["shop"]
    project.map()
    assert "**in code but undeclared**: `main`, `place_order`" in card_text(project, "shop")
    write(project.dir, "contracts/shop.yml", "exposes: {bad\n")
    project.map()
    assert "**unreadable**" in card_text(project, "shop")


def test_report_done_replaces_only_how_to_use(project):
    project.map()
    before = parse_card(card_text(project, "shop")).generated
    result = project.report_done("shop", how_to_use="Use `place_order`.\n", summary="added orders")
    assert result["how_to_use_replaced"] and result["summary"] == "added orders"
    parsed = parse_card(card_text(project, "shop"))
    assert parsed.human == "Use `place_order`.\n" and parsed.generated == before
    assert "added orders" in (project.runtime / "reports.jsonl").read_text()
    # a code change is picked up, the human section stays
    write(project.repo, "shop/extra.py", "def extra() -> None:\n    pass\n")
    assert project.report_done("shop")["refreshed"]
    parsed = parse_card(card_text(project, "shop"))
    assert parsed.human == "Use `place_order`.\n" and "`extra() -> None`" in parsed.generated
    with pytest.raises(NotFound):
        project.report_done("nope", how_to_use="x")
    with pytest.raises(InvalidInput):
        project.report_done("shop", how_to_use="   ")
    assert not (project.dir / "modules/nope.md").exists()


def test_orphan_cards_removed_unless_human_written(project):
    project.map()
    project.report_done("billing", how_to_use="keep me\n")
    shutil.rmtree(project.repo / "billing")
    shutil.rmtree(project.repo / "shop")
    write(project.repo, "other/__init__.py", "X = 1\n")
    report = project.map()
    assert sorted(report.orphans) == ["billing", "shop"] and report.removed == ["shop"]
    assert (project.dir / "modules/billing.md").exists() and not (project.dir / "modules/shop.md").exists()


def test_load_card_staleness_and_module_of_path(project):
    project.map()
    card = load_card(project, "shop")
    assert card.stale is False and card.dependencies == ["billing"]
    assert "shop/orders.py" in card.files and card.human == ""
    assert module_of_path(project, "shop/orders.py") == "shop"
    assert module_of_path(project, str(project.repo / "billing" / "api.py")) == "billing"
    assert module_of_path(project, "README.md") is None
    (project.repo / "shop/orders.py").write_text("def place_order():\n    pass\n")
    assert load_card(project, "shop").stale is True
    assert load_card(project, "missing") is None


def test_progress_bar_only_on_a_terminal():
    import io

    from brain.cli.cards import ProgressBar

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = ProgressBar(stream, delay=0)
        for i in range(3):
            bar(i, 3, f"mod{i}")
        bar(3, 3, "")
    assert "[" in tty.getvalue() and "2/3 mod2" in tty.getvalue() and tty.getvalue().endswith("\r\033[K")
    assert pipe.getvalue() == ""


def test_map_cli_json_and_list(project):
    env = {**os.environ}
    out = subprocess.run([sys.executable, "-m", "brain", "map", "--list", "--json"], cwd=project.repo, capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0
    mods = {m["module"]: m for m in json.loads(out.stdout)}
    assert set(mods) == {"billing", "shop"} and "shop/orders.py" in mods["shop"]["files"]
    out = subprocess.run([sys.executable, "-m", "brain", "map"], cwd=project.repo, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stderr == ""  # no progress bar when stderr is not a terminal


def test_migrations_of_every_kind(brain):
    repo = brain.repo
    write(repo, "app/__init__.py", "")
    write(repo, "app/models.py", "class Order:\n    pass\n")
    write(repo, "app/migrations/__init__.py", "")
    write(repo, "app/migrations/0001_initial.py", "X = 1\n")
    write(repo, "app/migrations/0002_order_total.py", "X = 2\n")
    write(repo, "alembic/env.py", "import os\n")
    write(repo, "alembic/versions/a1b2_create_users.py", "revision = 'a1b2'\n")
    write(repo, "alembic/versions/c3d4_add_email.py", "revision = 'c3d4'\n")
    write(repo, "web/package.json", '{"name": "web"}')
    write(repo, "web/index.js", "module.exports = {};\n")
    write(repo, "web/prisma/migrations/20240101_init/migration.sql", "create table t();\n")
    report = brain.map()
    assert "alembic/versions" not in report.modules  # loose folders nest into the loose module above
    app = card_text(brain, "app")
    assert "- `migrations/`: 2 migrations, latest `0002_order_total.py`" in app
    assert "### `app.migrations" not in app  # migrations expose nothing
    assert "- `versions/`: 2 migrations, latest `c3d4_add_email.py`" in card_text(brain, "alembic")
    assert "- `prisma/migrations/`: 1 migration, latest `20240101_init/migration.sql`" in card_text(brain, "web")


def test_odd_files_never_crash_the_map(brain):
    repo = brain.repo
    write(repo, "odd/__init__.py", '"""Odd."""\n')
    (repo / "odd" / "caf\udce9.py".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")).write_bytes(b"X = 1\n")
    (repo / "odd" / "blob.py").write_bytes(b"\x00\x01\x02" * 100)
    (repo / "odd" / "latin.py").write_bytes("# -*- coding: latin-1 -*-\nNAME = 'caf\xe9'\n".encode("latin-1"))
    (repo / "odd" / "badenc.py").write_bytes(b"NAME = '\xff\xfe'\n")
    (repo / "odd" / "huge.py").write_bytes(b"X = 1\n" * 300_000)
    (repo / "odd" / "deep.py").write_bytes(b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n")
    report = brain.map()
    assert report.written == ["odd"]
    card = card_text(brain, "odd")
    reasons = dict(report.unread["odd"])
    assert reasons["odd/blob.py"] == "binary" and reasons["odd/huge.py"].startswith("too large")
    assert "odd/badenc.py" in reasons and "odd/deep.py" in reasons and "odd/latin.py" not in reasons
    assert "`NAME`" in card and "`caf?.py`" in card, card
    assert brain.map(check=True).ok


def test_report_done_and_decision_cli(project, tmp_path):
    env = {**os.environ}
    run = lambda *a, **kw: subprocess.run([sys.executable, "-m", "brain", *a], cwd=project.repo, capture_output=True,
                                          text=True, env=env, **kw)
    howto = tmp_path / "howto.md"
    howto.write_text("Start with `place_order`.\n")
    out = run("report-done", "--module", "shop", "--how-to-use", str(howto), "--summary", "orders", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["how_to_use_replaced"] is True
    assert parse_card(card_text(project, "shop")).human == "Start with `place_order`.\n"
    missing = run("report-done", "--module", "shop", "--how-to-use", str(tmp_path / "nope.md"))
    assert missing.returncode == 5 and parse_card(card_text(project, "shop")).human == "Start with `place_order`.\n"
    assert run("report-done", "--module", "ghost").returncode == 5
    out = run("decision", "new", "Orders are immutable", "--module", "shop", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["number"] == 1
    assert run("decision", "status", "1", "accepted").returncode == 0
    assert run("decision", "status", "7", "accepted").returncode == 5
    listed = run("decisions", "--module", "shop")
    assert listed.returncode == 0 and "0001 [accepted] Orders are immutable" in listed.stdout
    assert run("decision").returncode == 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(human=st.lists(st.sampled_from([BEGIN, END, "## How to use", "## Exposes", "<!-- brain:source sha256:" + "b" * 64 +
                                      " files:9 -->", "<!-- brain:uses x a.b -->", "\n", "\r\n", " ", "text `code`",
                                      "# Module `fake`"]) , min_size=1).map("".join).filter(lambda h: h.strip()))
def test_marker_text_in_how_to_use_survives_real_regeneration(project, human):
    path = project.dir / "modules/shop.md"
    if not path.exists():
        project.map()
    path.write_bytes((parse_card(path.read_text()).generated + "\n## How to use\n\n" + human).encode())
    cli = project.repo / "shop/cli.py"
    cli.write_text("def main(flag: bool = False):\n    pass\n" if "flag" not in cli.read_text() else "def main():\n    pass\n")
    assert project.map().written == ["shop"]
    assert parse_card(path.read_bytes().decode()).human == human


def test_a_card_that_cannot_be_written_is_reported_and_the_run_goes_on(project):
    project.map()
    path = project.dir / "modules/shop.md"
    path.write_bytes(parse_card(path.read_text()).generated.encode() + b"\n## How to use\n\nnul \x00 here\n")
    (project.repo / "shop/cli.py").write_text("def main(x=1):\n    pass\n")
    (project.repo / "billing/__init__.py").write_text("def charge(amount: float) -> int:\n    return 1\n")
    report = project.map()
    assert "shop" in report.errors and report.written == ["billing"]
    assert b"nul \x00 here" in path.read_bytes()  # the human text was not touched


def test_cards_without_human_text_are_written_without_fsync(project, monkeypatch):
    """A card that is only generated text is rebuilt by `brain map` from the code: its write needs no fsync (the
    cost of a cold map on a loaded disk); a card holding a human How to use is still written durably."""
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        try:
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            synced.append("?")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    report = project.map()
    modules_dir = str(project.dir / "modules")
    assert report.written and not [p for p in synced if p.startswith(modules_dir)]
    card_path = project.dir / "modules" / "shop.md"
    card_path.write_text(card_path.read_text() + "\nCall place_order with an item name.\n")
    write(project.repo, "shop/orders.py", (project.repo / "shop/orders.py").read_text() + "\nX = 1\n")
    synced.clear()
    assert project.map().written == ["shop"]
    assert any(p.startswith(str(card_path)) or p == modules_dir for p in synced)
    assert "Call place_order with an item name." in card_path.read_text()


def test_writing_cards_does_not_make_the_next_run_rescan(project):
    """Folder mtimes decide whether the tree is scanned again; the cards' own folders under .brain/ are not among
    them, so the run after a map that wrote cards adopts the saved layout (the one-file refresh stays fast)."""
    from brain.cards.mapper import Mapper

    first = project.map()
    assert first.written
    assert Mapper(project).load_layout()
    write(project.repo, "shop/orders.py", (project.repo / "shop/orders.py").read_text() + "\nY = 2\n")
    assert project.map().written == ["shop"]
    assert Mapper(project).load_layout()
    write(project.repo, "shop/extra.py", "Z = 3\n")  # a new file still changes the layout
    assert not Mapper(project).load_layout()


def test_adopted_layout_stats_the_mapped_files_only_when_asked(project, monkeypatch):
    """A boot that only asks which module owns a path adopts the saved layout without a stat of every
    mapped file; the files' stamps, read when a card's staleness is checked, are the current ones."""
    from brain.cards.mapper import Mapper

    project.map()
    write(project.repo, "shop/orders.py", (project.repo / "shop/orders.py").read_text() + "\nW = 4\n")
    mapper = Mapper(project)
    stat_paths = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: stat_paths.append(str(p)) or real_stat(p, *a, **k))
    assert mapper.owner("shop/orders.py") == "shop"
    assert not [p for p in stat_paths if p.endswith(".py")]
    size = {f.path: f.size for f in mapper.files()}["shop/orders.py"]
    assert size == real_stat(project.repo / "shop/orders.py").st_size
    assert load_card(project, "shop").stale  # the changed source is still noticed


def test_a_mapped_file_gone_behind_the_layout_makes_it_discovered_again(project):
    """If a saved layout's file is gone although its folder's mtime did not change, asking for the files
    discovers the layout again instead of listing a file that is not there."""
    from brain.cards.mapper import Mapper

    project.map()
    folder = project.repo / "shop"
    mtime = os.stat(folder).st_mtime_ns
    (project.repo / "shop/orders.py").unlink()
    os.utime(folder, ns=(mtime, mtime))
    mapper = Mapper(project)
    assert mapper.load_layout()
    paths = {f.path for f in mapper.files()}
    assert "shop/orders.py" not in paths and "shop/__init__.py" in paths
    assert all("shop/orders.py" not in m.files for m in mapper.modules())
