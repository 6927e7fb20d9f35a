"""Rust: crates from Cargo.toml (workspaces too), their modules from the file tree, ``pub`` items exposed.

From one ``.rs`` file: its module path (``crate::sync::mpsc`` from ``src/sync/mpsc.rs``) and
``//!`` doc; ``pub`` functions, structs (with ``pub`` fields), enums (with variants),
traits (with their methods), type aliases, consts, statics, ``#[macro_export]`` macros,
inherent ``pub fn`` methods and ``pub use`` re-exports, each with its signature and the
first ``///`` line; ``pub(crate)``/``pub(super)`` items are not public. Private ``mod x;``
declarations hide the files of ``x`` from Exposes. ``use`` paths are the imports; ``fn
main`` in ``src/main.rs``, ``src/bin/*`` and ``examples/*`` is an entry point; axum
``.route("/p", get(h))`` and actix ``#[get("/p")]`` / ``.route("/p", web::get().to(h))``
are routes. ``Cargo.toml`` gives the crate, its dependencies, ``[[bin]]`` targets and
workspace members.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["describe_folder", "LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_cargo", "unit_of", "resolve_import", "external"]

LANGUAGE = Language(
    name="rust", label="Rust", extensions=(".rs",), extra="rust", grammar="tree_sitter_rust",
    manifests=("Cargo.toml",), test_patterns=(r"(^|/)tests/", r"(^|/)benches/", r"(^|/)tests?\.rs$"),
)

_COMMENTS = ("line_comment", "block_comment")
_SKIP = ("attribute_item",)
_ROUTE_FN = re.compile(r"\b(get|post|put|delete|patch|head|options|trace|any)\s*\(\s*([A-Za-z_][\w:]*)?")
_ROUTE_ATTR = re.compile(r'^(get|post|put|delete|patch|head|options|trace)\s*\(\s*"(/[^"]*)"')
_STD = frozenset({"std", "core", "alloc", "crate", "self", "super", "proc_macro", "test"})

_QUERY = """
(call_expression function: (field_expression field: (field_identifier) @fn)
                 arguments: (arguments . (string_literal) @path . (_) @handler)) @call
