"""Evidence of neighbours: what the lending passes need, read from the repository for the files that may be the best.

``ranking.combine`` lends a share of the best few files' scores to their neighbours; which
files are the best depends on the weights, so the neighbours are read here for every
candidate (and for the files that became the best under the gathering weights), and
``combine`` needs no repository. Each rule (what counts as a neighbour, a hub, a twin, an
override, a sibling, an entry point) is applied here except those that depend on which files
are the best: those ``combine`` applies.
"""

from __future__ import annotations

import posixpath

from ...records import field, record
from ..buildscripts import package_build_scripts
from ..code import is_nonproduct_path
from ..history import cochanged
from ..traps import served_by
from ..ranking import Evidence, Links
from ..weights import Weights
from . import types
from .folder import folder_mates, namesakes
from .task import flags_of

__all__ = ["Context", "collect_links", "declaration_twins", "entry_importers", "extends", "type_name", "C_FAMILY", "JS_EXTS"]

JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
C_FAMILY = (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh")
_DECLARATION_EXTS = (".d.ts", ".d.mts", ".d.cts")  # TypeScript declarations of a JavaScript module
_DECLARED_EXTS = (".js", ".mjs", ".cjs", ".jsx")
_CALLABLE = ("function", "method", "decl")


@record
class Context:
    """What the link reading needs from the text besides the files: the code-like names it writes
    (with their weight in the text), their definitions, and the inner modules it does not name."""

    code_named: dict[str, float] = field(default_factory=dict)
    defs: dict = field(default_factory=dict)
    aside: list[str] = field(default_factory=list)
    flagged: set[str] = field(default_factory=set)  # files whose flags are read
    definers: dict[str, list[str]] | None = None  # file -> named callables it defines (see ``_overrides``)
    callables: dict[str, set[str]] = field(default_factory=dict)  # named callable -> its few definers
    trap: object = None  # path -> its trap flag for this task (search.traps.trap_flag), or None
    changes: dict[str, int] = field(default_factory=dict)  # how often each file changed (co-change, read once)


def declaration_twins(files, path: str) -> list[str]:
    """The files of ``files`` that declare or are declared by ``path``, beside it: `x.js` <-> `x.d.ts`,
    and one declaration in its other module flavours (`index.d.ts` <-> `index.d.cts`, `index.d.mts`)."""
    for ext in _DECLARATION_EXTS:
        if path.endswith(ext):
            base = path[: -len(ext)]
            return [base + e for e in (*_DECLARATION_EXTS, *_DECLARED_EXTS) if base + e != path and base + e in files]
    base, ext = posixpath.splitext(path)
    if ext in _DECLARED_EXTS:
        return [base + e for e in _DECLARATION_EXTS if base + e in files]
    return []


def type_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


def names_type(view, path: str, type_file: str) -> bool:
    """Whether a class header of ``path`` names the type of ``type_file`` (`extends B`, `implements B`):
    the bare type names a file's headers record among its imports."""
    return type_name(type_file) in view.imports_of(path)


def extends(view, a: str, b: str) -> bool:
    """Whether a class header of one file names the other's type (`extends B`, `implements B`)."""
    return names_type(view, a, b) or names_type(view, b, a)


def collect_links(view, evidence: Evidence, paths, context: Context, weights: Weights, every: bool = False) -> None:
    """Read the ``Links`` of each of ``paths`` into ``evidence`` (and the flags of every file they name);
    the links no share of ``weights`` lends along are read only with ``every`` (for a fitter)."""
    p = weights.params
    shares = weights.shares
    forward, backward = view.import_graph()
    users: dict[str, set[str]] = {}
    names = [w for w, weight in context.code_named.items() if weight >= p["min_method_codeness"]]
    for seed in paths:
        found = evidence.file(seed)
        if found.links is not None:
            continue
        if seed not in context.flagged:
            found.flags = flags_of(view, seed, context.aside, context.trap)
            context.flagged.add(seed)
        links = Links()
        near_all = (forward.get(seed, set()) | backward.get(seed, set())) - {seed}
        if len(near_all) <= p["max_neighbours"]:
            links.near = sorted(q for q in near_all if q in view.files and not view.is_test(q))
        else:
            links.near = None
        stem, ext = posixpath.splitext(seed)
        if ext in C_FAMILY:
            name = posixpath.basename(stem)
            twins = [q for q in view.by_stem.get(name.lower(), []) if q != seed and q.endswith(C_FAMILY)
                     and (q.endswith(".h") or q.endswith(".hpp")) != (ext in (".h", ".hpp", ".hh"))]
            if 0 < len(twins) <= 2:
                links.twins = [q for q in twins if q in view.files and not view.is_test(q)]
        links.overrides = _overrides(view, seed, near_all, context, p)
        links.siblings = _siblings(view, seed, forward, backward, names, users, p)
        folder = posixpath.dirname(seed)
        # and the declarations beside it that it takes its types from (`@param {import("./types").Options}`)
        beside = [q for q in sorted(forward.get(seed, ()))
                  if q.endswith(_DECLARATION_EXTS) and posixpath.dirname(q) == folder]
        links.declarations = [q for q in declaration_twins(view.files, seed) + beside if not view.is_test(q)]
        if seed.endswith(JS_EXTS):
            links.entries = entry_importers(view, seed, backward, p)
        links.cochange = cochanged(view, seed, context.changes)  # files changing with it (HEAD's history)
        links.forward, links.build = served_by(view, seed)  # its forward headers, its crate's build script
        links.package_build = package_build_scripts(view, seed)  # setup.py, Gruntfile.js, rollup.config.js
        if every or shares["folder"] > 0 or shares["namesake"] > 0:  # read only when they lend (0031)
            links.folder = folder_mates(view, seed, p["max_folder"], C_FAMILY)  # beside it (evidence.folder)
            links.namesakes = namesakes(view, seed, p["max_namesakes"])
        if every or shares["kin"] > 0:  # the types it is tied to, one type per file (evidence.types)
            links.kin = types.kin(view, seed, forward, backward, names_type, p["max_kin"])
        if every or shares["family"] > 0:
            links.family = types.family(view, seed, p["max_family"])
        if every or shares["users"] > 0:
            links.users = types.users(view, seed, p["max_type_users"])
        found.links = links
        for target in _targets(links):
            if target not in context.flagged:
                evidence.file(target).flags = flags_of(view, target, context.aside, context.trap)
                context.flagged.add(target)


def entry_importers(view, seed: str, backward, p: dict) -> list[str] | None:
    """The JavaScript entry points importing ``seed``: product files nothing imports (a request handler, a
    command, a page); None when ``seed`` is imported all over (a hub lends nothing)."""
    importers = backward.get(seed, set())
    if len(importers) > p["max_neighbours"]:
        return None
    return sorted(q for q in importers if q.endswith(JS_EXTS) and not backward.get(q) and not view.is_test(q)
                  and not is_nonproduct_path(q))


def _targets(links: Links) -> list[str]:
    out = [*(links.near or ()), *links.twins, *(q for _, q in links.overrides), *links.declarations,
           *(links.entries or ()), *(q for q, _, _ in links.cochange), *links.forward,
           *([links.build] if links.build else []), *links.package_build,
           *links.folder, *links.namesakes, *links.kin, *links.family,
           *(links.users or ())]
    for _, siblings, _ in links.siblings:
        out.extend(siblings)
    return out


def _callable_definers(view, context: Context, p: dict) -> dict[str, list[str]]:
    """file -> the code-like names the text writes that it defines as a callable, when few files do
    (`size`, `print` are defined all over: no sign of one method and its overrides); words in the text's order."""
    if context.definers is None:
        found: dict[str, list[str]] = {}
        for word, weight in context.code_named.items():
            if weight < p["min_method_codeness"]:
                continue
            definers = {q for q, kind, _ in context.defs.get(word, ()) if kind in _CALLABLE and not view.is_test(q)}
            if len(definers) > p["max_overriders"] + 1:
                continue
            for q in definers:
                found.setdefault(q, []).append(word)
            context.callables[word] = definers
        context.definers = found
    return context.definers


def _overrides(view, seed: str, near: set[str], context: Context, p: dict) -> list[tuple[str, str]]:
    """(method, file) pairs: a file linked to ``seed`` by an import and `extends` that defines a callable the
    text names which ``seed`` defines too."""
    out = []
    for word in _callable_definers(view, context, p).get(seed, ()):
        for path in sorted(context.callables[word] & near):
            if extends(view, path, seed):
                out.append((word, path))
    return out


def _siblings(view, seed: str, forward, backward, names: list[str], users: dict, p: dict) -> list:
    """(base type, sibling subclasses, [(named word, the siblings writing it)]) for each base ``seed``
    extends: subclasses of the same base writing a code-like name the text names and ``seed`` writes."""
    out = []
    for base in sorted(forward.get(seed, ())):
        if not names_type(view, seed, base) or len(backward.get(base, ())) > p["max_base_importers"]:
            continue  # imported, not extended; or a base imported all over
        siblings = [q for q in sorted(backward.get(base, ())) if q != seed and not view.is_test(q)
                    and names_type(view, q, base)]
        if not siblings or len(siblings) > p["max_siblings"] + p["neighbour_seeds"]:
            continue  # none, or too many even once the best files are left out
        words = []
        for word in names:
            if word not in users:
                users[word] = set(view.files_writing(word, p["max_users"] + 1))
            found = users[word]
            if seed not in found or len(found) > p["max_users"]:
                continue
            words.append((word, [q for q in siblings if q in found]))
        out.append((type_name(base), siblings, words))
    return out
