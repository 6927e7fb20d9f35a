"""Kotlin: packages within Gradle/Maven modules; declarations are public unless marked otherwise.

From one ``.kt``/``.kts`` file: its package; public classes (data, enum, sealed…),
interfaces, objects, top-level functions (extension functions too), properties and type
aliases, with class members (public functions, properties, ``val``/``var`` constructor
parameters, companion object functions), signatures and the first KDoc line; imports;
a top-level ``fun main`` as an entry point; Spring mapping annotations as routes (the Java
rules). ``private``, ``internal`` and ``protected`` declarations are not exposed.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol
from .java import _join, _route_of, jvm_external, jvm_resolve

__all__ = ["describe_folder", "LANGUAGE", "extract", "resolve_import", "external"]

LANGUAGE = Language(
    name="kotlin", label="Kotlin", extensions=(".kt", ".kts"), extra="kotlin", grammar="tree_sitter_kotlin",
    manifests=(), test_patterns=(r"(^|/)src/test/", r"(^|/)src/[\w-]*[tT]est[\w-]*/", r"Tests?\.kt$", r"(^|/)test/"),
)

_HIDDEN = ("private", "internal", "protected")


def _mods(src: bytes, node) -> str:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return ts.text(src, mods) if mods is not None else ""


def _public(src: bytes, node) -> bool:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    if mods is None:
        return True
    return not any(ts.text(src, c) in _HIDDEN for c in mods.named_children if c.type == "visibility_modifier")


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, ("block_comment", "line_comment"), doc_only="/**")


def _name(src: bytes, node) -> str:
    found = node.child_by_field_name("name")
    if found is None:
        found = next((c for c in node.named_children if c.type in ("identifier", "type_identifier", "simple_identifier")), None)
    return ts.text(src, found)


def _head(src: bytes, node, stop_types: tuple[str, ...]) -> str:
    """The declaration's text up to its body, annotations dropped."""
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    start = node.start_byte
    if mods is not None:
        kept = [ts.text(src, c) for c in mods.named_children if c.type != "annotation"]
        prefix = " ".join(kept)
        start = mods.end_byte
    else:
        prefix = ""
    end = node.end_byte
    for child in node.named_children:
        if child.type in stop_types:
            end = child.start_byte
            break
    body = src[start:end].decode("utf-8", errors="replace")
    return ts.squash((prefix + " " + body).strip(), 140).rstrip(" =")


def _function(src: bytes, node, prefix: str, public: bool, symbols: list) -> dict:
    name = _name(src, node)
    sig = _head(src, node, ("function_body",))
    start, end = ts.lines(node)
    symbols.append(Symbol(prefix + name, "method" if prefix else "function", start, end, public, sig))
    return {"kind": "fun", "name": name, "sig": sig, "doc": _doc(src, node)}


