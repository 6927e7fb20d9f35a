"""The direct evidence of a task text: what it points at, each kind recorded at unit weight.

A feature's value is the score a file gains per unit of that feature's weight (the weights
live in ``weights.json``); the order of the calls is the order the reasons are listed in.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..code import is_nonproduct_path
from ..ranking import Evidence
from ..weights import Weights

__all__ = ["Context", "gather_direct", "flags_of"]


@dataclass
class Context:
    """What the link reading needs from the text besides the files: the code-like names it writes
    (with their weight in the text), their definitions, and the inner modules it does not name."""

    code_named: dict[str, float] = field(default_factory=dict)
    defs: dict = field(default_factory=dict)
    aside: list[str] = field(default_factory=list)
    flagged: set[str] = field(default_factory=set)  # files whose flags are read
    definers: dict[str, list[str]] | None = None  # file -> named callables it defines (see links)
    callables: dict[str, set[str]] = field(default_factory=dict)  # named callable -> its few definers


def flags_of(view, path: str, aside: list[str]) -> list[str]:
    """The demotion flags of a file (see ``files.factors`` of the weights)."""
    from ..locate import GENERATED_NAME

    flags = []
    if view.is_test(path):
        flags.append("test")
    if GENERATED_NAME.search(path) or path in view.generated:
        flags.append("generated")
    if is_nonproduct_path(path):
        flags.append("nonproduct")
    if aside and any(path.startswith(folder + "/") for folder in aside):
        flags.append("nested")
    return flags


def gather_direct(view, text: str | None, *, changed=(), claimed=(), module: str | None = None,
                  weights: Weights) -> tuple[Evidence, Context]:
    """The evidence ``text`` (and the working state) gives each file, before any file lends to another."""
    from .. import locate as L

    p = weights.params
    sig = L.extract_signals(text, strip_urls=p["strip_urls"])
    ev = Evidence()
    add = ev.add

    # 1. traceback frames and written paths
    inside = [(f, fn, view.resolve_path(f)) for f, fn in sig.frames]
    inside = [(f, fn, hits) for f, fn, hits in inside if hits]
    met: set[str] = set()
    for i, (_, fn, hits) in enumerate(inside):
        last = i == len(inside) - 1
        depth = (i + 1) / len(inside)  # later frames are closer to the fault
        feature = "frame_last" if last else "frame"
        value = 1.0 if last else 0.5 + 0.5 * depth
        for path in hits:
            # one file met in many frames counts once (plus a little), not once per frame
            add(path, feature, p["frame_repeat"] * value if path in met else value,
                f"traceback frame{f' in {fn}' if fn else ''}")
            met.add(path)
    for written, weight in sig.paths:
        hits = view.resolve_path(written)
        for path in hits:
            add(path, "path", weight / 2 / len(hits), f"path `{written}` in the task", name=True)
    for written in dict.fromkeys(sig.module_paths):
        L.resolve_module_path(view, written, add)
    for route in sig.routes:
        L.resolve_route(view, route, add)

    # 2. dotted module paths and Class.member pairs
    names: set[str] = set(sig.idents)
    for dotted in sig.dotted:
        names.update(dotted.split("."))
    defs = view.definitions(sorted(names))
    quals: dict[str, set[str]] = defaultdict(set)
    for rows in defs.values():
        for path, kind, qual in rows:
            quals[qual].add(path)
    seen_dotted: set[str] = set()
    for dotted in sig.dotted:
        if dotted in seen_dotted:
            continue
        seen_dotted.add(dotted)
        parts = dotted.split(".")
        resolved = False
        for k in range(len(parts), 1, -1):
            path = view.by_module.get(".".join(parts[:k]))
            if path is None:
                continue
            rest = parts[k:]
            resolved = True
            if not rest:
                add(path, "module", 0.5 if path.endswith("__init__.py") else 1.0, f"module `{dotted}` named", name=True)
            else:
                target = L.follow_reexports(view, path, rest[0], defs)
                if target:
                    add(target, "module", 1.0, f"`{dotted}` defined here")
                else:
                    add(path, "module", 0.4, f"module of `{dotted}`")
            break
        if resolved:
            continue
        L.resolve_words(view, parts, defs, add, dotted)
        for a, b in zip(parts, parts[1:]):
            hits = quals.get(f"{a}.{b}", set()) - {q for q in quals.get(f"{a}.{b}", set()) if view.is_test(q)}
            if hits and len(hits) <= 5:
                for path in hits:
                    add(path, "qual", 1.0 / len(hits) ** 0.5, f"`{a}.{b}` defined here")

    # 3. identifiers matching definitions, and file names
    kind_factor = p["kind_factor"]
    symbol_hits: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for word, weight in sig.idents.items():
        rows = [r for r in defs.get(word, []) if not view.is_test(r[0])]
        per_file: dict[str, float] = {}
        for path, kind, _ in rows:
            per_file[path] = max(per_file.get(path, 0.0), kind_factor.get(kind, 0.5))
        if per_file and len(per_file) <= 40:
            idf = 1.0 / len(per_file) ** 0.8
            for path, factor in per_file.items():
                symbol_hits[path].append((weight * idf * factor, f"defines `{word}`"))
        stems = L.files_named(view, word, sig.in_traces_only)
        if stems and len(stems) <= 10:
            for path in stems:
                add(path, "stem", min(weight, 2.0) / len(stems) ** 0.8, f"file named `{word}`", name=len(stems) == 1)
    for path, found in symbol_hits.items():
        # each further matched symbol adds less: a big file defining many named things must not win by bulk
        for i, (value, reason) in enumerate(sorted(found, key=lambda f: -f[0])):
            add(path, "symbol", value * p["symbol_decay"] ** i, reason)

    # 4. full text: the whole text, and the title alone (the report's one-line summary)
    # (inflected words of the whole text reach their stems; the title's few words are taken as written, and those
    # the code never writes as they are reach their stems in a lighter pass of their own: `coloring` -> color*,
    # while `formatting`, written in a formatting library, stays itself)
    for words, feature, stems in ((sig.words, "bm25", p["stem_prefixes"]), (sig.title_words, "bm25_title", False),
                                  (sig.title_words, "bm25_title_stem", "only-absent")):
        ranked = view.bm25(words, 60, stems=stems, names_weight=p["names_weight"])
        if ranked:
            top = ranked[0][1] or 1.0
            for path, s in ranked:
                add(path, feature, s / top, "full-text match")

    # 4b. quoted text (a pasted message, a usage line) found verbatim in a few files
    L.quoted_evidence(view, sig.quoted, add, p)

    # the command line: its options, exit codes and environment are read by the program's `main`
    if sig.cli:
        entries = view.entry_points()
        if 0 < len(entries) <= p["max_entry_files"]:
            for path in entries:
                add(path, "entry", 1.0 / len(entries), "the program's entry point (the title is about its command line)")

    # 5. working state
    for path in changed:
        if path in view.files and not view.is_test(path):
            add(path, "changed", 1.0, "changed in the working tree")
    for path in claimed:
        for hit in view.resolve_path(path) if path in view.files or "/" in path else []:
            add(hit, "claimed", 1.0, "claimed by this session")
    if module:
        prefix = module.replace(".", "/").strip("/") + "/"
        for path in ev.candidates:
            if path.startswith(prefix):
                add(path, "in_module", 1.0, f"in module `{module}`")

    context = Context({w: v for w, v in sig.idents.items() if w in sig.code_like},  # never a capitalised prose word
                      defs, L.unnamed_modules(view, sig))
    for path, found in ev.files.items():
        found.flags = flags_of(view, path, context.aside)
        context.flagged.add(path)
    return ev, context
