"""The kinds of evidence the file ranking reads, one module each behind one interface (``task.Task``).

Each of ``KINDS`` has ``collect(task)``, recording what it finds at unit weight into the
task's ``Evidence``, in this order (the order reasons are listed in): ``paths`` (traceback
frames, written paths, module paths, routes), ``names`` (dotted names, ``Class.member``,
identifiers, file names), ``text`` (BM25 of the text and the title, quotes), ``history`` (files
past commits like the task changed), ``context``
(command-line entry points, changed and claimed files, the module asked about), ``locales`` (the translation
files of a language the text names), ``pathwords`` (the title's words a
candidate's path is made of: a lift of the files the others found), ``typewords`` (the same for a
one-type-per-file candidate's type name alone), ``scope`` (the
area a commit-style title's prefix names: a boost of the files the others found, so last). Then
``neighbours.collect_links`` reads what the lending passes of ``ranking.combine`` need.
Adding a kind is a module here, its entry in ``KINDS`` and its weight in ``weights.json``.
"""

from __future__ import annotations

from . import context, history, locales, names, paths, pathwords, scope, text, typewords
from .neighbours import Context, collect_links
from .task import FLAGS, Task, flags_of, unnamed_modules

__all__ = ["KINDS", "Task", "Context", "FLAGS", "gather_direct", "collect_links", "flags_of"]

KINDS = (paths, names, text, history, context, locales, pathwords, typewords, scope)


def gather_direct(view, task_text: str | None, *, changed=(), claimed=(), module: str | None = None,
                  weights) -> tuple:
    """(Evidence, Context): what the text (and the working state) gives each file, before any file lends to another."""
    from ..signals import extract_signals

    params = weights.params
    sig = extract_signals(task_text, strip_urls=params["strip_urls"])
    task = Task(view, sig, params, changed=tuple(changed), claimed=tuple(claimed), module=module)
    for kind in KINDS:
        kind.collect(task)
    from .. import traps

    aside = unnamed_modules(view, sig)
    found = Context({w: v for w, v in sig.idents.items() if w in sig.code_like},  # never a capitalised prose word
                    task.definitions(), aside, trap=traps.trap_flag(view, sig))
    for copy, parts in traps.copies(view).items():  # each copy is lent a share of its best part, after the demotions
        task.evidence.file(copy).parts = parts
    for path, evidence in task.evidence.files.items():
        evidence.flags = flags_of(view, path, aside, found.trap)
        found.flagged.add(path)
    return task.evidence, found
