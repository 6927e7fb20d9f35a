"""Scala: packages; classes, traits and objects with their members; public unless marked otherwise.

From one ``.scala``/``.sc`` file: its package; classes (case classes too), traits,
objects and top-level definitions that are not ``private``/``protected``, with their
public ``def``/``val``/``var`` members, signatures and the first line of the Scaladoc
above; imports; an ``object`` with ``def main`` (or ``extends App``) as an entry point.
``build.sbt`` gives the project's library dependencies.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol
from .java import jvm_resolve

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_sbt", "resolve_import", "external"]

LANGUAGE = Language(
    name="scala", label="Scala", extensions=(".scala", ".sc"), extra="scala", grammar="tree_sitter_scala",
    manifests=("build.sbt",), test_patterns=(r"(^|/)src/test/", r"(Spec|Test|Suite)\.scala$", r"(^|/)tests?/"),
)

_TYPES = {"class_definition": "class", "trait_definition": "trait", "object_definition": "object", "enum_definition": "enum"}
_MEMBERS = ("function_definition", "function_declaration", "val_definition", "var_definition", "val_declaration",
            "var_declaration", "type_definition")
_SBT_DEP = re.compile(r'"([\w.\-]+)"\s*%%?%?\s*"([\w.\-]+)"\s*%\s*"([^"]+)"')
_STD = ("scala.", "java.", "javax.")


def _hidden(src: bytes, node) -> bool:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    text = ts.text(src, mods) if mods is not None else ""
    return "private" in text or "protected" in text


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, ("block_comment", "comment"), doc_only="/**")


def _head(src: bytes, node) -> str:
    end = node.end_byte
    body = node.child_by_field_name("body")
    if body is not None:
        end = body.start_byte
    text = src[node.start_byte:end].decode("utf-8", errors="replace").rstrip().rstrip("=").rstrip()
    if node.type in ("val_definition", "var_definition"):
        value = node.child_by_field_name("value")
        if value is not None:
            text = src[node.start_byte:value.start_byte].decode("utf-8", errors="replace").rstrip().rstrip("=").rstrip()
    return ts.squash(re.sub(r"@\w+(\([^)]*\))?\s*", "", text))


def _name(src: bytes, node) -> str:
    found = node.child_by_field_name("name") or node.child_by_field_name("pattern")
    return ts.text(src, found)


def _definitions(src: bytes, container, prefix: str, visible: bool, facts: dict, exports: list, symbols: list,
                 members: list | None) -> None:
    for node in container.named_children:
        kind = node.type
        start, end = ts.lines(node)
        public = visible and not _hidden(src, node)
        if kind in _TYPES:
            name = _name(src, node)
            qual = prefix + name
            sig = _head(src, node)
            symbols.append(Symbol(qual, {"class": "class", "trait": "trait", "object": "class", "enum": "enum"}[_TYPES[kind]],
                                  start, end, public, sig))
            entry = {"kind": _TYPES[kind], "name": qual, "sig": sig, "doc": _doc(src, node), "members": []}
            position = len(exports)
            body = node.child_by_field_name("body")
            if body is not None:
                _definitions(src, body, qual + ".", public, facts, exports, symbols, entry["members"])
            if kind == "object_definition" and (any(m["name"] == "main" for m in entry["members"]) or " App" in sig):
                facts["main"] = f"sbt \"runMain {facts['unit'] + '.' if facts['unit'] else ''}{qual}\""
            if public:
                exports.insert(position, entry)
        elif kind in _MEMBERS:
            name = _name(src, node)
            sig = _head(src, node)
            skind = "method" if prefix and kind.startswith("function") else "function" if kind.startswith("function") else \
                "type" if kind == "type_definition" else "var"
            ts.add_definition(symbols, members if members is not None else exports, (start, end), prefix + name, skind, public,
                              sig, kind.split("_")[0], name, lambda: _doc(src, node))
        elif kind == "package_object":
            body = node.child_by_field_name("body")
            if body is not None:
                _definitions(src, body, prefix, visible, facts, exports, symbols, None)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Scala file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    facts, exports, symbols = ts.start_facts(unit="", imports=[])
    for node in root.named_children:
        if node.type == "package_clause":
            facts["unit"] = ts.text(raw, node.child_by_field_name("name"))
        elif node.type == "import_declaration":
            facts["imports"].append(re.sub(r"\s+", "", ts.text(raw, node)[len("import"):]).split("{")[0].rstrip("."))
    try:
        _definitions(raw, root, "", True, facts, exports, symbols, None)
    except RecursionError:
        return {"status": "unread", "reason": "nested too deeply"}
    facts["imports"] = [i for i in facts["imports"] if i]
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def parse_sbt(raw: bytes, path: str) -> dict:
    text = raw.decode("utf-8", errors="replace")
    declared = {f"{g}:{a}": f"{g}:{a} {v}" for g, a, v in _SBT_DEP.findall(text)}
    name = re.search(r'\bname\s*:=\s*"([^"]+)"', text)
    title = f"sbt project `{name.group(1)}`" if name else "sbt project"
    return {"status": "ok", "manifest": {"language": "scala", "title": title, "name": name.group(1) if name else "",
                                         "declared": declared, "entry_points": [], "members": []}}


MANIFEST_PARSERS = {"build.sbt": parse_sbt}


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    return jvm_resolve(spec if not spec.endswith("._") else spec[:-2] + ".*", ctx, (".scala", ".java"))


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    if spec.startswith(_STD) or spec in ("scala", "java"):
        return None
    manifest = ctx.nearest_manifest(from_path, "scala")
    parts = spec.split(".")
    for key, requirement in ((manifest or {}).get("declared") or {}).items():
        group, _, artifact = key.partition(":")
        # a package named after its artifact (cats-effect -> cats.effect) or sharing two groupId segments
        if spec.startswith(artifact.replace("-", ".") + ".") or parts[:2] == group.split(".")[:2]:
            return key, requirement, "build.sbt"
    return ".".join(parts[:2]), None, "build.sbt" if manifest else ""
