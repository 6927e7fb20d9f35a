"""Task localization: which files (and modules) a task text is about.

No model, only evidence a reader would use, each kind weighed by how specific it is:

1. paths the text names (``django/forms/fields.py``, ``src/app/x.ts:12``), traceback
   frames (``File ".../pkg/mod.py", line 3, in f``, and each other language's shape: Go
   panics, Rust panics and backtraces, Java ``at a.b.C.m(C.java:42)``, JavaScript stack
   frames, C/C++ compiler errors and sanitizer frames, see ``traces``): the deepest frame
   inside the repository weighs most;
2. dotted module paths (``pkg.sub.mod`` or ``pkg.sub.Name``, followed through a
   package's re-exports to the module that defines the name);
3. identifiers that match symbols the code defines (``Class.method`` pairs most, then
   classes and functions, then methods and attributes), weighted by how few files
   define them, how code-like the word looks, and whether the title names it;
   identifiers that equal a file's name (``makemigrations`` -> ``.../makemigrations.py``);
4. full-text BM25 over the files' identifier tokens, as the tie-breaker and the
   fallback when the text names no code at all; and text the report quotes (a pasted
   error message, an output line, a long option) found verbatim in a few files, looked
   up as phrases of three words (see ``quotes``);
5. the session's claims and the working tree's changed files, when present.
6. neighbours of the best few files: what they import or is imported by them, and their
   header/source twin, get a small share of their score (a fix often spans them).

Test files are never the answer: they are demoted below every other file. The
signal extraction is pure (``signals.extract_signals``); the evidence modules
(``evidence/``: paths, names, text, context, neighbours) read a ``CodeView``
(``codeview``) and record each kind at unit weight (``ranking.gather``), and
``ranking.combine`` weighs them with the weights of ``weights.json``. ``locate`` is the
two in a row; this module keeps the names its callers import.
"""

from __future__ import annotations

from .codeview import CodeView
from .history import COCHANGE_REASON, HISTORY_REASON
from .traps import LENT_REASONS
from .evidence.task import GENERATED_NAME
from .ranking import FileHit, Localization, module_of
from .signals import MAX_TASK_CHARS, Signals, extract_signals, url_routes

__all__ = ["Signals", "extract_signals", "url_routes", "CodeView", "FileHit", "Localization", "locate",
           "MAX_TASK_CHARS", "is_text_evidence", "module_of", "GENERATED_NAME"]

_GENERATED = GENERATED_NAME  # the name benchmarks import
_LENT_REASONS = ("imports or is imported by", "header/source twin of", "also defines", "declaration twin of",
                 "entry point importing", "like `", *LENT_REASONS)
_WEAK_REASONS = ("full-text match", "changed in the working tree", HISTORY_REASON, COCHANGE_REASON, *_LENT_REASONS)

def is_text_evidence(reason: str) -> bool:
    """Whether a ranking reason is something the text itself points at (a path, a frame, a
    definition, a module or file name), not loose word overlap, the working tree, or a share
    lent by a neighbouring file."""
    return not reason.startswith(_WEAK_REASONS)


def _module_of(view, path: str) -> str:  # the name benchmarks import
    return module_of(path)


def locate(view: CodeView, text: str | None, *, changed: list[str] = (), claimed: list[str] = (),
           module: str | None = None, limit: int = 20, weights=None) -> Localization:
    """Rank the repository's files for a task text; most likely first (``ranking.gather`` then ``combine``);
    ``weights`` (a ``weights.Weights``) instead of the shipped ones, for benchmarks."""
    from .ranking import combine, gather

    found = gather(view, text, changed=changed, claimed=claimed, module=module, links="best", weights=weights)
    return combine(found, weights, limit=limit)
