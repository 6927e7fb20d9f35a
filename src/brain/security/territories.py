"""Territories (the scribe pattern): each memory area has exactly one owning writer role.

``brain.yml`` maps areas to roles::

    territories:
      decisions/**: architect        # a glob: ** crosses folders, * and ? stay within one
      notes/backend: backend         # a plain path: that file or everything below that folder
      kernel:agents/**: kernel-scribe  # a user-level layer: prefix the area with its layer

A write by another role is refused before anything is written, with an error naming
the owner and the signal to send them instead. Every surface (CLI, MCP over stdio and
HTTP) names the writer's role through ``surface_role``: a writer whose role is not known
(yet) is checked as ``DEFAULT_ROLE``, never let through unchecked. Only brain's own
maintenance (card generation, the decisions index) writes with no role; with no
territories configured every write behaves as before. When areas overlap, the most specific one wins (the
longest literal part), so ``notes/**: lead`` and ``notes/backend/**: backend`` compose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..errors import SettingsError
from .globs import MAX_GLOB_CHARS, compile_glob

__all__ = ["Territory", "Territories", "territories_from_settings", "glob_regex", "LAYER_PREFIXES", "DEFAULT_ROLE",
           "surface_role"]

LAYER_PREFIXES = ("kernel", "instance", "personal")
DEFAULT_ROLE = "agent"  # the role of a writer (and an MCP session) nothing names: a client without a name


def surface_role(*known: str | None) -> str:
    """The role a write from a surface is checked as: the first of ``known`` that is set, else ``DEFAULT_ROLE``.

    Never None: a write whose role is not known yet (an MCP connection's first call, a CLI
    command without ``--role``) is checked like any other writer's, so it cannot reach an
    area another role owns."""
    for role in known:
        if isinstance(role, str) and role.strip():
            return role.strip()
    return DEFAULT_ROLE


@lru_cache(maxsize=1024)
def glob_regex(pattern: str):
    """A territory glob, compiled (brain.security.globs): ``**`` any depth, ``*``/``?`` within one segment,
    ``.match(path)`` true when it covers ``path``, in time linear in the path (a backtracking regex made
    ``notes/*a*a*a*a*a*a*a*a*z`` cost minutes). Compared as the path rule compares names: case-folded,
    NFKC, trailing dots and spaces dropped, so ``notes/LEAD/x.md`` is inside ``notes/lead/**``.

    A pattern without glob characters names a file or a folder (and everything below it).
    """
    return compile_glob(pattern, fold=True)


@dataclass(frozen=True)
class Territory:
    area: str  # as written in brain.yml (without the layer prefix)
    layer: str  # project | kernel | instance | personal
    owner: str
    order: int

    @property
    def specificity(self) -> int:
        return len(re.sub(r"[*?\[\]]", "", self.area))

    def matches(self, layer: str, path: str) -> bool:
        return layer == self.layer and glob_regex(self.area).matches(path)


class Territories:
    """The territory map of one brain (possibly empty)."""

    def __init__(self, items: list[Territory]) -> None:
        self.items = items

    def __bool__(self) -> bool:
        return bool(self.items)

    @classmethod
    def parse(cls, mapping: dict, source: str = "brain.yml") -> "Territories":
        items = []
        for order, (area, owner) in enumerate((mapping or {}).items()):
            if not isinstance(area, str) or not area.strip() or not isinstance(owner, str) or not owner.strip():
                raise SettingsError(source, f"territories.{area}", "a mapping of area (path or glob): role",
                                    repr(owner)[:80])
            layer, rest = "project", area.strip()
            head, sep, tail = rest.partition(":")
            if sep and head in LAYER_PREFIXES:
                layer, rest = head, tail
            if len(rest) > MAX_GLOB_CHARS:
                raise SettingsError(source, f"territories.{area[:40]}...",
                                    f"an area of at most {MAX_GLOB_CHARS} characters", f"{len(rest)} characters")
            if rest.startswith("/") or ".." in rest.split("/"):
                raise SettingsError(source, f"territories.{area}", "a path relative to the memory root, without '..'")
            items.append(Territory(rest.strip("/"), layer, owner.strip(), order))
        return cls(items)

    def owner_of(self, path: str, layer: str | None = None) -> Territory | None:
        """The territory owning ``path`` (most specific match), or None when no area covers it."""
        layer = layer or "project"
        best = None
        for item in self.items:
            if item.matches(layer, path) and (best is None or item.specificity > best.specificity):
                best = item
        return best

    def allows(self, path: str, role: str | None, layer: str | None = None) -> tuple[bool, Territory | None]:
        """(allowed, owning territory). No role or no covering area: allowed."""
        owner = self.owner_of(path, layer)
        if owner is None or role is None:
            return True, owner
        return owner.owner == role, owner

    def areas_of(self, role: str) -> list[str]:
        return [(f"{t.layer}:" if t.layer != "project" else "") + t.area for t in self.items if t.owner == role]


def territories_from_settings(settings) -> Territories:
    return Territories.parse(settings.get("territories") or {})
