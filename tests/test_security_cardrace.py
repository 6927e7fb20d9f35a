"""Issue 12, class 5: `brain map` never overwrites a "How to use" edit accepted while it renders.

Two real processes share one brain: an editor replaces the shop card's How to use
section in a loop (report-done, the write path made for it), while a mapper changes
the module's code and runs `brain map` in a loop, so every map really rewrites the
card. Every accepted edit must survive: no read that starts after an edit was
accepted ever sees an older one, and the final card holds the last accepted edit.
Bounded by iteration counts; no sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brain.cards.markers import parse_card

pytestmark = pytest.mark.timeout(600)

EDITS = 60
MAPS = 40

EDITOR = r"""
import json, sys, time
import brain
from brain.errors import BrainError
b = brain.open(sys.argv[1])
for i in range(int(sys.argv[2])):
    try:
        b.report_done("shop", how_to_use=f"edit {i}: call place_order once per cart.\n")
    except BrainError as exc:
        print(json.dumps({"refused": i, "kind": exc.kind}), flush=True)
        continue
    print(json.dumps({"accepted": i, "at": time.monotonic()}), flush=True)
"""

MAPPER = r"""
import json, re, sys, time
from pathlib import Path
import brain
from brain.cards.markers import parse_card
b = brain.open(sys.argv[1])
card = b.dir / "modules" / "shop.md"
source = b.repo / "shop" / "extra.py"
for k in range(int(sys.argv[2])):
    source.write_text("".join(f"def helper_{j}(x: int) -> int:\n    return x + {j}\n\n" for j in range(k + 1)))
    report = b.map()
    started = time.monotonic()
    human = parse_card(card.read_text()).human
    match = re.search(r"edit (\d+):", human)
    print(json.dumps({"map": k, "written": "shop" in report.written, "errors": report.errors,
                      "saw": int(match.group(1)) if match else -1, "at": started}), flush=True)
"""


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def shop(brain):
    repo = brain.repo
    _write(repo, "pyproject.toml", '[project]\nname = "shop"\n')
    _write(repo, "shop/__init__.py", '"""The shop."""\nfrom .orders import place_order\n')
    for n in range(12):  # a module of some size, so rendering its card takes a while
        _write(repo, f"shop/part{n}.py", "".join(f'def f{n}_{j}(a: int, b: str = "x") -> dict:\n'
                                                  f'    """Step {j} of part {n}."""\n    return {{}}\n\n'
                                                  for j in range(30)))
    _write(repo, "shop/orders.py", '"""Orders."""\n\ndef place_order(item: str) -> dict:\n    return {}\n')
    brain.map()
    return brain


def test_map_never_loses_an_accepted_how_to_use_edit(shop):
    repo = shop.repo
    env = dict(os.environ)
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(repo), str(EDITS)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    mapper = subprocess.Popen([sys.executable, "-c", MAPPER, str(repo), str(MAPS)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    edit_out, edit_err = editor.communicate(timeout=500)
    map_out, map_err = mapper.communicate(timeout=500)
    assert editor.returncode == 0, edit_err
    assert mapper.returncode == 0, map_err
    accepted = [json.loads(line) for line in edit_out.splitlines() if '"accepted"' in line]
    maps = [json.loads(line) for line in map_out.splitlines()]
    assert accepted, edit_out
    assert sum(m["written"] for m in maps) >= MAPS // 2, maps  # the mapper really rewrote the card
    assert all(not m["errors"] for m in maps), maps
    for seen in maps:  # a read that starts after edit i was accepted sees edit i or a later one
        due = [a["accepted"] for a in accepted if a["at"] < seen["at"]]
        if due:
            assert seen["saw"] >= max(due), (seen, max(due))
    final = parse_card((shop.dir / "modules" / "shop.md").read_text())
    assert final.intact
    assert final.human.startswith(f"edit {accepted[-1]['accepted']}:")
    assert "helper_" in final.generated and f"helper_{MAPS - 1}" in final.generated


def test_map_keeps_an_edit_written_while_it_renders(shop, monkeypatch):
    """The same race made deterministic in one process: the card is edited between render and write."""
    from brain.cards import mapper as mapper_module

    _write(shop.repo, "shop/extra.py", "def late() -> None:\n    pass\n")
    real_render = mapper_module.Mapper.render
    fired = []

    def render_then_edit(self, module, source_hash, data):
        text = real_render(self, module, source_hash, data)
        if not fired:
            fired.append(True)
            doc = shop.memory.read("modules/shop.md")
            parsed = parse_card(doc.text)
            from brain.cards.markers import join_card

            shop.write("modules/shop.md", join_card(parsed.generated, "written during the render\n"),
                       expected_hash=doc.hash)
        return text

    monkeypatch.setattr(mapper_module.Mapper, "render", render_then_edit)
    report = shop.map()
    assert "shop" in report.written and fired
    card = parse_card((shop.dir / "modules" / "shop.md").read_text())
    assert card.human == "written during the render\n"
    assert "`extra.py`" in card.generated  # the new render was written too
