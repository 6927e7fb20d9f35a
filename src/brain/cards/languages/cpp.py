"""C++: libraries and their public headers, read with the C++ grammar.

Everything C has (see c.py), plus namespaces (``detail``/``internal`` ones are not
public), classes and structs with their public members (``public:`` sections; a
``struct`` starts public, a ``class`` private), templates with their parameter lists
and ``using`` aliases. A ``.h`` header that uses C++ (classes, namespaces, templates) is
read here rather than by the C extractor.
"""

from __future__ import annotations

from .base import Language
from .c import extract_c_family

__all__ = ["LANGUAGE", "extract", "resolve_import", "external"]

LANGUAGE = Language(
    name="cpp", label="C++", extensions=(".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl", ".tpp"),
    extra="cpp", grammar="tree_sitter_cpp", manifests=(),
    test_patterns=(r"(^|/)tests?/", r"(^|/)unittests?/", r"_test\.(cc|cpp|cxx)$", r"(^|/)test_[^/]*\.(cc|cpp|cxx)$",
                   r"_unittest\.(cc|cpp)$"),
)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one C++ file (see c.py for the keys)."""
    return extract_c_family(raw, path, LANGUAGE.grammar, LANGUAGE)


from .c import external, resolve_import  # noqa: E402 - same include rules as C
