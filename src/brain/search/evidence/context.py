"""Evidence of the context: the program's entry point for a command-line title, the working state.

A title about the program's command line (an option, an exit code, an environment variable)
points at the few files whose ``main`` reads them (``entry``); files changed in the working
tree (``changed``) and claimed by the session (``claimed``); and, when the boot was asked about
a module, the files with other evidence inside it (``in_module``, a boost: see ``ranking``).
"""

from __future__ import annotations

__all__ = ["collect"]


def collect(task) -> None:
    view, add = task.view, task.add
    if task.sig.cli:
        entries = view.entry_points()
        if 0 < len(entries) <= task.params["max_entry_files"]:
            for path in entries:
                add(path, "entry", 1.0 / len(entries), "the program's entry point (the title is about its command line)")
    for path in task.changed:
        if path in view.files and not view.is_test(path):
            add(path, "changed", 1.0, "changed in the working tree")
    for path in task.claimed:
        for hit in view.resolve_path(path) if path in view.files or "/" in path else []:
            add(hit, "claimed", 1.0, "claimed by this session")
    if task.module:
        prefix = task.module.replace(".", "/").strip("/") + "/"
        for path in task.evidence.candidates:
            if path.startswith(prefix):
                add(path, "in_module", 1.0, f"in module `{task.module}`")
