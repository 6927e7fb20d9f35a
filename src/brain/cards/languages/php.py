"""PHP: namespaces, classes with their public members, functions; packages from composer.json.

From one ``.php`` file: its namespace; classes, interfaces, traits and enums with their
public methods, constants and properties (methods without a visibility are public), and
functions, with the signature and the first line of the ``/** */`` doc above; ``use``
imports; Laravel ``Route::get('/p', …)`` and Slim-style ``$app->get('/p', …)`` routes.
``composer.json`` gives the package, its requirements, its ``bin`` scripts and its PSR-4
namespace roots (used to resolve ``use`` statements to folders).
"""

from __future__ import annotations

import json

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_composer", "resolve_import", "external"]

LANGUAGE = Language(
    name="php", label="PHP", extensions=(".php",), extra="php", grammar="tree_sitter_php",
    manifests=("composer.json",), test_patterns=(r"(^|/)tests?/", r"Test\.php$"),
)

_TYPES = {"class_declaration": "class", "interface_declaration": "interface", "trait_declaration": "trait",
          "enum_declaration": "enum"}
_VERBS = {"get", "post", "put", "patch", "delete", "options", "any", "match"}


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, ("comment",), doc_only="/**")


def _visibility(src: bytes, node) -> str:
    vis = next((c for c in node.named_children if c.type == "visibility_modifier"), None)
    return ts.text(src, vis) if vis is not None else "public"


def _sig(src: bytes, node, name: str) -> str:
    params = node.child_by_field_name("parameters")
    ret = node.child_by_field_name("return_type")
    sig = f"function {name}{ts.text(src, params) if params is not None else '()'}"
    if ret is not None:
        sig += f": {ts.text(src, ret)}"
    return ts.squash(sig)


def _type(src: bytes, node, namespace: str, exports: list, symbols: list) -> None:
    kind = _TYPES[node.type]
    name = ts.text(src, node.child_by_field_name("name"))
    start, end = ts.lines(node)
    heritage = " ".join(ts.text(src, c) for c in node.named_children if c.type in ("base_clause", "class_interface_clause"))
    sig = ts.squash(f"{kind} {name} {heritage}".strip(), 140)
    symbols.append(Symbol(name, {"class": "class", "interface": "interface", "trait": "trait", "enum": "enum"}[kind],
                          start, end, True, sig))
    members: list[dict] = []
    body = node.child_by_field_name("body")
    for item in (body.named_children if body is not None else []):
        i_start, i_end = ts.lines(item)
        public = _visibility(src, item) == "public"
        if item.type == "method_declaration":
            mname = ts.text(src, item.child_by_field_name("name"))
            msig = _sig(src, item, mname)
            ts.add_definition(symbols, members, (i_start, i_end), f"{name}.{mname}", "method", public, msig, "method", mname,
                              lambda: _doc(src, item))
        elif item.type in ("const_declaration", "property_declaration"):
            for element in item.named_children:
                if element.type in ("const_element", "property_element"):
                    ident = next((c for c in element.named_children if c.type in ("name", "variable_name")), None)
                    ename = ts.text(src, ident)
                    const = item.type == "const_declaration"
                    ts.add_definition(symbols, members, (i_start, i_end), f"{name}.{ename.lstrip('$')}",
                                      "const" if const else "var", public, ename, "const" if const else "property", ename,
                                      lambda: _doc(src, item))
        elif item.type == "enum_case":
            cname = ts.text(src, item.child_by_field_name("name"))
            members.append({"kind": "case", "name": cname, "sig": cname, "doc": ""})
    exports.append({"kind": kind, "name": f"{namespace}\\{name}" if namespace else name, "sig": sig, "doc": _doc(src, node),
                    "members": members})


