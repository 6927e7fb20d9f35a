"""TypeScript/JavaScript extraction with tree-sitter (the `typescript` extra).

From one file: exported functions, classes (with public methods), interfaces, types,
enums and constants with their signatures and the first line of their JSDoc;
re-exports; CommonJS `module.exports`/`exports.x`; imported specifiers (ES imports,
`export ... from`, `require()`, dynamic `import()`); Express-style routes
(`app.get("/path", ...)`, `router.post(...)`, `app.route("/p").get(...)`).
Importing this module fails with ImportError when tree-sitter is absent; the caller
(``languages.typescript`` and ``languages.javascript``, behind the extractor interface) then lists
the file as not read. Its symbols, with line ranges, are the code index's (``symbols_of``).
"""

from __future__ import annotations

import tree_sitter
import tree_sitter_typescript

from . import _treesitter as ts
from .base import Symbol

__all__ = ["extract", "symbols_of"]

_LANGS: dict[str, tree_sitter.Language] = {}
_PARSERS: dict[str, tree_sitter.Parser] = {}
_QUERIES: dict[str, tuple] = {}
MAX_SIG = 160
ROUTE_METHODS = ("get", "post", "put", "patch", "delete", "head", "options", "all")

_CALLS = """
(call_expression function: (identifier) @fn arguments: (arguments . (string (string_fragment) @arg)))
(call_expression function: (import) arguments: (arguments . (string (string_fragment) @dyn)))
(call_expression function: (member_expression object: (_) @obj property: (property_identifier) @method)
                 arguments: (arguments . (string (string_fragment) @path))) @call
(call_expression function: (member_expression
    object: (call_expression function: (member_expression property: (property_identifier) @route_fn)
                             arguments: (arguments . (string (string_fragment) @route_path)))
    property: (property_identifier) @chained) arguments: (arguments (_) @chained_handler .)) @chained_call
"""


def _lang(dialect: str) -> tree_sitter.Language:
    if dialect not in _LANGS:
        if dialect == "js":  # JavaScript files: the JavaScript grammar (the `javascript` extra)
            import tree_sitter_javascript

            raw = tree_sitter_javascript.language()
        else:
            raw = tree_sitter_typescript.language_tsx() if dialect == "tsx" else tree_sitter_typescript.language_typescript()
        _LANGS[dialect] = tree_sitter.Language(raw)
    return _LANGS[dialect]


def _parser(dialect: str) -> tree_sitter.Parser:
    if dialect not in _PARSERS:
        _PARSERS[dialect] = tree_sitter.Parser(_lang(dialect))
    return _PARSERS[dialect]


def _query(dialect: str):
    if dialect not in _QUERIES:
        query = tree_sitter.Query(_lang(dialect), _CALLS)
        _QUERIES[dialect] = (query,)
    return _QUERIES[dialect][0]


def _text(src: bytes, node) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _squash(text: str, limit: int = MAX_SIG) -> str:
    text = " ".join(text.split())
    text = text.replace("( ", "(").replace(", )", ")").replace(",)", ")").replace(" )", ")").replace("< ", "<").replace(", >", ">")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _doc(src: bytes, node) -> str:
    prev = node.prev_named_sibling
    if prev is None or prev.type != "comment":
        return ""
    text = _text(src, prev)
    if not text.startswith("/**"):
        return ""
    for line in text[3:-2].splitlines():
        line = line.strip().lstrip("*").strip()
        if line and not line.startswith("@"):
            line = line.replace("<!--", "<!-").replace("-->", "->")
            line = line if line.count("`") % 2 == 0 else line.replace("`", "'")
            return line if len(line) <= 110 else line[:109] + "…"
    return ""


def _params_sig(src: bytes, node, name: str) -> str:
    params = node.child_by_field_name("parameters")
    ret = node.child_by_field_name("return_type")
    tparams = node.child_by_field_name("type_parameters")
    sig = name + (_text(src, tparams) if tparams else "") + (_text(src, params) if params else "()")
    if ret is not None:
        sig += _text(src, ret)
    return _squash(sig)


