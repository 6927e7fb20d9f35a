"""The budgeted boot: slots collect parts, the packer fits them, the record keeps an audit."""

from __future__ import annotations

from .call import boot_call
from .packer import pack
from .parts import BootRequest, BootResult, Omitted, Part

__all__ = ["BootRequest", "BootResult", "Omitted", "Part", "assemble", "header_for"]


def header_for(brain, request: BootRequest) -> str:
    lines = [f"# Boot: {brain.name}"]
    who = []
    if request.role:
        who.append(f"role `{request.role}`")
    if request.session:
        who.append(f"session `{request.session}`")
    if request.module:
        who.append(f"module `{request.module}`")
    if who:
        lines.append("For " + ", ".join(who) + ".")
    flags = sorted(name for name in brain.settings.get("features") | brain.settings.get("roles").get(request.role or "", {}).get("features", {})
                   if brain.settings.feature(name, request.role))
    if flags:
        lines.append("Features on: " + ", ".join(f"`{f}`" for f in flags) + ".")
    lines.append("")
    return "\n".join(lines) + "\n"


FOOTER = "Memory tools: `brain_read`, `brain_search`, `brain_write`. Update now.md before you stop.\n"


def assemble(brain, request: BootRequest, slots=None) -> BootResult:
    from .slots import DEFAULT_SLOTS

    parts: list[Part] = []
    with boot_call() as call:  # this boot's memo (the rankings): never on the shared Brain (see boot.call)
        for slot in slots if slots is not None else DEFAULT_SLOTS:
            parts.extend(slot.collect(brain, request))
        result = pack(header_for(brain, request), parts, request.budget, footer=FOOTER)
        if call.memo.get("functions"):
            from .slots.code import functions_json

            result.functions = functions_json(call.memo, result)
        result.evidence = call.memo.get("evidence")
        return result
