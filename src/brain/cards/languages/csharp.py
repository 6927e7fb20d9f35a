"""C#: namespaces and ``public`` types and members.

From one ``.cs`` file: its namespace (block or file-scoped); public classes, interfaces,
structs, enums and records (nested public ones too) with their public methods,
constructors, properties and fields (interface members are public unless private), each
with its signature and the first line of its ``///`` doc (XML tags dropped); ``using``
directives; ``static void Main`` as an entry point; ASP.NET routes from ``[Route]`` on
the controller with ``[HttpGet("…")]``… on actions, and minimal-API ``app.MapGet("/p", h)``.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["LANGUAGE", "extract", "resolve_import", "external"]

LANGUAGE = Language(
    name="csharp", label="C#", extensions=(".cs",), extra="csharp", grammar="tree_sitter_c_sharp",
    manifests=(), test_patterns=(r"(^|/)[\w.]*Tests?/", r"Tests?\.cs$", r"(^|/)tests?/"),
)

_TYPES = {"class_declaration": "class", "interface_declaration": "interface", "struct_declaration": "struct",
          "enum_declaration": "enum", "record_declaration": "record", "record_struct_declaration": "record struct"}
_SYMBOL_KIND = {"class": "class", "interface": "interface", "struct": "struct", "enum": "enum", "record": "class",
                "record struct": "struct"}
_HTTP_ATTR = re.compile(r"\[\s*Http(Get|Post|Put|Delete|Patch|Head|Options)\s*(?:\(\s*\"([^\"]*)\"\s*\))?")
_ROUTE_ATTR = re.compile(r"\[\s*Route\s*\(\s*\"([^\"]*)\"")
_MAP_CALL = re.compile(rb"\.Map(Get|Post|Put|Delete|Patch)\s*\(\s*\"(/[^\"]*)\"\s*,\s*([A-Za-z_][\w.]*)?")
_TAG = re.compile(r"<[^>]+>")
_STD = ("System", "Microsoft")


def _mods(src: bytes, node) -> set[str]:
    return {ts.text(src, c) for c in node.named_children if c.type == "modifier"}


def _attrs(src: bytes, node) -> str:
    return " ".join(ts.text(src, c) for c in node.named_children if c.type == "attribute_list")


def _doc(src: bytes, node) -> str:
    line = ts.doc_before(src, node, ("comment",), doc_only="///")
    return ts.clean_doc(_TAG.sub("", line)) if line else ""


def _head(src: bytes, node) -> str:
    """The declaration without attributes and body."""
    start = node.start_byte
    for child in node.named_children:
        if child.type == "attribute_list":
            start = child.end_byte
    end = node.end_byte
    for child in node.named_children:
        if child.type in ("declaration_list", "block", "arrow_expression_clause", "enum_member_declaration_list",
                          "accessor_list", "constructor_initializer"):
            end = child.start_byte
            break
    text = src[start:end].decode("utf-8", errors="replace").strip().rstrip(";").strip()
    return ts.squash(re.sub(r"^(public|internal|sealed|static|abstract|partial|readonly|virtual|override|async)\s+", "",
                            re.sub(r"^(public|internal|sealed|static|abstract|partial|readonly|virtual|override|async)\s+", "",
                                   text)))


def _join(base: str, path: str) -> str:
    return "/" + "/".join(p for p in (base.strip("/"), path.strip("/")) if p)


def _type(src: bytes, node, prefix: str, visible: bool, facts: dict, exports: list, symbols: list,
          in_interface: bool = False) -> None:
    kind = _TYPES[node.type]
    name = ts.text(src, node.child_by_field_name("name"))
    mods = _mods(src, node)
    public = visible and ("public" in mods or (in_interface and "private" not in mods))
    qual = prefix + name
    sig = _head(src, node)
    start, end = ts.lines(node)
    symbols.append(Symbol(qual, _SYMBOL_KIND[kind], start, end, public, sig))
    position = len(exports)
    members: list[dict] = []
    route_attr = _ROUTE_ATTR.search(_attrs(src, node))
    base_route = route_attr.group(1) if route_attr else ""
    base_route = base_route.replace("[controller]", name[:-len("Controller")].lower() if name.endswith("Controller") else name.lower())
    is_interface = kind == "interface"
    body = node.child_by_field_name("body") or next(
        (c for c in node.named_children if c.type in ("declaration_list", "enum_member_declaration_list")), None)
    for item in (body.named_children if body is not None else []):
        itype = item.type
        if itype in _TYPES:
            _type(src, item, qual + ".", public, facts, exports, symbols, is_interface)
            continue
        imods = _mods(src, item)
        m_public = public and ("public" in imods or (is_interface and "private" not in imods))
        i_start, i_end = ts.lines(item)
        if itype in ("method_declaration", "constructor_declaration", "property_declaration", "operator_declaration"):
            mname = ts.text(src, item.child_by_field_name("name")) or ("operator" if itype == "operator_declaration" else "")
            msig = _head(src, item)
            ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{mname}",
                              "var" if itype == "property_declaration" else "method", m_public, msig,
                              itype.split("_")[0], mname, lambda: _doc(src, item))
            http = _HTTP_ATTR.search(_attrs(src, item))
            if http:
                facts["routes"].append([http.group(1).upper(), _join(base_route, http.group(2) or ""), f"{name}.{mname}"])
            if mname == "Main" and "static" in imods:
                facts["main"] = "dotnet run"
        elif itype in ("field_declaration", "event_field_declaration"):
            for decl in ts.descendants(item, "variable_declarator"):
                fname = ts.text(src, decl.child_by_field_name("name") or next(
                    (c for c in decl.named_children if c.type == "identifier"), None))
                fsig = ts.squash(_head(src, item).split("=")[0], 100)
                ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{fname}", "const" if "const" in imods else "var",
                                  m_public, fsig, "field", fname, lambda: _doc(src, item))
        elif itype == "enum_member_declaration":
            ename = ts.text(src, item.child_by_field_name("name"))
            ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{ename}", "const", public, ename, "constant", ename,
                              lambda: _doc(src, item))
    ts.add_type(exports, position, public, kind, qual, sig, lambda: _doc(src, node), members)



def _walk(src: bytes, container, facts: dict, exports: list, symbols: list) -> None:
    for node in container.named_children:
        kind = node.type
        if kind == "using_directive":
            ident = next((c for c in node.named_children if c.type in ("qualified_name", "identifier")), None)
            if ident is not None:
                facts["imports"].append(ts.text(src, ident))
        elif kind in ("namespace_declaration", "file_scoped_namespace_declaration"):
            facts["unit"] = ts.text(src, node.child_by_field_name("name"))
            body = node.child_by_field_name("body")
            if body is not None:
                _walk(src, body, facts, exports, symbols)
        elif kind in _TYPES:
            _type(src, node, "", True, facts, exports, symbols)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one C# file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    facts, exports, symbols = ts.start_facts(unit="", imports=[], routes=[])
    _walk(raw, root, facts, exports, symbols)
    for method, route, handler in _MAP_CALL.findall(raw):
        facts["routes"].append([method.decode().upper(), route.decode("utf-8", "replace"),
                                handler.decode("utf-8", "replace") if handler else "(inline)"])
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """A namespace of the repository: the folder whose path ends with its segments (Shop.Models -> …/Shop/Models)."""
    parts = spec.split(".")
    while parts:
        found = ctx.find_suffix("/".join(parts))
        if found and not found.endswith(".cs"):
            return found
        parts = parts[1:] if len(parts) > 1 else []
    return None


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    if spec.split(".", 1)[0] in _STD:
        return None
    return ".".join(spec.split(".")[:2]), None, ""
