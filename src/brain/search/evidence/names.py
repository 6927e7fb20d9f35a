"""Evidence of names: dotted module paths, ``Class.member`` pairs, identifiers the code defines, file names.

A dotted name resolves through Python's module index (following a package's re-exports to the
module defining the name) or, in the other languages, through its path words (``module``); a
``Class.member`` pair a few files define (``qual``); an identifier equal to symbols the code
defines, by how few files define it, how code-like the word looks and the kind of definition,
each further symbol of one file adding less (``symbol``); an identifier equal to a file's
name (``stem``).
"""

from __future__ import annotations

from collections import defaultdict

__all__ = ["collect", "files_named", "resolve_words", "follow_reexports"]


def collect(task) -> None:
    view, sig, add, p = task.view, task.sig, task.add, task.params
    defs = task.definitions()
    view.files.prefetch(path for rows in defs.values() for path, _, _ in rows)  # each is asked whether a test
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
                target = follow_reexports(view, path, rest[0], defs)
                if target:
                    add(target, "module", 1.0, f"`{dotted}` defined here")
                else:
                    add(path, "module", 0.4, f"module of `{dotted}`")
            break
        if resolved:
            continue
        resolve_words(view, parts, defs, add, dotted)
        for a, b in zip(parts, parts[1:]):
            hits = quals.get(f"{a}.{b}", set()) - {q for q in quals.get(f"{a}.{b}", set()) if view.is_test(q)}
            if hits and len(hits) <= 5:
                for path in hits:
                    add(path, "qual", 1.0 / len(hits) ** 0.5, f"`{a}.{b}` defined here")

    kind_factor = p["kind_factor"]
    symbol_hits: dict[str, list[tuple[float, str]]] = defaultdict(list)
    view.by_stem.prefetch(word.lower() for word in sig.idents)  # each is looked up (files_named)
    for word, weight in sig.idents.items():
        rows = [r for r in defs.get(word, []) if not view.is_test(r[0])]
        per_file: dict[str, float] = {}
        for path, kind, _ in rows:
            per_file[path] = max(per_file.get(path, 0.0), kind_factor.get(kind, 0.5))
        if per_file and len(per_file) <= 40:
            idf = 1.0 / len(per_file) ** 0.8
            for path, factor in per_file.items():
                symbol_hits[path].append((weight * idf * factor, f"defines `{word}`"))
        stems = files_named(view, word, sig.in_traces_only)
        if stems and len(stems) <= 10:
            for path in stems:
                add(path, "stem", min(weight, 2.0) / len(stems) ** 0.8, f"file named `{word}`", name=len(stems) == 1)
    for path, found in symbol_hits.items():
        # each further matched symbol adds less: a big file defining many named things must not win by bulk
        for i, (value, reason) in enumerate(sorted(found, key=lambda f: -f[0])):
            add(path, "symbol", value * p["symbol_decay"] ** i, reason)


def files_named(view, word: str, in_traces_only: set[str] = frozenset()) -> list[str]:
    """Files whose name (without extension) is ``word``: a lower-case word matches any case of the
    name, a word with capitals only the name spelled the same (`RecyclerPool` -> `RecyclerPool.java`,
    `renderRepoCard` -> `renderRepoCard.js`; a capitalised English word does not reach `card.js`),
    when one file only is so named, and only where the text's own words write it (a traceback's
    files are weighed as its frames)."""
    files = view.by_stem.get(word.lower(), [])
    if word.islower() or not files:
        return files if word.islower() else []
    if word in in_traces_only:
        return []
    same = [p for p in files if p.rsplit("/", 1)[-1].split(".", 1)[0] == word]
    return same if len(same) == 1 else []  # a type's name names its one file, not a family (`x.c`, `x.h`)


def resolve_words(view, parts: list[str], defs: dict, add, written: str) -> bool:
    """A qualified name by its path words: ``com.x.Y``, ``tokio::sync::mpsc::Sender``, Go's ``pkg.Name``.

    The longest head of ``parts`` that is a module (file) or folder of the repository wins;
    the first word after it, when a file there defines it, points at that file. One word of
    head (a Go package, a C++ namespace) counts only with a defined name after it. Python
    files are left out: their dotted names were resolved exactly through the module index.
    """
    modules, folders = view.module_keys()
    for k in range(len(parts), 0, -1):
        key = "/".join(parts[:k]).lower()
        files = modules.get(key, [])
        folder = folders.get(key, [])
        if not files and not folder:
            continue
        rest = parts[k:]
        if rest:
            defined = {p for p, _, _ in defs.get(rest[0], ())}
            definers = sorted(p for p in {*files, *folder} if p in defined)
            if definers and len(definers) <= 5:
                for path in definers:
                    add(path, "module", 1.0 / len(definers) ** 0.5, f"`{written}` defined here")
                return True
        if rest and k >= 2:
            # the name lives elsewhere and is re-exported here (`pub use`, `export * from`): its few definers
            last = [p for p, kind, _ in defs.get(parts[-1], ()) if kind in ("class", "function", "macro")
                    and not view.is_test(p) and not p.endswith((".py", ".pyi"))]
            if 0 < len(set(last)) <= 2:
                for path in sorted(set(last)):
                    add(path, "module", 0.8 / len(set(last)), f"`{written}` defined here")
        if k >= 2 and files and len(files) <= 3:
            for path in files:
                add(path, "module", (0.4 if rest else 0.8) / len(files), f"module `{written}` named", name=not rest)
            return True
        if rest and k >= 2:
            return True
    return False


def follow_reexports(view, path: str, name: str, defs: dict) -> str | None:
    """The file defining ``name`` as seen from module file ``path`` (following re-exports)."""
    for _ in range(4):
        rows = defs.get(name)
        if rows and any(p == path for p, _, _ in rows):
            return path
        nxt = None
        for target in view.imports_of(path):
            if target.endswith("." + name):
                nxt = view.by_module.get(target[: -len(name) - 1])
                if nxt:
                    break
        if not nxt or nxt == path:
            return None
        path = nxt
    return None
