"""What slots produce and what the packer returns: plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class BootRequest:
    """Everything a boot depends on besides the memory itself (same inputs, same bytes)."""

    task: str | None = None
    module: str | None = None
    role: str | None = None
    session: str | None = None
    budget: int = 8000
    module_inferred: bool = False  # the module was inferred from the task text, not given by the caller


@dataclass(frozen=True)
class Part:
    """One candidate block of the boot.

    ``required`` parts (only now.md) go in first and whole; the rest go in slot order
    while they fit, and each one left out is named with ``fetch``, the way to get it.
    ``listed_only`` parts are never put in, only named in the manifest (cold agent profiles,
    a profile skipped because it does not parse, the whole card when a slot shows a cut of it).
    """

    slot: str
    source: str
    title: str
    text: str
    fetch: str
    required: bool = False
    files: tuple[str, ...] = ()
    listed_only: bool = False
    why: str = "budget"  # a listed_only part's reason (a LEFT_OUT_REASONS key)
    detail: str = ""  # what is wrong with it (the parse error of a skipped profile)


@dataclass(frozen=True)
class Omitted:
    source: str
    tokens: int
    fetch: str
    slot: str = ""
    reason: str = "budget"  # a LEFT_OUT_REASONS key
    detail: str = ""


@dataclass
class BootResult:
    text: str
    tokens: int
    budget: int
    sections: list[dict] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    omitted: list[Omitted] = field(default_factory=list)
    functions: list[dict] = field(default_factory=list)  # ranked definitions of a task boot (boot.slots.code)
    evidence: dict | None = None  # how strong the task's best file's evidence is (search.ranking.strength)

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
