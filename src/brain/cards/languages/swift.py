"""Swift: ``public``/``open`` declarations are the API (Swift's default is internal).

From one ``.swift`` file: public and open classes, structs, enums (with their cases),
protocols, extensions' public members, functions and properties, with signatures and the
first ``///`` line; imports; ``@main`` types and ``main.swift`` as entry points; Vapor
routes (``app.get("a", "b") { … }``). ``Package.swift`` is the package's manifest.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_package_swift", "resolve_import", "external"]

LANGUAGE = Language(
    name="swift", label="Swift", extensions=(".swift",), extra="swift", grammar="tree_sitter_swift",
    manifests=("Package.swift",), test_patterns=(r"(^|/)Tests/", r"Tests?\.swift$"),
)

_PUBLIC = ("public", "open")
_DEP = re.compile(r'\.package\s*\(\s*(?:name:\s*"[^"]*"\s*,\s*)?url:\s*"([^"]+)"\s*,\s*([^)]*)\)')
_VAPOR = re.compile(rb'\bapp\.(get|post|put|patch|delete)\s*\(((?:\s*"[^"]*"\s*,?)*)')


def _public(src: bytes, node) -> bool:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    if mods is None:
        return False
    return any(ts.text(src, c) in _PUBLIC for c in mods.named_children if c.type == "visibility_modifier")


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, ("comment", "multiline_comment"), doc_only="///")


def _head(src: bytes, node) -> str:
    end = node.end_byte
    for child in node.named_children:
        if child.type in ("class_body", "enum_class_body", "protocol_body", "function_body", "computed_property"):
            end = child.start_byte
            break
    text = src[node.start_byte:end].decode("utf-8", errors="replace")
    if node.type == "property_declaration":
        text = text.split("=", 1)[0]
    return ts.squash(re.sub(r"^(@\w+\s*)+", "", text.strip()))


def _name(src: bytes, node) -> str:
    found = node.child_by_field_name("name")
    if found is None:
        found = next((c for c in node.named_children if c.type in ("type_identifier", "simple_identifier", "pattern",
                                                                   "user_type")), None)
    return ts.text(src, found)


def _kind(src: bytes, node) -> str:
    head = ts.text(src, node)[:200]
    for word in ("protocol", "extension", "enum", "struct", "actor", "class"):
        if re.search(rf"\b{word}\b", head.split("{")[0]):
            return word
    return "class"


def _members(src: bytes, body, qual: str, public_scope: bool, symbols: list, in_protocol: bool) -> list[dict]:
    members = []
    for item in (body.named_children if body is not None else []):
        start, end = ts.lines(item)
        public = public_scope and (in_protocol or _public(src, item))
        if item.type in ("function_declaration", "protocol_function_declaration", "init_declaration",
                         "property_declaration", "protocol_property_declaration", "subscript_declaration"):
            name = "init" if item.type == "init_declaration" else _name(src, item)
            sig = _head(src, item)
            ts.add_definition(symbols, members, (start, end), f"{qual}.{name}", "var" if "property" in item.type else "method",
                              public, sig, item.type.split("_")[0], name, lambda: _doc(src, item))
        elif item.type == "enum_entry":
            for case in item.named_children:
                if case.type == "simple_identifier":
                    cname = ts.text(src, case)
                    symbols.append(Symbol(f"{qual}.{cname}", "const", start, end, public_scope, cname))
                    if public_scope:
                        members.append({"kind": "case", "name": cname, "sig": f"case {cname}", "doc": _doc(src, item)})
    return members


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Swift file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    src = raw
    facts, exports, symbols = ts.start_facts(imports=[], routes=[])
    for node in root.named_children:
        kind = node.type
        start, end = ts.lines(node)
        if kind == "import_declaration":
            facts["imports"].append(ts.text(src, node).split(None, 1)[-1].strip())
        elif kind in ("class_declaration", "protocol_declaration"):
            word = "protocol" if kind == "protocol_declaration" else _kind(src, node)
            name = _name(src, node)
            public = _public(src, node) or word == "extension"
            sig = _head(src, node)
            symbols.append(Symbol(name, {"protocol": "interface", "enum": "enum", "struct": "struct", "extension": "type"}
                                  .get(word, "class"), start, end, _public(src, node), sig))
            body = node.child_by_field_name("body") or next(
                (c for c in node.named_children if c.type in ("class_body", "enum_class_body", "protocol_body")), None)
            members = _members(src, body, name, public, symbols, word == "protocol")
            if (public and word != "extension") or (word == "extension" and members):
                exports.append({"kind": word, "name": name, "sig": sig, "doc": _doc(src, node), "members": members})
            if "@main" in ts.text(src, node)[:200]:
                facts["main"] = "swift run"
        elif kind in ("function_declaration", "property_declaration"):
            name = _name(src, node)
            public = _public(src, node)
            sig = _head(src, node)
            ts.add_definition(symbols, exports, (start, end), name, "function" if kind == "function_declaration" else "var",
                              public, sig, kind.split("_")[0], name, lambda: _doc(src, node))
    for method, parts in _VAPOR.findall(src):
        segments = [p.strip().strip('"') for p in parts.decode("utf-8", "replace").split(",") if p.strip()]
        facts["routes"].append([method.decode().upper(), "/" + "/".join(segments), "(closure)"])
    if path.rpartition("/")[2] == "main.swift":
        facts["main"] = "swift run"
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def parse_package_swift(raw: bytes, path: str) -> dict:
    text = raw.decode("utf-8", errors="replace")
    declared = {}
    for url, version in _DEP.findall(text):
        name = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        declared[name] = f"{name} ({' '.join(version.split())})"
    name = re.search(r'Package\s*\(\s*name:\s*"([^"]+)"', text)
    return {"status": "ok", "manifest": {"language": "swift", "title": f"Swift package `{name.group(1)}`" if name else "Swift package",
                                         "name": name.group(1) if name else "", "declared": declared, "entry_points": [],
                                         "members": []}}


MANIFEST_PARSERS = {"Package.swift": parse_package_swift}


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """A module of the package: SwiftPM keeps target X in Sources/X."""
    return ctx.find_suffix(f"Sources/{spec}")


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    if spec in ("Foundation", "Swift", "UIKit", "AppKit", "SwiftUI", "Combine", "Dispatch", "XCTest", "os", "Darwin", "Glibc"):
        return None
    manifest = ctx.nearest_manifest(from_path, "swift")
    declared = (manifest or {}).get("declared") or {}
    for name, requirement in declared.items():
        if name.lower().replace("-", "") == spec.lower():
            return name, requirement, "Package.swift"
    return spec, None, "Package.swift" if manifest else ""
