"""Go: packages are folders, exported names are capitalised, go.mod declares the module.

From one ``.go`` file: the package name and its doc, exported functions, types (with
their exported methods, struct fields and interface methods), constants and variables
with signatures and the first doc-comment line; import paths; ``package main`` with
``func main`` as an entry point; routes declared through net/http (``HandleFunc``,
``Handle``, Go 1.22 ``"GET /path"`` patterns), gin/echo/chi-style ``r.GET("/p", h)`` and
go-zero ``rest.Route{Method:, Path:, Handler:}`` tables. ``go.mod``/``go.work`` give the
module path, the required modules and the workspace members.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_go_mod", "external_name", "is_stdlib", "resolve_import", "external",
           "describe_folder", "entry_label"]

LANGUAGE = Language(
    name="go", label="Go", extensions=(".go",), extra="go", grammar="tree_sitter_go",
    manifests=("go.mod", "go.work"), test_patterns=(r"_test\.go$", r"(^|/)testdata/"),
)

ROUTE_METHODS = {"HandleFunc": "ANY", "Handle": "ANY", "GET": "GET", "POST": "POST", "PUT": "PUT", "DELETE": "DELETE",
                 "PATCH": "PATCH", "HEAD": "HEAD", "OPTIONS": "OPTIONS", "Any": "ANY", "Get": "GET", "Post": "POST",
                 "Put": "PUT", "Delete": "DELETE", "Patch": "PATCH", "Head": "HEAD", "Options": "OPTIONS"}
_HTTP_METHOD_CONST = re.compile(r"Method(Get|Post|Put|Delete|Patch|Head|Options|Connect|Trace)$")
_PATTERN = re.compile(r"^(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|CONNECT|TRACE) +(/\S*)$")

_QUERY = """
(call_expression function: (selector_expression field: (field_identifier) @method)
                 arguments: (argument_list . [(interpreted_string_literal) (raw_string_literal)] @path)) @call
