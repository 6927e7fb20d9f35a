"""The one interface of the evidence modules: a ``Task`` (the text's signals, the repository, the
evidence so far) that each kind's ``collect(task)`` records into, and the files' flags.

A kind of evidence is a module with ``collect(task)`` that calls ``task.add(path, feature,
value, reason)`` (a value at unit weight: the feature's weight lives in ``weights.json``), listed
in ``evidence.KINDS``; the order of ``KINDS`` is the order the reasons are found in. A flag is an
entry of ``FLAGS`` (name -> test of a file) and a factor of the same name in ``weights.json``.
"""

from __future__ import annotations


from ...records import field, record
from ..code import is_nonproduct_path
from ..ranking import Evidence
from ...lazyre import lazy

__all__ = ["Task", "FLAGS", "GENERATED_NAME", "flags_of", "unnamed_modules"]

GENERATED_NAME = lazy(r"(?:^|/)\d{3,}_\w*\.\w+$")  # numbered migrations and the like


@record
class Task:
    """What the evidence modules read (the signals, the repository, the gathering's params) and write."""

    view: object  # a CodeView
    sig: object  # the text's Signals
    params: dict
    evidence: Evidence = field(default_factory=Evidence)
    changed: tuple = ()
    claimed: tuple = ()
    module: str | None = None
    aside: list[str] = field(default_factory=list)  # the inner modules the text does not name
    _defs: dict | None = None

    def add(self, path: str, feature: str, value: float, reason: str, *, name: bool = False) -> None:
        self.evidence.add(path, feature, value, reason, name=name)

    def definitions(self) -> dict:
        """name -> [(path, kind, qualname)] of every identifier and dotted-name part the text writes (read once)."""
        if self._defs is None:
            names: set[str] = set(self.sig.idents)
            for dotted in self.sig.dotted:
                names.update(dotted.split("."))
            self._defs = self.view.definitions(sorted(names))
        return self._defs


# name -> whether a file has the flag; each flag is demoted by the factor of that name (``files.factors``)
FLAGS = {
    "test": lambda view, path: view.is_test(path),
    # a Python stub (`.pyi`) a tool writes is the module's declared API, regenerated with the change that moves it
    "generated": lambda view, path: not path.endswith(".pyi") and (bool(GENERATED_NAME.search(path)) or path in view.generated),
    "nonproduct": lambda view, path: is_nonproduct_path(path),  # examples, docs, benchmarks, build configuration
}


def flags_of(view, path: str, aside: list[str], trap=None) -> list[str]:
    """The flags of a file: ``FLAGS``, its trap for this task (``trap(path)``: an amalgamated copy, a
    generated file, a tool script in another language; see ``search.traps``), and ``nested`` inside an
    inner module the text does not name."""
    flags = [name for name, test in FLAGS.items() if test(view, path)]
    found = trap(path) if trap is not None else None
    if found:
        flags.append(found)
    if aside and any(path.startswith(folder + "/") for folder in aside):
        flags.append("nested")
    return flags


def unnamed_modules(view, sig) -> list[str]:
    """The folders of the repository's separate inner modules that the text does not name: a report
    about the product's code does not mention the tool shipped beside it (`goctl`), one about the tool does."""
    if not view.nested:
        return []
    words = set(sig.words) | {w.lower() for w in sig.idents}
    for path in (*(p for p, _ in sig.paths), *sig.module_paths, *(f for f, _ in sig.frames)):
        words.update(path.lower().split("/"))
    return [folder for folder, names in view.nested.items() if not words & set(names)]
