"""Files for this task: the ranked source files the task text points to.

Placed right after now.md so these files lead the boot's `files` list (the packer
collects each included part's files in order). The section stays small: one line
per file with why it ranks (symbols it defines, traceback frames, paths named) for the
first few, under a line saying how strong the best file's evidence is (a named traceback
frame, a written path, a name, or a text match only: then the agent explores), then the rest of the ranking as bare paths on one line: a fix often touches
more files than the first few, and a named path costs a few tokens where a reason costs
a line. Last, one line names the files beside the top five that the ranking leaves out (their small
folder's files, the files that changed with them: ``search.beside``), each with why.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "render", "DETAILED_FILES"]

DETAILED_FILES = 10  # files listed with their reasons; the rest of the ranking is named compactly


def render(localization, *, module: str | None = None, beside: list[tuple[str, str, str]] = ()) -> str:
    lines = []
    evidence = getattr(localization, "evidence", None)
    if evidence:
        lines.append(f"Evidence: {evidence['text']}.")
    for i, hit in enumerate(localization.files[:DETAILED_FILES], 1):
        why = "; ".join(hit.reasons)
        lines.append(f"{i}. `{hit.path}`" + (f" ({why})" if why else ""))
    rest = localization.files[DETAILED_FILES:]
    if rest:
        lines.append(f"{DETAILED_FILES + 1}-{DETAILED_FILES + len(rest)}. " + ", ".join(f"`{h.path}`" for h in rest))
    if beside:
        lines.append("")
        from ...search.beside import render_beside

        lines.append("Beside the top files (not ranked above; a fix often spans them): " + render_beside(beside))
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
                             limit=brain.settings.get("search.boot_files") or 40)
    except Exception as exc:  # derived help: a broken index must never cost the agent its boot
        from ...workspace import _debug

        _debug("task localization failed: %s", exc)
        return []
    if not found.files:
        return []
    from ..call import current_call

    call = current_call()
    if call is not None and found.evidence:
        call.memo["evidence"] = dict(found.evidence)  # the JSON boot's `evidence` (boot.assemble)
    beside = _beside(brain, found.paths)
    return [Part("task_files", "task files", "Files for this task (ranked)", render(found, module=module, beside=beside),
                 "brain search TERMS --kind code", files=tuple(found.paths) + tuple(b[0] for b in beside))]


def _beside(brain, ranked: list[str]) -> list[tuple[str, str, str]]:
    """The files beside the top ones the ranking leaves out (``search.beside``); none when that fails."""
    most = brain.settings.get("search.boot_beside")
    if not most or not ranked:
        return []
    try:
        from ...search.beside import beside_files
        from ...search.service import boot_code_view

        return beside_files(boot_code_view(brain.index), list(ranked), most=most)
    except Exception as exc:  # derived help: a broken index must never cost the agent its boot
        from ...workspace import _debug

        _debug("files beside the top ones failed: %s", exc)
        return []