def _routes(src: bytes, root) -> list[list[str]]:
    routes = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("scoped_call_expression", "member_call_expression"):
            name = ts.text(src, node.child_by_field_name("name")).lower()
            args = node.child_by_field_name("arguments")
            first = next((a for a in (args.named_children if args is not None else [])), None)
            literal = first.named_children[0] if first is not None and first.named_children else None
            if name in _VERBS and literal is not None and literal.type in ("string", "encapsed_string"):
                route = ts.text(src, literal)[1:-1]
                if route.startswith("/"):
                    rest = args.named_children[1:] if args is not None else []
                    handler = ts.squash(ts.text(src, rest[-1]), 48) if rest else ""
                    routes.append(["ANY" if name in ("any", "match") else name.upper(), route, handler])
        stack.extend(node.named_children)
    return sorted(routes)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one PHP file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw, function="language_php")
    if err:
        return err
    src = raw
    facts, exports, symbols = ts.start_facts(unit="", imports=[])
    for node in root.named_children:
        kind = node.type
        if kind == "namespace_definition":
            facts["unit"] = ts.text(src, node.child_by_field_name("name"))
        elif kind == "namespace_use_declaration":
            for clause in node.named_children:
                if clause.type == "namespace_use_clause":
                    ident = next((c for c in clause.named_children if c.type in ("qualified_name", "name")), None)
                    if ident is not None:
                        facts["imports"].append(ts.text(src, ident).lstrip("\\"))
        elif kind in _TYPES:
            _type(src, node, facts["unit"], exports, symbols)
        elif kind == "function_definition":
            name = ts.text(src, node.child_by_field_name("name"))
            sig = _sig(src, node, name)
            start, end = ts.lines(node)
            symbols.append(Symbol(name, "function", start, end, True, sig))
            exports.append({"kind": "function", "name": name, "sig": sig, "doc": _doc(src, node)})
    facts["routes"] = _routes(src, root) if b"get(" in src or b"post(" in src else []
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def parse_composer(raw: bytes, path: str) -> dict:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return {"status": "unread", "reason": f"not valid JSON ({type(exc).__name__})"}
    if not isinstance(data, dict):
        return {"status": "unread", "reason": "not a JSON object"}
    declared = {}
    for key, suffix in (("require", ""), ("require-dev", " (dev)")):
        table = data.get(key)
        if isinstance(table, dict):
            for name, version in table.items():
                if name != "php" and not str(name).startswith("ext-"):
                    declared.setdefault(str(name), f"{name} {version}{suffix}")
    psr4 = {}
    autoload = data.get("autoload") if isinstance(data.get("autoload"), dict) else {}
    for prefix, folders in (autoload.get("psr-4") or {}).items() if isinstance(autoload.get("psr-4"), dict) else []:
        first = folders[0] if isinstance(folders, list) and folders else folders
        if isinstance(first, str):
            psr4[str(prefix)] = first
    bins = data.get("bin") if isinstance(data.get("bin"), list) else []
    name = data.get("name") if isinstance(data.get("name"), str) else ""
    return {"status": "ok", "manifest": {"language": "php", "title": f"Composer package `{name}`" if name else "Composer package",
                                         "name": name, "declared": declared, "psr4": psr4,
                                         "entry_points": [[str(b).rpartition("/")[2], str(b), "composer bin"] for b in bins],
                                         "members": []}}


MANIFEST_PARSERS = {"composer.json": parse_composer}


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """A class of the repository through composer.json PSR-4 roots (App\\Models\\User -> src/Models/User.php)."""
    for folder, manifest in ctx.manifests("php"):
        for prefix, target in (manifest.get("psr4") or {}).items():
            if prefix and spec.startswith(prefix):
                rest = spec[len(prefix):].replace("\\", "/")
                return "/".join(p for p in (folder, target.strip("/"), rest) if p)
    return None


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    manifest = ctx.nearest_manifest(from_path, "php")
    vendor = spec.split("\\", 1)[0]
    if manifest is None or "\\" not in spec:
        return None
    for name, requirement in (manifest.get("declared") or {}).items():
        if name.split("/", 1)[0].replace("-", "").lower() == vendor.lower():
            return name, requirement, "composer.json"
    return vendor, None, "composer.json"
