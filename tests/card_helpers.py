"""Helpers the language card tests share: write a file of the test's project, read a module's card."""

from __future__ import annotations

__all__ = ["write", "card"]


def write(repo, rel, text):
    """``text`` at ``repo/rel``, its folders made."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def card(brain, module):
    """The card text of ``module`` (``.`` is the root module)."""
    return (brain.dir / "modules" / (module + ".md" if module != "." else "_root.md")).read_text()
