"""JavaScript behind the extractor interface: ESM and CommonJS, read with the JavaScript grammar.

Decision: ``.js``/``.jsx``/``.mjs``/``.cjs`` files are parsed with ``tree-sitter-javascript``
(the `javascript` extra), which reads JSX in ``.js`` files and never mistakes ``a < b > c``
for a TypeScript generic; the extraction itself is the TypeScript reader's (the node
types of both grammars coincide: exports, ``module.exports``/``exports.x``, ``require``,
dynamic ``import()``, Express routes). When only the `typescript` extra is installed the
TSX dialect of the TypeScript grammar reads them instead, so nothing that worked before
stops working.
"""

from __future__ import annotations

from .base import Language
from .typescript import NODE_TEST_PATTERNS

__all__ = ["LANGUAGE", "extract", "grammar_dialect"]

LANGUAGE = Language(
    name="javascript", label="JavaScript", extensions=(".js", ".jsx", ".mjs", ".cjs"), extra="javascript",
    grammar="tree_sitter_javascript", manifests=("package.json",), test_patterns=NODE_TEST_PATTERNS,
)

_DIALECT: list[str] = []


def grammar_dialect() -> str:
    """``js`` when tree-sitter-javascript is installed, else ``tsx`` (ImportError when neither is)."""
    if not _DIALECT:
        try:
            import tree_sitter_javascript  # noqa: F401
            _DIALECT.append("js")
        except ImportError:
            import tree_sitter_typescript  # noqa: F401 - raises ImportError: the file is listed as not read
            _DIALECT.append("tsx")
    return _DIALECT[0]


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    from .typescript import extract as extract_ts

    facts = extract_ts(raw, path, dialect=grammar_dialect())
    if facts.get("status") == "ok" and LANGUAGE.is_test(path):
        facts["test"] = True
    return facts