(composite_literal body: (literal_value) @table)
"""
_QUERIES: dict = {}


def _exported(name: str) -> bool:
    return bool(name) and name[0].isupper()


def _string(src: bytes, node) -> str:
    raw = ts.text(src, node)
    return raw[1:-1] if len(raw) >= 2 else raw


def _func_sig(src: bytes, node, name: str, *, receiver: bool) -> str:
    tparams = node.child_by_field_name("type_parameters")
    params = node.child_by_field_name("parameters")
    result = node.child_by_field_name("result")
    sig = name + (ts.text(src, tparams) if tparams is not None else "") + (ts.text(src, params) if params is not None else "()")
    if result is not None:
        sig += " " + ts.text(src, result)
    if receiver:
        return ts.squash(sig)
    return ts.squash("func " + sig)


def _receiver_type(src: bytes, node) -> str:
    recv = node.child_by_field_name("receiver")
    if recv is None:
        return ""
    raw = ts.text(src, recv).strip("()").split()
    typ = raw[-1] if raw else ""
    typ = typ.lstrip("*")
    return typ.split("[", 1)[0]


def _type_entry(src: bytes, spec, doc: str) -> tuple[dict, str]:
    name = ts.text(src, spec.child_by_field_name("name"))
    typ = spec.child_by_field_name("type")
    kind = {"struct_type": "struct", "interface_type": "interface"}.get(typ.type if typ is not None else "", "type")
    members: list[dict] = []
    if kind == "struct":
        for fields in typ.named_children:
            for field_decl in fields.named_children if fields.type == "field_declaration_list" else []:
                if field_decl.type != "field_declaration":
                    continue
                names = [ts.text(src, c) for c in field_decl.children_by_field_name("name")]
                ftype = ts.text(src, field_decl.child_by_field_name("type"))
                if not names:  # embedded field
                    if _exported(ftype.lstrip("*").rsplit(".", 1)[-1]):
                        members.append({"kind": "field", "name": ftype, "sig": ftype + " (embedded)",
                                        "doc": ts.doc_before(src, field_decl)})
                    continue
                for fname in names:
                    if _exported(fname):
                        members.append({"kind": "field", "name": fname, "sig": ts.squash(f"{fname} {ftype}", 100),
                                        "doc": ts.doc_before(src, field_decl)})
        sig = f"type {name} struct"
    elif kind == "interface":
        for elem in typ.named_children:
            if elem.type == "method_elem":
                mname = ts.text(src, elem.child_by_field_name("name"))
                if _exported(mname):
                    members.append({"kind": "method", "name": mname, "sig": _func_sig(src, elem, mname, receiver=True),
                                    "doc": ts.doc_before(src, elem)})
        sig = f"type {name} interface"
    else:
        alias = "= " if spec.type == "type_alias" else ""
        tparams = spec.child_by_field_name("type_parameters")
        sig = ts.squash(f"type {name}{ts.text(src, tparams) if tparams is not None else ''} {alias}{ts.text(src, typ)}", 120)
    return {"kind": kind, "name": name, "sig": sig, "doc": doc, "members": members}, kind


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Go file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    src = raw
    package = ""
    doc = ""
    exports: list[dict] = []
    imports: list[str] = []
    symbols: list[Symbol] = []
    functions: set[str] = set()
    for node in root.named_children:
        kind = node.type
        if kind == "package_clause":
            ident = next((c for c in node.named_children if c.type == "package_identifier"), None)
            package = ts.text(src, ident)
            doc = ts.doc_before(src, node)
        elif kind == "import_declaration":
            for spec in ts.descendants(node, ("import_spec",)):
                target = spec.child_by_field_name("path")
                if target is not None:
                    imports.append(_string(src, target))
        elif kind == "function_declaration":
            name = ts.text(src, node.child_by_field_name("name"))
            functions.add(name)
            sig = _func_sig(src, node, name, receiver=False)
            start, end = ts.lines(node)
            ts.add_definition(symbols, exports, (start, end), name, "function", _exported(name), sig, "func", name,
                              lambda: ts.doc_before(src, node))
        elif kind == "method_declaration":
            name = ts.text(src, node.child_by_field_name("name"))
            recv = _receiver_type(src, node)
            sig = _func_sig(src, node, name, receiver=True)
            start, end = ts.lines(node)
            recv_text = ts.squash(ts.text(src, node.child_by_field_name("receiver")), 60)
            symbols.append(Symbol(f"{recv}.{name}", "method", start, end, _exported(name) and _exported(recv),
                                  ts.squash(f"func {recv_text} {sig}")))
            if _exported(name) and _exported(recv):
                exports.append({"kind": "method", "name": f"{recv}.{name}", "sig": sig, "doc": ts.doc_before(src, node)})
        elif kind == "type_declaration":
            specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
            for spec in specs:
                entry, skind = _type_entry(src, spec, ts.doc_before(src, spec if len(specs) > 1 else node))
                start, end = ts.lines(spec if len(specs) > 1 else node)
                symbols.append(Symbol(entry["name"], skind, start, end, _exported(entry["name"]), entry["sig"]))
                if _exported(entry["name"]):
                    exports.append(entry)
        elif kind in ("const_declaration", "var_declaration"):
            word = "const" if kind == "const_declaration" else "var"
            specs = [c for c in node.named_children if c.type in ("const_spec", "var_spec", "var_spec_list")]
            flat = []
            for spec in specs:
                flat.extend(c for c in spec.named_children if c.type == "var_spec") if spec.type == "var_spec_list" else flat.append(spec)
            for spec in flat:
                typ = spec.child_by_field_name("type")
                start, end = ts.lines(spec)
                spec_doc = ts.doc_before(src, spec) or (ts.doc_before(src, node) if len(flat) == 1 else "")
                for ident in spec.children_by_field_name("name"):
                    name = ts.text(src, ident)
                    sig = ts.squash(f"{word} {name}" + (f" {ts.text(src, typ)}" if typ is not None else ""), 100)
                    ts.add_definition(symbols, exports, (start, end), name, word, _exported(name), sig, word, name,
                                      lambda: spec_doc)
    facts: dict = {"status": "ok", "unit": f"package {package}" if package else "", "group": "folder", "doc": doc, "exports": exports,
                   "imports": sorted(set(imports)), "routes": _routes(src, root), "symbols": symbols}
    if LANGUAGE.is_test(path):
        facts["test"] = True
    if package == "main" and "main" in functions:
        folder = path.rpartition("/")[0]
        facts["main"] = f"go run ./{folder}" if folder else "go run ."
    if root.has_error:
        facts["partial"] = True
    return facts



def _handler(src: bytes, args) -> str:
    named = args.named_children if args is not None else []
    if len(named) < 2:
        return ""
    last = named[-1]
    if last.type in ("identifier", "selector_expression"):
        return ts.squash(ts.text(src, last), 48)
    if last.type == "call_expression":
        return ts.squash(ts.text(src, last.child_by_field_name("function")), 48) + "(…)"
    return "(inline)"


def _routes(src: bytes, root) -> list[list[str]]:
    if not any(mark in src for mark in (b"Handle", b"GET", b"Get(", b"Post(", b"Path:", b"POST")):
        return []
    import tree_sitter

    query = _QUERIES.get("q")
    if query is None:
        query = _QUERIES["q"] = tree_sitter.Query(ts.language(LANGUAGE.grammar), _QUERY)
    routes: list[list[str]] = []
    for _pattern, caps in tree_sitter.QueryCursor(query).matches(root):
        if "method" in caps:
            method_name = ts.text(src, caps["method"][0])
            method = ROUTE_METHODS.get(method_name)
            if method is None:
                continue
            route = _string(src, caps["path"][0])
            pattern = _PATTERN.match(route)
            if pattern and method == "ANY":
                method, route = pattern.group(1), pattern.group(2)
            if not route.startswith("/"):
                continue
            call = caps["call"][0]
            routes.append([method, route, _handler(src, call.child_by_field_name("arguments"))])
        elif "table" in caps:
            keyed = {}
            for elem in caps["table"][0].named_children:
                if elem.type == "keyed_element" and len(elem.named_children) == 2:
                    keyed[ts.text(src, elem.named_children[0])] = elem.named_children[1]
            if "Path" in keyed and "Method" in keyed:
                route = ts.text(src, keyed["Path"])
                if not route.startswith(('"/', '`/')):
                    continue
                method_text = ts.text(src, keyed["Method"])
                const = _HTTP_METHOD_CONST.search(method_text)
                method = const.group(1).upper() if const else method_text.strip('"`').upper()
                handler = ts.squash(ts.text(src, keyed["Handler"]), 48) if "Handler" in keyed else ""
                routes.append([method, route[1:-1], handler if re.match(r"^[\w.]+$", handler) else "(inline)" if handler else ""])
    return routes


_REQUIRE = re.compile(r"^\s*([^\s()]+)\s+(v[^\s]+)")


def _require(declared: dict[str, str], match, line: str) -> None:
    """One ``require`` line of go.mod (in a block or alone) into ``declared``, marked when ``// indirect``."""
    if match:
        declared[match.group(1)] = f"{match.group(1)} {match.group(2)}" + (" (indirect)" if "// indirect" in line else "")


