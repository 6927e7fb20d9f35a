"""Files for this task: the ranked source files the task text points to.

Placed right after now.md so these files lead the boot's `files` list (the packer
collects each included part's files in order). The section stays small: one line
per file with why it ranks (symbols it defines, traceback frames, paths named).
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "render"]


def render(localization, *, module: str | None = None) -> str:
    lines = []
    for i, hit in enumerate(localization.files, 1):
        why = "; ".join(hit.reasons)
        lines.append(f"{i}. `{hit.path}`" + (f" ({why})" if why else ""))
    if localization.modules:
        lines.append("")
        lines.append("Modules: " + ", ".join(f"`{m}`" for m, _ in localization.modules[:5]))
    return "\n".join(lines)


def collect(brain, request) -> list[Part]:
    if not (request.task and request.task.strip()):
        return []  # nothing to rank: a plain boot never imports or opens the index
    try:
        # an inferred module came from this very ranking: asking again with it would only re-weigh the same evidence
        module = None if request.module_inferred else request.module
        found = brain.locate(request.task, module=module, session=request.session,
                             limit=brain.settings.get("search.boot_files") or 20)
    except Exception as exc:  # derived help: a broken index must never cost the agent its boot
        from ...workspace import _debug

        _debug("task localization failed: %s", exc)
        return []
    if not found.files:
        return []
    return [Part("task_files", "task files", "Files for this task (ranked)", render(found, module=module),
                 "brain search TERMS --kind code", files=tuple(found.paths))]
