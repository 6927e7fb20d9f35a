"""What slots produce and what the packer returns: plain data, no I/O.

Named tuples and a plain class, not dataclasses: a cold `brain boot` imports this module, and
``dataclasses`` brings ``inspect`` (ast, dis, tokenize), 5-6 ms of a 40 ms process (decision 0038).
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["BootRequest", "Part", "Omitted", "BootResult", "LEFT_OUT_REASONS"]

# why a part is left out (``Omitted.reason``, the `reason` of `brain boot --json`'s omitted entries),
# and how the manifest says it
LEFT_OUT_REASONS = {
    "budget": "over the budget",
    "cut": "cut to fit the budget",
    "cold_profile": "cold profile, fetchable",
    "unparsable": "skipped: does not parse",
    "whole_card": "whole card (its cut is above)",
    "unknown_module": "no such module",
}


class BootRequest(namedtuple("BootRequest", "task module role session budget module_inferred",
                             defaults=(None, None, None, None, 8000, False))):
    """Everything a boot depends on besides the memory itself (same inputs, same bytes).

    ``task``, ``module``, ``role``, ``session``: str or None; ``budget``: tokens; ``module_inferred``:
    the module was inferred from the task text, not given by the caller.
    """

    __slots__ = ()


class Part(namedtuple("Part", "slot source title text fetch required files listed_only why detail",
                      defaults=(False, (), False, "budget", ""))):
    """One candidate block of the boot.

    ``required`` parts (only now.md) go in first and whole; the rest go in slot order
    while they fit, and each one left out is named with ``fetch``, the way to get it.
    ``listed_only`` parts are never put in, only named in the manifest (cold agent profiles,
    a profile skipped because it does not parse, the whole card when a slot shows a cut of it).
    ``files``: a tuple of paths; ``why``: a listed_only part's reason (a LEFT_OUT_REASONS key);
    ``detail``: what is wrong with it (the parse error of a skipped profile).
    """

    __slots__ = ()


class Omitted(namedtuple("Omitted", "source tokens fetch slot reason detail", defaults=("", "budget", ""))):
    """A part left out of the boot: its source, its tokens, how to fetch it; ``reason`` is a
    LEFT_OUT_REASONS key."""

    __slots__ = ()


class BootResult:
    """The packed boot: its text and token count, the sections put in, the parts left out, and for a
    task boot its ranked files, ranked definitions (boot.slots.code) and how strong the best file's
    evidence is (search.ranking.strength). Mutable: the boot adds ``functions`` and ``evidence``."""

    __slots__ = ("text", "tokens", "budget", "sections", "files", "omitted", "functions", "evidence")

    def __init__(self, text: str, tokens: int, budget: int, sections: list[dict] | None = None,
                 files: list[str] | None = None, omitted: list[Omitted] | None = None,
                 functions: list[dict] | None = None, evidence: dict | None = None):
        self.text, self.tokens, self.budget = text, tokens, budget
        self.sections = [] if sections is None else sections
        self.files = [] if files is None else files
        self.omitted = [] if omitted is None else omitted
        self.functions = [] if functions is None else functions
        self.evidence = evidence

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return self._fields() == other._fields() if isinstance(other, BootResult) else NotImplemented

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return "BootResult(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"

    def to_dict(self) -> dict:
        """The `brain boot --json` object, exactly as DESIGN §6 names it."""
        return {
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "sections": list(self.sections),
            "files": list(self.files),
            "omitted": [{"source": o.source, "tokens": o.tokens, "fetch": o.fetch, "reason": o.reason,
                         **({"detail": o.detail} if o.detail else {})} for o in self.omitted],
            "functions": [dict(f) for f in self.functions],
            "evidence": dict(self.evidence) if self.evidence else None,
        }
