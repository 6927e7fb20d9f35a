"""The one extractor interface every language implements, and the registry keyed by extension.

A language module (``languages/go.py``, ``languages/rust.py``…) holds a ``LANGUAGE``
(:class:`Language`: what the language is, as data) and an ``extract(raw, path)``
function. Importing a language module is cheap and never imports its grammar: the
tree-sitter wheel is imported on the first ``extract`` call, so a repository without
Go files never loads the Go grammar, and a missing wheel becomes a file "not read"
with the extra to install, never a crash.

``extract(raw: bytes, path: str, *, dotted=None) -> dict`` (``dotted``: the Python module
name, for Python only) returns plain, picklable facts (cached per
content hash by the mapper). ``status`` is "ok" or "unread" (+ ``reason``). The keys an
"ok" result may carry, all optional, are the ones the language-independent renderer
reads (src/brain/cards/render.py, exposes.py and generic.py):

* ``exports``: ``[{"kind", "name", "sig", "doc", "members": [{"kind", "name", "sig", "doc"}]}]``
  the public API by the language's own rule (Go capitalised names, Rust ``pub``, Java
  ``public``, C/C++ declarations in public headers), with the doc comment's first line;
* ``unit``: what the language's users call the file's home (``package api`` for Go,
  ``tokio::sync::mpsc`` for Rust, ``com.example.Foo`` for Java); files of one unit and
  one folder are one Exposes block;
* ``public``: True for a file that is public by its place (a header under ``include/``),
  False for one that never is; None (the default) leaves it to ``exports``; a module
  with some ``public: True`` file exposes only those;
* ``imports``: import specifiers as written; ``routes``: ``[[METHOD, path, handler]]``;
* ``main``: a label for an entry point this file is (``go run ./cmd/api``), or absent;
* ``manifest``: facts of a manifest (go.mod, Cargo.toml, pom.xml, CMakeLists.txt…):
  ``{"title", "name", "declared": {name: requirement}, "entry_points": [[name, target, how]],
  "members": [...], "internal": [...]}``;
* ``test``: True for a test file (never exposed), ``partial``: the parse had errors;
* ``symbols``: ``list[Symbol]``, every definition of the file for the code index.

``Symbol`` is a stable shape other parts rely on (the code index, function-level
localization): ``qualname`` is dotted by the language's nesting (``Type.method``,
``ns::Class::method`` is written ``ns.Class.method``), ``kind`` one of
``function method class struct interface trait enum type macro const var``, ``start``
and ``end`` 1-based inclusive line numbers, ``exported`` the language's public rule,
``signature`` one line without the body.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field

__all__ = ["Symbol", "Language", "SYMBOL_KINDS", "LANGUAGE_MODULES", "languages", "language_for", "language_named",
           "manifest_language", "extract_with", "parse_manifest", "is_test_path", "missing_grammar", "join_relative"]

SYMBOL_KINDS = frozenset({"function", "method", "class", "struct", "interface", "trait", "enum", "type", "macro", "const", "var"})


@dataclass(frozen=True)
class Symbol:
    """One definition in a file, for the code index (see the module docstring; keep this shape stable)."""

    qualname: str
    kind: str        # function|method|class|struct|interface|trait|enum|type|macro|const|var
    start: int       # 1-based inclusive lines
    end: int
    exported: bool
    signature: str


@dataclass(frozen=True)
class Language:
    """What brain knows about one language, as data."""

    name: str                          # registry key and module kind: "go", "rust"…
    label: str                         # how cards name it: "Go", "Rust"…
    extensions: tuple[str, ...]        # lower-case, with the dot
    extra: str = ""                    # the agent-brain extra that brings its grammar ("" when none is needed)
    grammar: str = ""                  # import name of the tree-sitter wheel
    manifests: tuple[str, ...] = ()    # file names that mark a project root of this language
    test_patterns: tuple[str, ...] = ()   # regular expressions over the repository-relative path
    source_roots: tuple[str, ...] = ()    # folders below a project root where the code lives (src/main/java)
    _tests: tuple = field(default=(), compare=False, repr=False)

    def is_test(self, path: str) -> bool:
        if not self._tests and self.test_patterns:
            object.__setattr__(self, "_tests", tuple(re.compile(p) for p in self.test_patterns))
        return any(p.search(path) for p in self._tests)


# name -> dotted module implementing it (imported on first use, each cheap: no grammar at import)
LANGUAGE_MODULES = {
    "python": "brain.cards.languages.python",
    "typescript": "brain.cards.languages.typescript",
    "javascript": "brain.cards.languages.javascript",
    "go": "brain.cards.languages.go",
    "rust": "brain.cards.languages.rust",
    "java": "brain.cards.languages.java",
    "kotlin": "brain.cards.languages.kotlin",
    "c": "brain.cards.languages.c",
    "cpp": "brain.cards.languages.cpp",
    "csharp": "brain.cards.languages.csharp",
    "ruby": "brain.cards.languages.ruby",
    "php": "brain.cards.languages.php",
    "scala": "brain.cards.languages.scala",
    "swift": "brain.cards.languages.swift",
}

_LOADED: dict[str, object] = {}
_BY_EXT: dict[str, str] = {}
_BY_MANIFEST: dict[str, str] = {}


def _module(name: str):
    mod = _LOADED.get(name)
    if mod is None:
        mod = importlib.import_module(LANGUAGE_MODULES[name])
        _LOADED[name] = mod
    return mod


def languages() -> list[Language]:
    """Every registered language (their modules imported: data only, no grammar)."""
    out = [_module(name).LANGUAGE for name in LANGUAGE_MODULES]
    if not _BY_EXT:
        for lang in out:
            for ext in lang.extensions:
                _BY_EXT.setdefault(ext, lang.name)
            for manifest in lang.manifests:
                _BY_MANIFEST.setdefault(manifest, lang.name)
    return out


def language_named(name: str) -> Language | None:
    return _module(name).LANGUAGE if name in LANGUAGE_MODULES else None


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


def language_for(path: str) -> Language | None:
    """The language of a file by its extension, or None."""
    if not _BY_EXT:
        languages()
    name = _BY_EXT.get(_suffix(path))
    return _module(name).LANGUAGE if name else None


def manifest_language(file_name: str) -> Language | None:
    """The language whose manifest this file name is (go.mod -> Go), or None."""
    if not _BY_MANIFEST:
        languages()
    name = _BY_MANIFEST.get(file_name)
    return _module(name).LANGUAGE if name else None


def is_test_path(path: str) -> bool:
    lang = language_for(path)
    return bool(lang and lang.is_test(path))


def join_relative(from_path: str, spec: str) -> str:
    """``spec`` (``../util.h``, ``./models/user``) read from the folder of ``from_path``, as a repository path;
    a ``..`` above the root stays at the root (the caller then looks it up like any other path)."""
    folder = from_path.rpartition("/")[0]
    parts = folder.split("/") if folder else []
    for piece in spec.split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece not in ("", "."):
            parts.append(piece)
    return "/".join(parts)


def missing_grammar(lang: Language) -> dict:
    return {"status": "unread", "reason": f"{lang.label} grammar not installed (pip install 'agent-brain[{lang.extra}]')"}


def parse_manifest(file_name: str, raw: bytes, path: str) -> dict | None:
    """Facts of a manifest (go.mod, Cargo.toml, pom.xml…) by its language's parser, or None when none claims it."""
    lang = manifest_language(file_name)
    if lang is None:
        return None
    parser = getattr(_module(lang.name), "MANIFEST_PARSERS", {}).get(file_name)
    if parser is None:
        return None
    try:
        return parser(raw, path)
    except Exception as exc:  # noqa: BLE001 - a manifest that does not parse is a file not read
        return {"status": "unread", "reason": f"manifest not understood ({type(exc).__name__})"}


def extract_with(lang_name: str, raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Run one language's extractor; a missing grammar wheel is a file not read, naming the extra."""
    mod = _module(lang_name)
    try:
        facts = mod.extract(raw, path, dotted=dotted)
    except ImportError:
        return missing_grammar(mod.LANGUAGE)
    except RecursionError:
        return {"status": "unread", "reason": "nested too deeply"}
    if facts.get("status") == "ok":
        facts["lang"] = lang_name  # the module's label follows what its files were read as (.h: C or C++)
    if facts.get("test") and facts.get("routes"):
        facts["routes"] = []  # a test's routes are fixtures, not the module's API
    return facts
