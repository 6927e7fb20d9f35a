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

__all__ = ["Task", "FLAGS", "GENERATED_NAME", "flags_of", "unnamed_modules", "shadowed_declaration",
           "wrapped_module"]

GENERATED_NAME = lazy(r"(?:^|/)\d{3,}_\w*\.\w+$")  # numbered migrations and the like
_DECLARATION_EXTS = (".d.ts", ".d.mts", ".d.cts")
_TS_SOURCE_EXTS = (".ts", ".tsx", ".mts", ".cts")


def shadowed_declaration(view, path: str) -> bool:
    """A TypeScript declaration file beside a TypeScript source of the same name (`index.d.ts` next to
    `index.ts`): the compiler writes the one from the other, so the declaration is a stale or generated
    copy and the source is what a fix changes. A declaration beside JavaScript (`x.js` + `x.d.ts`) is
    hand-written, and no copy: it keeps its rank (and its share as the module's declaration twin)."""
    for ext in _DECLARATION_EXTS:
        if path.endswith(ext):
            stem = path[: -len(ext)]
            return any(stem + source in view.files for source in _TS_SOURCE_EXTS)
    return False


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


_JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
WRAPPER_MAX_BYTES = 4000  # a module passing one import on is short (its doc comment aside)


def wrapped_module(view, path: str) -> str | None:
    """The one module a JavaScript or TypeScript wrapper passes on (`lib/setImmediate.js`: `import x from
    './internal/setImmediate'; export default x;`, a public name for an internal implementation), else None.
    A wrapper defines nothing and imports one file of the repository, of its own name (a route handler
    passing the request to one module defines nothing either, an anonymous function, but is named for its
    route); its doc comment wins it the text's words, while the fix goes to the implementation (decision 0065)."""
    if not path.endswith(_JS_EXTS) or path.endswith(_DECLARATION_EXTS):
        return None
    row = view.db.execute("SELECT size FROM code_files WHERE path = ?", (path,)).fetchone()
    if row is None or (row[0] or 0) > WRAPPER_MAX_BYTES:
        return None
    if view.db.execute("SELECT 1 FROM code_symbols WHERE path = ? LIMIT 1", (path,)).fetchone():
        return None
    targets = view.imports_of(path)
    if len(targets) != 1:
        return None
    found = view.resolve_import(path, targets[0])
    if len(found) != 1 or view.is_test(found[0]) or _stem(found[0]) != _stem(path):
        return None  # a handler or page passing a request to one module is no wrapper: it has another name
    return found[0]


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


# name -> whether a file has the flag; each flag is demoted by the factor of that name (``files.factors``)
FLAGS = {
    "test": lambda view, path: view.is_test(path),
    "generated": lambda view, path: bool(GENERATED_NAME.search(path)) or path in view.generated,
    "nonproduct": lambda view, path: is_nonproduct_path(path),  # examples, docs, benchmarks, build configuration
    "shadowed_declaration": shadowed_declaration,  # `x.d.ts` beside the `x.ts` it is compiled from
    "wrapper": lambda view, path: wrapped_module(view, path) is not None,  # passes one import on, defines nothing
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
