"""Ruby: modules and classes with their public methods; gems from the Gemfile.

From one ``.rb`` file: modules and classes (qualified ``Shop::Cart``) with their public
instance and class methods (methods after a bare ``private``/``protected`` are not
public; nor are those named by ``private :name``), top-level methods, constants, with the
signature and the first line of the ``#`` comment above; ``require``/``require_relative``
targets; Sinatra-style ``get "/p" do`` and Rails ``get "/p", to: "c#a"`` routes.
``Gemfile`` and ``*.gemspec`` give the declared gems.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol, join_relative

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_gemfile", "resolve_import", "external"]

LANGUAGE = Language(
    name="ruby", label="Ruby", extensions=(".rb", ".rake"), extra="ruby", grammar="tree_sitter_ruby",
    manifests=("Gemfile",), test_patterns=(r"(^|/)(spec|test)/", r"_spec\.rb$", r"_test\.rb$"),
)

_ROUTE_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "match"}
_GEM = re.compile(r"""^\s*gem\s+['"]([\w.-]+)['"](?:\s*,\s*['"]([^'"]+)['"])?""", re.M)
_GEMSPEC_DEP = re.compile(r"""add_(?:runtime_|development_)?dependency\s*\(?\s*['"]([\w.-]+)['"](?:\s*,\s*['"]([^'"]+)['"])?""")


def _doc(src: bytes, node) -> str:
    line = ts.doc_before(src, node, ("comment",))
    if line:
        return line
    parent = node.parent
    if parent is not None and parent.type == "body_statement" and parent.named_children and parent.named_children[0] == node:
        return ts.doc_before(src, parent, ("comment",))  # the comment sits before the body that holds the node
    return ""


def _method_sig(src: bytes, node, *, singleton: bool) -> str:
    name = ts.text(src, node.child_by_field_name("name"))
    params = node.child_by_field_name("parameters")
    return ts.squash(f"def {'self.' if singleton else ''}{name}{ts.text(src, params) if params is not None else ''}")


def _body(node):
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type == "body_statement"), None)
    return body


def _scope(src: bytes, container, prefix: str, facts: dict, exports: list, symbols: list, members: list | None) -> None:
    public = True
    hidden_names: set[str] = set()
    items = list(container.named_children) if container is not None else []
    for node in items:
        if node.type == "call" and ts.text(src, node.child_by_field_name("method")) in ("private", "protected", "private_class_method"):
            args = node.child_by_field_name("arguments")
            for arg in (args.named_children if args is not None else []):
                hidden_names.add(ts.text(src, arg).lstrip(":"))
    for node in items:
        kind = node.type
        start, end = ts.lines(node)
        if kind == "identifier" and ts.text(src, node) in ("private", "protected"):
            public = False
        elif kind == "identifier" and ts.text(src, node) == "public":
            public = True
        elif kind in ("method", "singleton_method"):
            name = ts.text(src, node.child_by_field_name("name"))
            singleton = kind == "singleton_method"
            sig = _method_sig(src, node, singleton=singleton)
            exported = (public or singleton) and name not in hidden_names and (members is not None or not prefix)
            qual = f"{prefix}{'.' if singleton else '#'}{name}" if prefix else name
            symbols.append(Symbol(qual.replace("#", ".").replace("::", "."), "method" if prefix else "function", start, end,
                                  exported, sig))
            if exported:
                entry = {"kind": "def", "name": name, "sig": sig, "doc": _doc(src, node)}
                (members if members is not None else exports).append(entry)
        elif kind in ("class", "module"):
            name = ts.text(src, node.child_by_field_name("name"))
            qual = f"{prefix}::{name}" if prefix else name
            superclass = node.child_by_field_name("superclass")
            sig = f"{kind} {qual}" + (f" {ts.text(src, superclass)}" if superclass is not None else "")
            symbols.append(Symbol(qual.replace("::", "."), "class" if kind == "class" else "type", start, end, True, sig))
            entry = {"kind": kind, "name": qual, "sig": sig, "doc": _doc(src, node), "members": []}
            position = len(exports)
            _scope(src, _body(node), qual, facts, exports, symbols, entry["members"])
            if kind == "class" or entry["members"] or entry["doc"]:  # a bare namespace module says nothing
                exports.insert(position, entry)
        elif kind == "assignment":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "constant":
                name = ts.text(src, left)
                symbols.append(Symbol(f"{prefix}::{name}".replace("::", ".") if prefix else name, "const", start, end, True, name))
                (members if members is not None else exports).append({"kind": "const", "name": name, "sig": name,
                                                                        "doc": _doc(src, node)})
        elif kind == "call":
            method = ts.text(src, node.child_by_field_name("method"))
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if method in ("require", "require_relative") and first is not None and first.type == "string":
                target = ts.text(src, first).strip("'\"")
                facts["imports"].append(("./" if method == "require_relative" and not target.startswith(".") else "") + target)
            elif method in _ROUTE_VERBS and first is not None and first.type == "string" and node.child_by_field_name("receiver") is None:
                route = ts.text(src, first).strip("'\"")
                if route.startswith("/"):
                    handler = ""
                    to = re.search(r"""to:\s*['"]([\w/]+#\w+)['"]""", ts.text(src, args))
                    if to:
                        handler = to.group(1)
                    facts["routes"].append([method.upper() if method != "match" else "ANY", route, handler or "(block)"])


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Ruby file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    facts, exports, symbols = ts.start_facts(imports=[], routes=[])
    try:
        _scope(raw, root, "", facts, exports, symbols, None)
    except RecursionError:
        return {"status": "unread", "reason": "nested too deeply"}
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


def parse_gemfile(raw: bytes, path: str) -> dict:
    text = raw.decode("utf-8", errors="replace")
    declared = {name: f"{name} {version}" if version else name for name, version in _GEM.findall(text)}
    return {"status": "ok", "manifest": {"language": "ruby", "title": "Ruby project (Gemfile)", "name": "",
                                         "declared": declared, "entry_points": [], "members": []}}


MANIFEST_PARSERS = {"Gemfile": parse_gemfile}


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    if spec.startswith("."):
        target = join_relative(from_path, spec)
        return target + ".rb" if ctx.exists(target + ".rb") else target
    return ctx.find_suffix(spec + ".rb")


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    if spec.startswith("."):
        return None
    manifest = ctx.nearest_manifest(from_path, "ruby")
    declared = (manifest or {}).get("declared") or {}
    name = spec.split("/", 1)[0]
    if name not in declared and manifest is None:
        return None  # without a Gemfile, a bare require is as likely the standard library as a gem
    if name not in declared:
        return None if name in _RUBY_STDLIB else (name, None, "Gemfile")
    return name, declared[name], "Gemfile"


_RUBY_STDLIB = frozenset({"json", "set", "time", "date", "fileutils", "pathname", "securerandom", "digest", "open3",
                          "optparse", "logger", "yaml", "erb", "net/http", "uri", "socket", "tempfile", "stringio",
                          "benchmark", "forwardable", "singleton", "ostruct", "csv", "English", "base64", "zlib",
                          "timeout", "thread", "monitor", "shellwords", "io/console", "rbconfig", "pp", "bigdecimal"})