"""
_QUERIES: dict = {}


def unit_of(path: str) -> str:
    """``crate::a::b`` for ``…/src/a/b.rs`` or ``…/src/a/b/mod.rs``; "" outside ``src/``."""
    parts = path.split("/")
    if "src" not in parts[:-1]:
        return ""
    idx = len(parts) - 1 - parts[::-1].index("src")
    rest = parts[idx + 1:]
    if not rest:
        return ""
    name = rest[-1][:-3] if rest[-1].endswith(".rs") else rest[-1]
    mods = rest[:-1] + ([] if name in ("mod", "lib", "main") else [name])
    if mods and mods[0] == "bin":
        return ""
    return "::".join(["crate"] + mods)


def _pub(src: bytes, node) -> bool:
    vis = next((c for c in node.named_children if c.type == "visibility_modifier"), None)
    return vis is not None and ts.text(src, vis).strip() == "pub"


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, _COMMENTS, doc_only="///", skip=_SKIP)


def _fn_sig(src: bytes, node) -> str:
    name = ts.text(src, node.child_by_field_name("name"))
    mods = next((ts.text(src, c) for c in node.named_children if c.type == "function_modifiers"), "")
    tparams = node.child_by_field_name("type_parameters")
    params = node.child_by_field_name("parameters")
    ret = node.child_by_field_name("return_type")
    sig = (mods + " " if mods else "") + "fn " + name + (ts.text(src, tparams) if tparams is not None else "") + \
        (ts.text(src, params) if params is not None else "()")
    if ret is not None:
        sig += " -> " + ts.text(src, ret)
    return ts.squash(sig)


def _use_paths(src: bytes, node, prefix: str = "") -> list[tuple[str, str]]:
    """(full path, local name) of every leaf of a use tree."""
    kind = node.type
    if kind in ("identifier", "crate", "self", "super", "metavariable"):
        name = ts.text(src, node)
        full = f"{prefix}::{name}" if prefix else name
        return [(full, name)]
    if kind == "scoped_identifier":
        full = f"{prefix}::{ts.text(src, node)}" if prefix else ts.text(src, node)
        return [(full, full.rsplit("::", 1)[-1])]
    if kind == "use_as_clause":
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        paths = _use_paths(src, path, prefix) if path is not None else []
        return [(p, ts.text(src, alias)) for p, _ in paths[:1]]
    if kind == "use_wildcard":
        inner = ts.text(src, node)[:-3].rstrip(":")
        full = f"{prefix}::{inner}" if prefix and inner else inner or prefix
        return [(full + "::*", "*")]
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = ts.text(src, path) if path is not None else ""
        base = f"{prefix}::{base}" if prefix and base else base or prefix
        lst = node.child_by_field_name("list")
        out = []
        for child in (lst.named_children if lst is not None else []):
            out.extend(_use_paths(src, child, base))
        return out
    if kind == "use_list":
        out = []
        for child in node.named_children:
            out.extend(_use_paths(src, child, prefix))
        return out
    return []


def _items(src: bytes, container, prefix: str, facts: dict, exports: list, symbols: list, exported_scope: bool,
           offset: int = 0, depth: int = 0) -> None:
    for node in container.named_children:
        kind = node.type
        public = exported_scope and _pub(src, node)
        start, end = ts.lines(node)
        start, end = start + offset, end + offset
        if kind == "function_item":
            name = ts.text(src, node.child_by_field_name("name"))
            sig = _fn_sig(src, node)
            ts.add_definition(symbols, exports, (start, end), prefix + name, "function", public, sig, "fn", name,
                              lambda: _doc(src, node))
            if name == "main" and not prefix:
                facts["_main"] = True
        elif kind in ("struct_item", "enum_item", "union_item", "trait_item"):
            name = ts.text(src, node.child_by_field_name("name"))
            tparams = node.child_by_field_name("type_parameters")
            word = {"struct_item": "struct", "enum_item": "enum", "union_item": "union", "trait_item": "trait"}[kind]
            sig = ts.squash(f"{word} {name}" + (ts.text(src, tparams) if tparams is not None else ""), 120)
            members = []
            body = node.child_by_field_name("body")
            if body is not None:
                for item in body.named_children:
                    if item.type == "field_declaration" and _pub(src, item):
                        fname = ts.text(src, item.child_by_field_name("name"))
                        members.append({"kind": "field", "name": fname, "sig": ts.squash(ts.text(src, item)[4:].strip(), 100),
                                        "doc": _doc(src, item)})
                    elif item.type == "enum_variant":
                        members.append({"kind": "variant", "name": ts.text(src, item.child_by_field_name("name")),
                                        "sig": ts.squash(ts.text(src, item), 100), "doc": _doc(src, item)})
                    elif item.type in ("function_signature_item", "function_item") and kind == "trait_item":
                        mname = ts.text(src, item.child_by_field_name("name"))
                        msig = _fn_sig(src, item)
                        m_start, m_end = ts.lines(item)
                        symbols.append(Symbol(f"{prefix}{name}.{mname}", "method", m_start + offset, m_end + offset, public, msig))
                        members.append({"kind": "method", "name": mname, "sig": msig, "doc": _doc(src, item)})
            symbols.append(Symbol(prefix + name, "enum" if word == "enum" else "trait" if word == "trait" else "struct",
                                  start, end, public, sig))
            if public:
                exports.append({"kind": word, "name": name, "sig": sig, "doc": _doc(src, node), "members": members})
        elif kind == "impl_item":
            typ = node.child_by_field_name("type")
            trait = node.child_by_field_name("trait")
            type_name = re.split(r"[<\s]", ts.text(src, typ), maxsplit=1)[0] if typ is not None else ""
            body = node.child_by_field_name("body")
            for item in (body.named_children if body is not None else []):
                if item.type != "function_item":
                    continue
                mname = ts.text(src, item.child_by_field_name("name"))
                msig = _fn_sig(src, item)
                m_start, m_end = ts.lines(item)
                m_public = exported_scope and (trait is not None or _pub(src, item))
                symbols.append(Symbol(f"{prefix}{type_name}.{mname}", "method", m_start + offset, m_end + offset, m_public, msig))
                if trait is None and m_public:
                    exports.append({"kind": "method", "name": f"{type_name}.{mname}", "sig": msig, "doc": _doc(src, item)})
        elif kind in ("const_item", "static_item", "type_item"):
            name = ts.text(src, node.child_by_field_name("name"))
            word = {"const_item": "const", "static_item": "static", "type_item": "type"}[kind]
            typ = node.child_by_field_name("type")
            tparams = node.child_by_field_name("type_parameters")
            if word == "type":
                sig = f"type {name}" + (ts.text(src, tparams) if tparams is not None else "") + f" = {ts.text(src, typ)}"
            else:
                sig = f"{word} {name}: {ts.text(src, typ)}"
            sig = ts.squash(sig, 120)
            ts.add_definition(symbols, exports, (start, end), prefix + name,
                              "type" if word == "type" else "const" if word == "const" else "var", public, sig, word, name,
                              lambda: _doc(src, node))
        elif kind == "macro_definition":
            name = ts.text(src, node.child_by_field_name("name"))
            prev = node.prev_named_sibling
            exported = False
            while prev is not None and prev.type == "attribute_item":
                exported = exported or "macro_export" in ts.text(src, prev)
                prev = prev.prev_named_sibling
            ts.add_definition(symbols, exports, (start, end), prefix + name, "macro", exported, f"macro_rules! {name}", "macro",
                              name + "!", lambda: _doc(src, node))
        elif kind == "use_declaration":
            arg = node.child_by_field_name("argument")
            paths = _use_paths(src, arg) if arg is not None else []
            facts["imports"].extend(p for p, _ in paths)
            if public:
                for full, local in paths:
                    exports.append({"kind": "use", "name": local, "sig": f"pub use {full}", "doc": ""})
        elif kind == "extern_crate_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                facts["imports"].append(ts.text(src, name))
        elif kind == "mod_item":
            name = ts.text(src, node.child_by_field_name("name"))
            body = node.child_by_field_name("body")
            if body is not None:
                if name != "tests":
                    _items(src, body, f"{prefix}{name}.", facts, exports if public else [], symbols, public, offset, depth)
            elif not _pub(src, node) and facts["unit"]:
                facts["hides"].append(f"{facts['unit']}::{name}")
            if public:
                exports.append({"kind": "mod", "name": name, "sig": f"pub mod {name}", "doc": _doc(src, node)})
        elif kind == "macro_invocation" and depth < 3:
            # items wrapped in a macro (`cfg_if!`, tokio's `cfg_net! { pub mod net; }`): read the body as items
            macro = ts.text(src, node.child_by_field_name("macro"))
            tree = next((c for c in node.named_children if c.type == "token_tree"), None)
            if tree is not None and macro not in ("macro_rules", "vec", "println", "format", "assert", "write") and \
                    ts.text(src, tree)[:1] == "{":
                inner = src[tree.start_byte + 1:tree.end_byte - 1]
                if b"fn " in inner or b"mod " in inner or b"use " in inner or b"struct " in inner:
                    sub_root, err = ts.parse(LANGUAGE.grammar, inner)
                    if sub_root is not None and not err:
                        _items(inner, sub_root, prefix, facts, exports, symbols, exported_scope,
                               offset + tree.start_point[0], depth + 1)
        elif kind == "attribute_item":
            match = _ROUTE_ATTR.match(ts.text(src, node)[2:-1].strip())
            nxt = node.next_named_sibling
            while nxt is not None and nxt.type == "attribute_item":
                nxt = nxt.next_named_sibling
            if match and nxt is not None and nxt.type == "function_item":
                facts["routes"].append([match.group(1).upper(), match.group(2), ts.text(src, nxt.child_by_field_name("name"))])


def _main_label(path: str) -> str:
    parts = path.split("/")
    if len(parts) >= 2 and parts[-2] == "src" and parts[-1] == "main.rs":
        return "cargo run"
    if "bin" in parts[:-1] and parts[parts.index("bin") - 1:parts.index("bin")] == ["src"]:
        name = parts[parts.index("bin") + 1]
        return f"cargo run --bin {name[:-3] if name.endswith('.rs') else name}"
    if "examples" in parts[:-1]:
        name = parts[parts.index("examples") + 1]
        return f"cargo run --example {name[:-3] if name.endswith('.rs') else name}"
    return ""


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Rust file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    src = raw
    unit = unit_of(path)
    facts, exports, symbols = ts.start_facts(unit=unit, doc="", imports=[], routes=[], hides=[])
    for node in root.named_children:
        if node.type == "line_comment" and ts.text(src, node).startswith("//!"):
            line = ts.clean_doc(ts.text(src, node)[3:])
            if line and not facts["doc"]:
                facts["doc"] = line
        elif node.type not in _COMMENTS:
            break
    _items(src, root, "", facts, exports, symbols, True)
    facts["exports"] = exports
    facts["symbols"] = symbols
    facts["imports"] = sorted(set(facts["imports"]))
    if facts.pop("_main", False):
        label = _main_label(path)
        if label:
            facts["main"] = label
    if b".route(" in src:
        facts["routes"].extend(_routes(src, root))
    # a private module whose items this file re-exports (`mod bounded; pub use self::bounded::Sender;`) is API
    reexported = {e["sig"][len("pub use "):].split("::")[0 if not e["sig"].startswith("pub use self::") else 1]
                  for e in exports if e["kind"] == "use"}
    facts["hides"] = [h for h in facts["hides"] if h.rpartition("::")[2] not in reexported]
    if not facts["hides"]:
        del facts["hides"]
    return ts.flag_facts(facts, root, path, LANGUAGE)


def _routes(src: bytes, root) -> list[list[str]]:
    import tree_sitter

    query = _QUERIES.get("q")
    if query is None:
        query = _QUERIES["q"] = tree_sitter.Query(ts.language(LANGUAGE.grammar), _QUERY)
    out = []
    for _pattern, caps in tree_sitter.QueryCursor(query).matches(root):
        if ts.text(src, caps["fn"][0]) != "route":
            continue
        route = ts.text(src, caps["path"][0]).strip('"')
        if not route.startswith("/"):
            continue
        for method, handler in _ROUTE_FN.findall(ts.text(src, caps["handler"][0])):
            out.append([method.upper() if method != "any" else "ANY", route, handler.rsplit("::", 1)[-1] if handler else ""])
    return out


def _dep_text(name: str, spec) -> str:
    if isinstance(spec, str):
        return f"{name} {spec}"
    if isinstance(spec, dict):
        if spec.get("workspace"):
            return f"{name} (workspace)"
        if "path" in spec:
            return f"{name} (path {spec['path']})"
        if "version" in spec:
            return f"{name} {spec['version']}"
        if "git" in spec:
            return f"{name} (git)"
    return name


def parse_cargo(raw: bytes, path: str) -> dict:
    """Manifest facts of a Cargo.toml: the crate or the workspace, dependencies, bins, members."""
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8", errors="replace"))
    except tomllib.TOMLDecodeError as exc:
        return {"status": "unread", "reason": f"not valid TOML ({str(exc).splitlines()[0][:80]})"}
    package = data.get("package") if isinstance(data.get("package"), dict) else {}
    workspace = data.get("workspace") if isinstance(data.get("workspace"), dict) else {}
    name = package.get("name") if isinstance(package.get("name"), str) else ""
    version = package.get("version") if isinstance(package.get("version"), str) else ""
    declared: dict[str, str] = {}
    internal: list[str] = []
    tables = [data.get("dependencies"), data.get("build-dependencies"), workspace.get("dependencies")]
    for table in tables:
        if isinstance(table, dict):
            for dep, spec in table.items():
                key = str(dep).replace("-", "_")
                declared.setdefault(key, _dep_text(str(dep), spec))
    dev = data.get("dev-dependencies")
    if isinstance(dev, dict):
        for dep, spec in dev.items():
            declared.setdefault(str(dep).replace("-", "_"), _dep_text(str(dep), spec) + " (dev)")
    entry_points: list[list[str]] = []
    bins = data.get("bin")
    if isinstance(bins, list):
        for item in bins:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                entry_points.append([item["name"], str(item.get("path") or f"src/bin/{item['name']}.rs"),
                                     f"cargo run --bin {item['name']}"])
    members = [str(m) for m in workspace.get("members") or [] if isinstance(m, str)]
    lib = data.get("lib") if isinstance(data.get("lib"), dict) else {}
    lib_name = lib.get("name") if isinstance(lib.get("name"), str) else name.replace("-", "_")
    if name:
        title = f"Rust crate `{name}`" + (f" {version}" if version else "")
    else:
        title = "Cargo workspace"
    if lib_name and name and lib_name != name:
        internal.append(f"library name `{lib_name}`")
    return {"status": "ok", "manifest": {"language": "rust", "title": title, "name": name, "lib": lib_name, "declared": declared,
                                         "entry_points": entry_points, "members": members, "internal": internal}}


MANIFEST_PARSERS = {"Cargo.toml": parse_cargo}


def _crate_folder(path: str, ctx) -> tuple[str, dict] | None:
    for folder, manifest in ctx.manifests("rust"):
        if manifest.get("name") and (not folder or path.startswith(folder + "/")):
            return folder, manifest
    return None


def _module_folder(path: str) -> str:
    """The folder of a file's module: ``a/b.rs`` is module ``b`` whose children live in ``a/b/``;
    ``a/mod.rs``, ``lib.rs`` and ``main.rs`` are their folder's module."""
    folder, _, name = path.rpartition("/")
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return folder
    return f"{folder}/{name[:-3]}" if folder else name[:-3]


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """The repository path a ``use`` path lands in: ``crate::``/``self::``/``super::`` or a workspace crate."""
    parts = [p for p in spec.split("::") if p and p != "*"]
    if not parts:
        return None
    head = parts[0]
    here = _module_folder(from_path)
    if head in ("self", "super"):
        base = here
        rest = list(parts)
        while rest and rest[0] in ("self", "super"):
            if rest.pop(0) == "super":
                base = base.rpartition("/")[0]
        return "/".join(p for p in [base] + rest if p) or None
    if head not in _STD and (ctx.exists(f"{here}/{head}.rs") or ctx.exists(f"{here}/{head}/mod.rs")):
        return f"{here}/{head}"  # Rust 2018 paths: a child module named without `self::`
    if head == "crate":
        crate = _crate_folder(from_path, ctx)
        if crate is None:
            return None
        src_dir = "/".join(p for p in (crate[0], "src") if p)
        return "/".join([src_dir] + parts[1:])  # the deepest module folder on the path owns it
    for folder, manifest in ctx.manifests("rust"):
        if manifest.get("lib") == head or (manifest.get("name") or "").replace("-", "_") == head:
            src_dir = "/".join(p for p in (folder, "src") if p)
            return "/".join([src_dir] + parts[1:])
    return None


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    head = spec.split("::", 1)[0]
    if head in _STD or not head or head[0].isupper():
        return None  # the standard library, or an enum's variants brought into scope (`use Kind::*`)
    crate = _crate_folder(from_path, ctx)
    declared = (crate[1].get("declared") if crate else None) or {}
    if head not in declared:
        # a workspace's shared table, or a name the crate itself imports under another spelling
        for _folder, manifest in ctx.manifests("rust"):
            if not manifest.get("name") and head in (manifest.get("declared") or {}):
                return head, manifest["declared"][head], "Cargo.toml"
    return head, declared.get(head), "Cargo.toml"


def describe_folder(folder: str, manifest_folder: str, manifest: dict) -> str:
    """How a Rust developer names a folder of a crate: its module path (``src/sync`` is ``crate::sync``)."""
    rest = folder[len(manifest_folder):].strip("/") if manifest_folder else folder
    if rest.startswith("src/"):
        path = "::".join([manifest.get("lib") or "crate"] + rest[4:].split("/"))
        return f"module `{path}` of {manifest.get('title', 'a Rust crate')}"
    return manifest.get("title", "")