def parse_go_mod(raw: bytes, path: str) -> dict:
    """Manifest facts of a go.mod or go.work (module path, requirements, workspace members)."""
    text = raw.decode("utf-8", errors="replace")
    module = ""
    go_version = ""
    declared: dict[str, str] = {}
    members: list[str] = []
    block = ""
    for line in text.splitlines():
        line = line.split("//", 1)[0].rstrip() if "// indirect" not in line else line.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if block:
            if stripped == ")":
                block = ""
                continue
            if block == "require":
                _require(declared, _REQUIRE.match(stripped), line)
            elif block == "use":
                members.append(stripped.strip('"'))
            continue
        word, _, rest = stripped.partition(" ")
        rest = rest.strip()
        if word == "module":
            module = rest.strip('"')
        elif word == "go":
            go_version = rest
        elif word in ("require", "use") and rest == "(":
            block = word
        elif word == "require":
            _require(declared, _REQUIRE.match(rest), line)
        elif word == "use":
            members.append(rest.strip('"'))
        elif word in ("replace", "exclude", "retract", "toolchain", "godebug") and rest == "(":
            block = word
    if path.endswith("go.work"):
        return {"status": "ok", "manifest": {"language": "go", "title": "Go workspace", "name": "", "declared": {},
                                             "entry_points": [], "members": members}}
    title = f"Go module `{module}`" + (f" (go {go_version})" if go_version else "") if module else "Go module"
    return {"status": "ok", "manifest": {"language": "go", "title": title, "name": module, "declared": declared,
                                         "entry_points": [], "members": []}}


def is_stdlib(spec: str) -> bool:
    first = spec.split("/", 1)[0]
    return "." not in first


def external_name(spec: str, declared: dict[str, str]) -> str | None:
    """The required module an import path comes from (longest declared prefix), None for the standard library."""
    if is_stdlib(spec):
        return None
    probe = spec
    while probe:
        if probe in declared:
            return probe
        probe = probe.rpartition("/")[0]
    parts = spec.split("/")
    return "/".join(parts[:3]) if parts[0] in ("github.com", "gitlab.com", "bitbucket.org") else parts[0]


MANIFEST_PARSERS = {"go.mod": parse_go_mod, "go.work": parse_go_mod}


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """The repository folder an import path names, through the go.mod module paths in the repository."""
    for folder, manifest in ctx.manifests("go"):
        name = manifest.get("name")
        if name and (spec == name or spec.startswith(name + "/")):
            rest = spec[len(name):].strip("/")
            return "/".join(p for p in (folder, rest) if p)
    return None


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    manifest = ctx.nearest_manifest(from_path, "go")
    declared = (manifest or {}).get("declared") or {}
    name = external_name(spec, declared)
    if name is None:
        return None
    return name, declared.get(name), "go.mod"


def describe_folder(folder: str, manifest_folder: str, manifest: dict) -> str:
    """How a Go developer names a folder of a module: its import path."""
    name = manifest.get("name") or ""
    rest = folder[len(manifest_folder):].strip("/") if manifest_folder else folder
    path = "/".join(p for p in (name, rest) if p)
    return f"package `{path}` of {manifest.get('title', 'a Go module')}" if path else manifest.get("title", "")


def entry_label(label: str, path: str, ctx) -> str:
    """``go run`` from the folder of the go.mod the file belongs to: a nested module (its own go.mod) is run
    from its own folder, never from the repository root (``cd tools/goctl && go run .``)."""
    if not label.startswith("go run "):
        return label
    folder = path.rpartition("/")[0]
    for mod_folder, manifest in ctx.manifests("go"):
        if manifest.get("file") != "go.mod" or not (not mod_folder or path.startswith(mod_folder + "/")):
            continue
        if not mod_folder:
            return label
        rest = folder[len(mod_folder):].strip("/")
        return f"cd {mod_folder} && go run " + (f"./{rest}" if rest else ".")
    return label
