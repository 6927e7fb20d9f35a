"""TypeScript behind the extractor interface: the tree-sitter reader is ``ts_reader`` (imported on first use).

Grammar: ``tree-sitter-typescript`` (the `typescript` extra).
"""

from __future__ import annotations

from . import _treesitter as ts
from .base import Language

__all__ = ["LANGUAGE", "extract", "NODE_TEST_PATTERNS"]

NODE_TEST_PATTERNS = (r"\.(test|spec)\.[cm]?[jt]sx?$", r"(^|/)__tests__/", r"(^|/)tests?/")

LANGUAGE = Language(
    name="typescript", label="TypeScript", extensions=(".ts", ".tsx", ".mts", ".cts"), extra="typescript",
    grammar="tree_sitter_typescript", manifests=("package.json", "tsconfig.json"), test_patterns=NODE_TEST_PATTERNS,
)


def extract(raw: bytes, path: str, *, dotted: str | None = None, dialect: str | None = None) -> dict:
    """Facts of one TypeScript file (``ts_reader.extract``) with its ``symbols``."""
    bad = ts.decode_or_unread(raw)
    if bad:
        return bad
    from .ts_reader import extract as extract_ts

    facts = extract_ts(raw.decode("utf-8"), path=path, dialect=dialect)
    if LANGUAGE.is_test(path):
        facts["test"] = True
    return facts