def _class(src: bytes, node, prefix: str, parent_public: bool, facts: dict, exports: list, symbols: list) -> None:
    name = _name(src, node)
    qual = prefix + name
    public = parent_public and _public(src, node)
    head = _head(src, node, ("class_body", "enum_class_body"))
    text = ts.text(src, node)
    kind = "interface" if " interface " in f" {head} " or text.lstrip().startswith("interface") else \
        "enum" if node.type == "class_declaration" and "enum" in head.split(name)[0] else \
        "object" if node.type == "object_declaration" else "class"
    start, end = ts.lines(node)
    symbols.append(Symbol(qual, "interface" if kind == "interface" else "enum" if kind == "enum" else "class", start, end,
                          public, head))
    position = len(exports)
    members: list[dict] = []
    base_route = (_route_of(_mods(src, node)) or ("", ""))[1]
    ctor = next((c for c in node.named_children if c.type == "primary_constructor"), None)
    if ctor is not None:
        for param in ts.descendants(ctor, "class_parameter"):
            ptext = ts.text(src, param)
            if ptext.lstrip().startswith(("val ", "var ")) or " val " in ptext or " var " in ptext:
                pname = _name(src, param)
                p_public = public and _public(src, param)
                p_start, p_end = ts.lines(param)
                ts.add_definition(symbols, members, (p_start, p_end), f"{qual}.{pname}", "var", p_public, ts.squash(ptext, 100),
                                  "property", pname)
    body = next((c for c in node.named_children if c.type in ("class_body", "enum_class_body")), None)
    items = list(body.named_children) if body is not None else []
    for item in list(items):
        if item.type == "companion_object":
            inner = next((c for c in item.named_children if c.type == "class_body"), None)
            items.extend(inner.named_children if inner is not None else [])
    for item in items:
        if item.type == "function_declaration":
            m_public = public and _public(src, item)
            entry = _function(src, item, qual + ".", m_public, symbols)
            if m_public:
                members.append(entry)
            route = _route_of(_mods(src, item))
            if route is not None:
                facts["routes"].append([route[0], _join(base_route, route[1]), f"{name}.{entry['name']}"])
        elif item.type == "property_declaration":
            p_public = public and _public(src, item)
            var = next((c for c in item.named_children if c.type == "variable_declaration"), None)
            pname = _name(src, var if var is not None else item)
            sig = _head(src, item, ("string_literal", "call_expression", "number_literal", "property_delegate"))
            i_start, i_end = ts.lines(item)
            ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{pname}", "var", p_public, sig, "property", pname,
                              lambda: _doc(src, item))
        elif item.type == "enum_entry":
            ename = _name(src, item)
            e_start, e_end = ts.lines(item)
            ts.add_definition(symbols, members, (e_start, e_end), f"{qual}.{ename}", "const", public, ename, "constant", ename)
        elif item.type in ("class_declaration", "object_declaration"):
            _class(src, item, qual + ".", public, facts, exports, symbols)
    ts.add_type(exports, position, public, kind, qual, head, lambda: _doc(src, node), members)



_ONE_LINE_CLOSE = re.compile(rb"(?<=[^\s{;])[ \t](?=\})")


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Kotlin file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if root is not None and root.has_error and _ONE_LINE_CLOSE.search(raw):
        # the grammar wants a separator before a one-line body's `}` (`object O { val x = 1 }`): the space before
        # it becomes `;` (same offsets, same lines), kept only when that parse is clean
        patched = _ONE_LINE_CLOSE.sub(b";", raw)
        fixed, fixed_err = ts.parse(LANGUAGE.grammar, patched)
        if fixed is not None and not fixed_err and not fixed.has_error:
            root, raw = fixed, patched
    if err:
        return err
    src = raw
    facts, exports, symbols = ts.start_facts(unit="", imports=[], routes=[])
    for node in root.named_children:
        kind = node.type
        if kind == "package_header":
            ident = next((c for c in node.named_children if c.type in ("qualified_identifier", "identifier")), None)
            facts["unit"] = ts.text(src, ident)
        elif kind in ("import", "import_header", "import_list"):
            for imp in ([node] if kind != "import_list" else node.named_children):
                ident = next((c for c in imp.named_children if c.type in ("qualified_identifier", "identifier")), None)
                spec = ts.text(src, ident)
                if ts.text(src, imp).rstrip().endswith("*"):
                    spec += ".*"
                if spec:
                    facts["imports"].append(spec)
        elif kind in ("class_declaration", "object_declaration"):
            _class(src, node, "", True, facts, exports, symbols)
        elif kind == "function_declaration":
            public = _public(src, node)
            entry = _function(src, node, "", public, symbols)
            if public:
                exports.append(entry)
            if entry["name"] == "main":
                stem = path.rpartition("/")[2].rsplit(".", 1)[0]
                facts["main"] = f"kotlin {facts['unit'] + '.' if facts['unit'] else ''}{stem[:1].upper()}{stem[1:]}Kt"
        elif kind in ("property_declaration", "type_alias"):
            public = _public(src, node)
            var = next((c for c in node.named_children if c.type == "variable_declaration"), None)
            name = _name(src, var if var is not None else node)
            sig = _head(src, node, ("string_literal", "call_expression", "number_literal", "property_delegate")) \
                if kind == "property_declaration" else ts.squash(ts.text(src, node), 120)
            start, end = ts.lines(node)
            ts.add_definition(symbols, exports, (start, end), name, "type" if kind == "type_alias" else "var", public, sig,
                              "typealias" if kind == "type_alias" else "val", name, lambda: _doc(src, node))
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    return jvm_resolve(spec, ctx, (".kt", ".java"))


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    return jvm_external(spec, from_path, ctx, "build.gradle.kts")


from .java import describe_folder  # noqa: E402,F401 - same package naming as Java