def _class_members(src: bytes, body) -> list[str]:
    members = []
    for child in body.named_children:
        if child.type not in ("method_definition", "public_field_definition", "method_signature", "abstract_method_signature"):
            continue
        mods = {_text(src, c) for c in child.children if c.type in ("accessibility_modifier",)}
        if mods & {"private", "protected"}:
            continue
        name_node = child.child_by_field_name("name")
        if name_node is None or name_node.type == "private_property_identifier":
            continue
        name = _text(src, name_node)
        if child.type == "public_field_definition":
            continue
        members.append(name)
    return members


def _declaration(src: bytes, node, doc_node) -> list[dict]:
    """Entries for one exported declaration node."""
    kind = node.type
    doc = _doc(src, doc_node)
    name_node = node.child_by_field_name("name")
    name = _text(src, name_node) if name_node is not None else "default"
    if kind in ("function_declaration", "generator_function_declaration", "function_signature", "function_expression"):
        return [{"kind": "function", "name": name, "sig": _params_sig(src, node, name), "doc": doc}]
    if kind in ("class_declaration", "abstract_class_declaration", "class"):
        heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
        sig = name + (" " + _squash(_text(src, heritage), 100) if heritage is not None else "")
        body = node.child_by_field_name("body")
        members = _class_members(src, body) if body is not None else []
        return [{"kind": "class", "name": name, "sig": sig, "doc": doc, "members": members}]
    if kind == "interface_declaration":
        return [{"kind": "interface", "name": name, "sig": name, "doc": doc}]
    if kind == "type_alias_declaration":
        value = node.child_by_field_name("value")
        sig = name + (" = " + _squash(_text(src, value), 100) if value is not None else "")
        return [{"kind": "type", "name": name, "sig": sig, "doc": doc}]
    if kind == "enum_declaration":
        return [{"kind": "enum", "name": name, "sig": name, "doc": doc}]
    if kind in ("lexical_declaration", "variable_declaration"):
        out = []
        keyword = "const" if _text(src, node).startswith("const") else "let" if _text(src, node).startswith("let") else "var"
        for decl in node.named_children:
            if decl.type != "variable_declarator":
                continue
            dname_node = decl.child_by_field_name("name")
            if dname_node is None or dname_node.type != "identifier":
                continue
            dname = _text(src, dname_node)
            value = decl.child_by_field_name("value")
            type_ann = decl.child_by_field_name("type")
            if value is not None and value.type in ("arrow_function", "function_expression", "function"):
                out.append({"kind": "function", "name": dname, "sig": _params_sig(src, value, dname), "doc": doc})
            else:
                sig = dname + (_text(src, type_ann) if type_ann is not None else "")
                out.append({"kind": keyword, "name": dname, "sig": _squash(sig), "doc": doc})
        return out
    if kind == "internal_module" or kind == "module":
        return [{"kind": "namespace", "name": name, "sig": name, "doc": doc}]
    return []


def _string_value(src: bytes, node) -> str | None:
    if node is None or node.type != "string":
        return None
    frag = next((c for c in node.named_children if c.type == "string_fragment"), None)
    return _text(src, frag) if frag is not None else ""


