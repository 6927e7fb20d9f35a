"""TypeScript behind the extractor interface: the tree-sitter reader of ``brain.cards.typescript``, plus symbols.

Grammar: ``tree-sitter-typescript`` (the `typescript` extra).
"""

from __future__ import annotations

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["LANGUAGE", "extract", "symbols_of", "NODE_TEST_PATTERNS"]

NODE_TEST_PATTERNS = (r"\.(test|spec)\.[cm]?[jt]sx?$", r"(^|/)__tests__/", r"(^|/)tests?/")

LANGUAGE = Language(
    name="typescript", label="TypeScript", extensions=(".ts", ".tsx", ".mts", ".cts"), extra="typescript",
    grammar="tree_sitter_typescript", manifests=("package.json", "tsconfig.json"), test_patterns=NODE_TEST_PATTERNS,
)

_KINDS = {"function_declaration": "function", "generator_function_declaration": "function", "class_declaration": "class",
          "abstract_class_declaration": "class", "interface_declaration": "interface", "type_alias_declaration": "type",
          "enum_declaration": "enum", "function_signature": "function"}


def _first_line(src: bytes, node) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    return ts.squash(src[node.start_byte:end].decode("utf-8", errors="replace"))


def symbols_of(src: bytes, root, exported_names: set[str]) -> list[Symbol]:
    """Top-level declarations (and class methods) of a TS/JS tree, with 1-based line ranges."""
    out: list[Symbol] = []
    for top in root.named_children:
        exported = top.type == "export_statement"
        node = top.child_by_field_name("declaration") if exported else top
        if exported and node is None:
            node = top.child_by_field_name("value")
        if node is None:
            continue
        kind = _KINDS.get(node.type)
        start, end = ts.lines(top)
        if kind:
            name = ts.text(src, node.child_by_field_name("name")) or "default"
            out.append(Symbol(name, kind, start, end, exported or name in exported_names, _first_line(src, node)))
            body = node.child_by_field_name("body")
            if kind == "class" and body is not None:
                for member in body.named_children:
                    if member.type in ("method_definition", "method_signature", "abstract_method_signature"):
                        mname = ts.text(src, member.child_by_field_name("name"))
                        private = mname.startswith("#") or any(
                            ts.text(src, c) in ("private", "protected") for c in member.children if c.type == "accessibility_modifier")
                        m_start, m_end = ts.lines(member)
                        out.append(Symbol(f"{name}.{mname}", "method", m_start, m_end,
                                          (exported or name in exported_names) and not private, _first_line(src, member)))
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type != "variable_declarator":
                    continue
                name_node = decl.child_by_field_name("name")
                if name_node is None or name_node.type != "identifier":
                    continue
                name = ts.text(src, name_node)
                value = decl.child_by_field_name("value")
                is_fn = value is not None and value.type in ("arrow_function", "function_expression", "function")
                d_start, d_end = ts.lines(decl)
                out.append(Symbol(name, "function" if is_fn else ("const" if ts.text(src, node).startswith("const") else "var"),
                                  d_start if len(node.named_children) > 1 else start, d_end if len(node.named_children) > 1 else end,
                                  exported or name in exported_names, ts.squash(ts.text(src, decl).split("=>")[0], 120)))
    return out


def extract(raw: bytes, path: str, *, dotted: str | None = None, dialect: str | None = None) -> dict:
    """Facts of one TypeScript file (``brain.cards.typescript.extract``) with its ``symbols``."""
    bad = ts.decode_or_unread(raw)
    if bad:
        return bad
    from ..typescript import extract as extract_ts

    facts = extract_ts(raw.decode("utf-8"), path=path, dialect=dialect)
    if LANGUAGE.is_test(path):
        facts["test"] = True
    return facts
