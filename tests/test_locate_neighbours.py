"""The boot's compact tail of ranked files, and the ranking's neighbour signals (imports, header/source pairs)."""

from __future__ import annotations

from pathlib import Path

from brain.boot.slots.task_files import DETAILED_FILES, render
from brain.search.locate import FileHit, Localization
from brain.tokens import estimate_tokens


def _write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_files_after_the_first_few_are_named_without_reasons():
    hits = [FileHit(f"pkg/file_{i}.go", 10.0 - i * 0.1, ["defines `Thing`", "full-text match"]) for i in range(40)]
    text = render(Localization(hits, []))
    for hit in hits:
        assert f"`{hit.path}`" in text  # every ranked file is named, so it counts as in the context
    assert text.count("defines `Thing`") == DETAILED_FILES
    full = "\n".join(f"{i}. `{h.path}` ({'; '.join(h.reasons)})" for i, h in enumerate(hits, 1))
    assert estimate_tokens(text) < 0.7 * estimate_tokens(full)
    # the order stays the ranking's order
    positions = [text.index(f"`{h.path}`") for h in hits]
    assert positions == sorted(positions)


def test_boot_names_forty_ranked_files_by_default(brain):
    for i in range(45):
        _write(brain.repo, f"svc/handler_{i:02}.go", f"package svc\n\nfunc Handle{i:02}() {{\n\t// retry timeout\n}}\n")
    result = brain.boot("retry timeout in the svc handlers", record=False)
    named = [f for f in result.files if f.startswith("svc/")]
    assert len(named) == 40
    assert all(f"`{f}`" in result.text for f in named)