def extract(text: str, *, path: str = "<file>", dialect: str | None = None) -> dict:
    """Facts of one TS/JS file: exports, imports, routes. ``dialect``: ts | tsx | js (default by extension)."""
    src = text.encode("utf-8")
    dialect = dialect or ("tsx" if path.endswith((".tsx", ".jsx")) else "ts")
    try:
        tree = ts.bounded_parse(_parser(dialect), src)
    except TimeoutError as exc:
        return {"status": "unread", "reason": f"{exc} (a pathological file)"}
    except Exception as exc:  # noqa: BLE001 - tree-sitter errors become a file not read
        return {"status": "unread", "reason": f"parse failed ({type(exc).__name__})"}
    root = tree.root_node
    exports: list[dict] = []
    imports: list[str] = []
    for node in root.named_children:
        if node.type == "export_statement":
            source = _string_value(src, node.child_by_field_name("source"))
            if source is not None:
                imports.append(source)
            decl = node.child_by_field_name("declaration")
            is_default = any(c.type == "default" for c in node.children)
            if decl is not None:
                entries = _declaration(src, decl, node)
                if is_default:
                    for e in entries:
                        e["kind"] = "default"
                exports.extend(entries)
                continue
            value = node.child_by_field_name("value")
            if is_default and value is not None:
                entries = _declaration(src, value, node)
                if entries:
                    for e in entries:
                        e["kind"] = "default"
                    exports.extend(entries)
                else:
                    exports.append({"kind": "default", "name": "default", "sig": _squash(_text(src, value), 80), "doc": _doc(src, node)})
                continue
            clause = next((c for c in node.named_children if c.type == "export_clause"), None)
            if clause is not None:
                for spec in clause.named_children:
                    if spec.type != "export_specifier":
                        continue
                    alias = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                    exports.append({"kind": "reexport" if source is not None else "const", "name": _text(src, alias),
                                    "sig": _text(src, alias), "doc": "", "from": source or ""})
            elif source is not None:
                ns = next((c for c in node.named_children if c.type == "namespace_export"), None)
                exports.append({"kind": "reexport", "name": _text(src, ns).split()[-1] if ns is not None else "*",
                                "sig": "*", "doc": "", "from": source})
        elif node.type == "import_statement":
            source = _string_value(src, node.child_by_field_name("source"))
            if source is not None:
                imports.append(source)
        elif node.type == "expression_statement":
            expr = node.named_children[0] if node.named_children else None
            if expr is not None and expr.type == "assignment_expression":
                left = _text(src, expr.child_by_field_name("left"))
                right = expr.child_by_field_name("right")
                if left == "module.exports" and right is not None:
                    if right.type == "object":
                        for prop in right.named_children:
                            key = prop.child_by_field_name("key") if prop.type == "pair" else prop
                            if key is not None and prop.type in ("pair", "shorthand_property_identifier", "method_definition"):
                                if prop.type == "method_definition":
                                    key = prop.child_by_field_name("name")
                                exports.append({"kind": "const", "name": _text(src, key), "sig": _text(src, key), "doc": ""})
                    else:
                        entries = _declaration(src, right, node) if right.type in ("function_expression", "class", "arrow_function") else []
                        exports.extend(dict(e, kind="default") for e in entries) if entries else exports.append(
                            {"kind": "default", "name": "module.exports", "sig": _squash(_text(src, right), 60), "doc": ""})
                elif left.startswith("exports.") or left.startswith("module.exports."):
                    name = left.rsplit(".", 1)[1]
                    if right is not None and right.type in ("function_expression", "arrow_function", "function"):
                        exports.append({"kind": "function", "name": name, "sig": _params_sig(src, right, name),
                                        "doc": _doc(src, node)})
                    else:
                        exports.append({"kind": "const", "name": name, "sig": name, "doc": _doc(src, node)})
    routes: list[list[str]] = []
    cursor = tree_sitter.QueryCursor(_query(dialect))
    for _pattern, caps in cursor.matches(root):
        if "fn" in caps and "arg" in caps:
            if _text(src, caps["fn"][0]) == "require":
                imports.append(_text(src, caps["arg"][0]))
        elif "dyn" in caps:
            imports.append(_text(src, caps["dyn"][0]))
        elif "method" in caps and "path" in caps:
            method = _text(src, caps["method"][0])
            route = _text(src, caps["path"][0])
            if method in ROUTE_METHODS and route.startswith("/"):
                call = caps["call"][0]
                args = call.child_by_field_name("arguments")
                handler = ""
                if args is not None and len(args.named_children) > 1:
                    last = args.named_children[-1]
                    handler = _squash(_text(src, last), 48) if last.type in ("identifier", "member_expression") else "(inline)"
                routes.append([method.upper() if method != "all" else "ANY", route, handler])
        elif "chained" in caps and "route_path" in caps:
            method = _text(src, caps["chained"][0])
            route = _text(src, caps["route_path"][0])
            if _text(src, caps["route_fn"][0]) == "route" and method in ROUTE_METHODS and route.startswith("/"):
                last = caps["chained_handler"][0]
                handler = _squash(_text(src, last), 48) if last.type in ("identifier", "member_expression") else "(inline)"
                routes.append([method.upper() if method != "all" else "ANY", route, handler])
    seen = set()
    unique = []
    for e in exports:
        key = (e["kind"], e["name"], e.get("from", ""))
        if key not in seen:
            seen.add(key)
            unique.append(e)
    facts = {"status": "ok", "exports": unique, "imports": sorted(set(imports)), "routes": routes}
    facts["symbols"] = symbols_of(src, root, {e["name"] for e in unique})  # the code index's shape (base.Symbol)
    if root.has_error:
        facts["partial"] = True
    return facts


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
