"""C: libraries and their public headers; what a header declares is the API.

From one file: ``#include`` targets; in headers, the declared functions, structs, unions,
enums, typedefs, global variables and API macros (include guards left out), with their
signatures and the comment line right above; in every file, the symbols with their line
ranges and ``main`` as an entry point. A header under an ``include/`` folder is public by
its place (a module that has such headers exposes only them); one under an ``internal``,
``detail``, ``private`` or ``impl`` folder never is; a ``.c`` file exposes nothing.
The build manifests (CMake, Autotools, Meson, vcpkg, Conan) are read by c_manifests.py,
exposed here as ``MANIFEST_PARSERS``. The C++ extractor (cpp.py) reuses all of this with
the C++ grammar.
"""

from __future__ import annotations

import bisect
import re

from . import _treesitter as ts
from .base import Language, Symbol, join_relative
from .c_manifests import MANIFEST_PARSERS

__all__ = ["LANGUAGE", "MANIFEST_PARSERS", "extract", "extract_c_family", "hidden_ranges", "internal_namespace",
           "resolve_import", "external", "HEADER_EXT"]

LANGUAGE = Language(
    name="c", label="C", extensions=(".c", ".h"), extra="c", grammar="tree_sitter_c",
    manifests=("CMakeLists.txt", "vcpkg.json", "conanfile.txt", "configure.ac", "meson.build", "Makefile.am"),
    test_patterns=(r"(^|/)tests?/", r"(^|/)test_[^/]*\.c$", r"_test\.c$", r"(^|/)unittests?/"),
)

HEADER_EXT = (".h", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".inl", ".tpp")
_PRIVATE_DIRS = frozenset({"internal", "detail", "details", "private", "impl", "src"})
_GUARD = re.compile(r"^_*[A-Z0-9_]*_(H|HPP|HH|HXX|H_|HPP_|INCLUDED|INCLUDED_|H__)_*$")
_CONTAINERS = ("preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef", "ERROR")  # ERROR: a
# guard the parser could not close still holds well-formed declarations
_COMMENTS = ("comment",)


def _is_header(path: str) -> bool:
    return path.lower().endswith(HEADER_EXT)


def _public_by_place(path: str) -> bool | None:
    parts = path.split("/")[:-1]
    if "include" in parts:
        after = parts[parts.index("include") + 1:]
        return False if any(p in _PRIVATE_DIRS - {"src"} for p in after) else True
    if any(p in _PRIVATE_DIRS - {"src"} for p in parts):
        return False
    return None


def _declarator_name(src: bytes, node) -> tuple[str, bool]:
    """(name, is a function) of a declarator chain."""
    is_fn = False
    cur = node
    for _ in range(16):
        if cur is None:
            return "", is_fn
        if cur.type in ("identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name",
                        "operator_name", "template_function", "primitive_type"):
            return ts.text(src, cur), is_fn
        if cur.type == "function_declarator":
            is_fn = True
        nxt = cur.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in cur.named_children if c.type.endswith("declarator") or c.type in (
                "identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name")), None)
        cur = nxt
    return "", is_fn


def _sig(src: bytes, node, *, limit: int = 160) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None and node.type in ("function_definition",) else node.end_byte
    text = src[node.start_byte:end].decode("utf-8", errors="replace").rstrip().rstrip(";").rstrip()
    if node.type in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier") and body is not None:
        text = src[node.start_byte:body.start_byte].decode("utf-8", errors="replace")
    text = re.sub(r"\s*=\s*0\s*$", " = 0", text)
    return ts.squash(text, limit)


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, _COMMENTS)


def _qualified(prefix: str, name: str) -> str:
    """``ns::Class`` for a name inside namespaces/classes (the prefix is dotted), the name alone at top level."""
    return (prefix.replace(".", "::") + name) if prefix else name


_INTERNAL_NAMESPACES = frozenset({"detail", "details", "internal", "impl", "priv", "private"})
# comments, string and character literals (skipped: their braces do not count), namespace openings, braces;
# every alternative always matches once started, so the scan is one linear pass
_BRACE_TOKENS = re.compile(rb'^[ \t]*#(?:[^\n\\]|\\.|\\\n)*|'  # a preprocessor line: a macro's braces are not the file's
                           rb'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|'
                           rb'\bnamespace\b[ \t\r\n]*([A-Za-z_][\w:]*)?[ \t\r\n]*\{|[{}]', re.S | re.M)
_KEYWORDS = frozenset({"struct", "class", "union", "enum", "namespace", "template", "typename", "typedef", "using",
                       "const", "static", "inline", "extern", "return", "if", "else", "for", "while", "do", "switch"})
_INTERNAL_QUALIFIER = re.compile(r"(?:^|[^\w:])(?:detail|details|internal|impl|_\w*)::")


def internal_namespace(name: str | None) -> bool:
    """An anonymous namespace, or one named (in any segment) like an implementation detail or `_`-prefixed."""
    if not name:
        return True
    return any(seg in _INTERNAL_NAMESPACES or seg.startswith("_") for seg in name.split("::") if seg)


def hidden_ranges(src: bytes) -> list[tuple[int, int]]:
    """Byte ranges of internal namespaces (``namespace detail { … }``), found from the text alone, so a
    declaration inside one stays private even where macros broke the parse around it (fmt's
    ``FMT_BEGIN_NAMESPACE``). Sorted, outermost ranges only."""
    if b"namespace" not in src:
        return []
    stack: list[int | None] = []   # start byte of an internal namespace, or None for any other brace
    ranges: list[tuple[int, int]] = []
    depth_hidden = 0
    for match in _BRACE_TOKENS.finditer(src):
        token = match.group(0)
        if token == b"}":
            if stack:
                start = stack.pop()
                if start is not None:
                    depth_hidden -= 1
                    if depth_hidden == 0:
                        ranges.append((start, match.end()))
        elif token == b"{":
            stack.append(None)
        elif token.startswith(b"namespace"):
            name = match.group(1).decode("ascii", "replace") if match.group(1) else None
            if internal_namespace(name) or depth_hidden:
                depth_hidden += 1
                stack.append(match.start())
            else:
                stack.append(None)
    return ranges


class _Walker:
    """Collects exports and symbols from a C or C++ tree."""

    def __init__(self, src: bytes, header: bool):
        self.src = src
        self.header = header
        self.hidden = hidden_ranges(src) if header else []
        self._hidden_starts = [start for start, _ in self.hidden]
        self.exports: list[dict] = []
        self.symbols: list[Symbol] = []
        self.imports: list[str] = []
        self.main = False

    def add_symbol(self, qual: str, kind: str, node, exported: bool, sig: str) -> None:
        start, end = ts.lines(node)
        self.symbols.append(Symbol(qual, kind, start, end, exported, sig))

    def walk(self, container, prefix: str = "", exported: bool = True) -> None:
        for node in container.named_children:
            self.item(node, node, prefix, exported)

    def inside_hidden(self, offset: int) -> bool:
        index = bisect.bisect_right(self._hidden_starts, offset) - 1
        return index >= 0 and offset < self.hidden[index][1]

    def item(self, node, doc_node, prefix: str, exported: bool, template: str = "") -> None:
        src = self.src
        kind = node.type
        if exported and self.hidden and kind not in _CONTAINERS and self.inside_hidden(node.start_byte):
            exported = False
        public = exported and self.header
        span = doc_node if doc_node.type == "template_declaration" else node  # a template's lines start at `template`
        if kind in _CONTAINERS:
            self.walk(node, prefix, exported)
        elif kind == "preproc_include":
            target = node.child_by_field_name("path")
            raw = ts.text(src, target)
            if raw.startswith(("<", '"')) and len(raw) > 2:
                self.imports.append(raw[1:-1])
        elif kind in ("preproc_def", "preproc_function_def"):
            name = ts.text(src, node.child_by_field_name("name"))
            value = node.child_by_field_name("value")
            if _GUARD.match(name) and value is None:
                return
            params = node.child_by_field_name("parameters")
            sig = f"#define {name}" + (ts.text(src, params) if params is not None else "")
            if value is not None and params is None:
                sig += " " + ts.squash(ts.text(src, value), 60)
            self.add_symbol(prefix + name, "macro", node, public, sig)
            if public and not name.startswith("_"):
                self.exports.append({"kind": "macro", "name": name, "sig": sig, "doc": _doc(src, doc_node)})
        elif kind == "linkage_specification":
            body = node.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                self.walk(body, prefix, exported)
            elif body is not None:
                self.item(body, node, prefix, exported)
        elif kind == "namespace_definition":
            name = ts.text(src, node.child_by_field_name("name"))
            body = node.child_by_field_name("body")
            hidden = internal_namespace(name)
            if body is not None:
                self.walk(body, prefix + (name + "." if name else ""), exported and not hidden)
        elif kind == "template_declaration":
            params = next((c for c in node.named_children if c.type == "template_parameter_list"), None)
            inner = next((c for c in node.named_children if c.type not in ("template_parameter_list", "comment")), None)
            if inner is not None:
                self.item(inner, node, prefix, exported, template=f"template {ts.text(src, params)} " if params is not None else "")
        elif kind == "function_definition":
            name, _ = _declarator_name(src, node.child_by_field_name("declarator"))
            if not name:
                return
            qual = prefix + name.replace("::", ".")
            sig = template + _sig(src, node)
            self.add_symbol(qual, "method" if "::" in name else "function", span, public and "static" not in sig.split("(")[0].split(), sig)
            if name == "main" and not prefix:
                self.main = True
            if public and "::" not in name and "static" not in sig.split("(")[0].split():
                self.exports.append({"kind": "function", "name": _qualified(prefix, name), "sig": ts.squash(sig), "doc": _doc(src, doc_node)})
        elif kind == "declaration":
            self.declaration(node, doc_node, prefix, public, template)
        elif kind in ("type_definition", "alias_declaration"):
            declarators = node.children_by_field_name("declarator") if kind == "type_definition" else [node.child_by_field_name("name")]
            inner = node.child_by_field_name("type")
            if kind == "type_definition" and inner is not None and inner.type in ("struct_specifier", "union_specifier", "enum_specifier") \
                    and inner.child_by_field_name("body") is not None:
                self.record(inner, node, prefix, exported, template, typedef_names=[_declarator_name(src, d)[0] for d in declarators])
                return
            for decl in declarators:
                name, _ = _declarator_name(src, decl) if decl is not None and decl.type != "type_identifier" else (ts.text(src, decl), False)
                if not name:
                    continue
                sig = template + _sig(src, node)
                self.add_symbol(prefix + name, "type", span, public, sig)
                if public:
                    self.exports.append({"kind": "type", "name": _qualified(prefix, name), "sig": sig, "doc": _doc(src, doc_node)})
        elif kind in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
            if node.child_by_field_name("body") is not None:
                self.record(node, doc_node, prefix, exported, template)

    def declaration(self, node, doc_node, prefix: str, public: bool, template: str) -> None:
        src = self.src
        inner = node.child_by_field_name("type")
        if inner is not None and inner.type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier") \
                and inner.child_by_field_name("body") is not None:
            self.record(inner, doc_node, prefix, public, template)
        words = ts.text(src, node).split("(")[0].split()
        if "static" in words or "typedef" in words:
            public = False
        for decl in node.children_by_field_name("declarator"):
            name, is_fn = _declarator_name(src, decl)
            if not name:
                continue
            sig = template + _sig(src, node)
            kind = "function" if is_fn else ("const" if "const" in words or "constexpr" in words else "var")
            self.add_symbol(prefix + name.replace("::", "."), kind, doc_node if doc_node.type == "template_declaration" else node,
                            public, sig)
            if public:
                self.exports.append({"kind": kind, "name": _qualified(prefix, name), "sig": sig, "doc": _doc(src, doc_node)})

    def record(self, node, doc_node, prefix: str, exported: bool, template: str, typedef_names: list[str] | None = None) -> None:
        """A struct/union/enum/class with a body: the type and, for C++ classes, its public members."""
        src = self.src
        name = ts.text(src, node.child_by_field_name("name")) or (typedef_names or [""])[0]
        if not name:
            return
        public = exported and self.header
        word = {"struct_specifier": "struct", "union_specifier": "union", "enum_specifier": "enum", "class_specifier": "class"}[node.type]
        sig = template + _sig(src, node, limit=140)
        if typedef_names:
            sig = f"typedef {sig.strip()} {{…}} {', '.join(n for n in typedef_names if n)}"
        qual = prefix + name
        span = doc_node if doc_node.type in ("template_declaration", "type_definition") else node
        self.add_symbol(qual, {"struct": "struct", "union": "struct", "enum": "enum", "class": "class"}[word], span, public, sig)
        members: list[dict] = []
        body = node.child_by_field_name("body")
        access_public = word != "class"
        if body is not None and body.type == "enumerator_list":
            for item in body.named_children:
                if item.type == "enumerator":
                    ename = ts.text(src, item.child_by_field_name("name"))
                    members.append({"kind": "constant", "name": ename, "sig": ts.squash(ts.text(src, item), 80), "doc": ""})
        elif body is not None:
            for item in body.named_children:
                itype = item.type
                if itype == "access_specifier":
                    access_public = ts.text(src, item).strip().rstrip(":") == "public"
                    continue
                target = item
                tmpl = ""
                if itype == "template_declaration":
                    params = next((c for c in item.named_children if c.type == "template_parameter_list"), None)
                    tmpl = f"template {ts.text(src, params)} " if params is not None else ""
                    target = next((c for c in item.named_children if c.type not in ("template_parameter_list", "comment")), None)
                    if target is None:
                        continue
                ttype = target.type
                if ttype in ("field_declaration", "declaration", "function_definition"):
                    inner_type = target.child_by_field_name("type")
                    if inner_type is not None and inner_type.type in ("struct_specifier", "class_specifier", "union_specifier",
                                                                       "enum_specifier") and inner_type.child_by_field_name("body") is not None:
                        self.record(inner_type, target, qual + ".", exported and access_public, "")
                    for decl in target.children_by_field_name("declarator") or [None]:
                        if decl is None:
                            continue
                        mname, is_fn = _declarator_name(src, decl)
                        if not mname:
                            continue
                        msig = tmpl + _sig(src, target)
                        m_public = public and access_public
                        self.add_symbol(f"{qual}.{mname}", "method" if is_fn else "var", target, m_public, msig)
                        if m_public:
                            members.append({"kind": "method" if is_fn else "field", "name": mname, "sig": msig,
                                            "doc": _doc(src, item)})
                elif ttype in ("class_specifier", "struct_specifier", "union_specifier", "enum_specifier"):
                    self.record(target, item, qual + ".", exported and access_public, tmpl)
                elif ttype == "alias_declaration" and access_public and public:
                    aname = ts.text(src, target.child_by_field_name("name"))
                    members.append({"kind": "type", "name": aname, "sig": _sig(src, target), "doc": _doc(src, item)})
        if public:
            self.exports.append({"kind": word, "name": _qualified(prefix, name), "sig": sig,
                                 "doc": _doc(src, doc_node), "members": members})


# Macros a parser cannot see through: a line that is only a macro name (`FMT_BEGIN_NAMESPACE`,
# `Q_OBJECT`) and attribute-like macros before a declaration (`FMT_API`, `JV_EXPORT`,
# `FMT_CONSTEXPR`). They are blanked with spaces (lines and offsets stay) before parsing.
_BARE_MACRO_LINE = re.compile(rb"^[ \t]*[A-Z][A-Z0-9]*_[A-Z0-9_]+[ \t]*$", re.M)
_ATTRIBUTE_MACRO = re.compile(
    rb"(^[ \t]*#(?:[^\n\\]|\\.|\\\n)*)|"  # a preprocessor line (with its continuations) is kept: `#ifdef FMT_DEPRECATED`
    rb"\b[A-Z][A-Z0-9]*_(?:API|EXPORT|EXTERN|DLL|PUBLIC|INLINE|CONSTEXPR[0-9]*|CONSTEVAL|DEPRECATED|NODISCARD|NORETURN|"
    rb"ALWAYS_INLINE|NOINLINE|VISIBLE|VISIBILITY|HIDDEN|FORCE_INLINE|MAYBE_UNUSED|UNUSED|CDECL|STDCALL)\b(?=[ \t\n*&])", re.M)


_MAIN = re.compile(rb"^[ \t]*(?:int|void)[ \t]+main[ \t]*\(", re.M)


def _blank(match: re.Match) -> bytes:
    return b" " * (match.end() - match.start())


def _blank_attribute(match: re.Match) -> bytes:
    return match.group(1) if match.group(1) is not None else b" " * (match.end() - match.start())


def _without_macros(raw: bytes) -> bytes:
    if b"_" not in raw:
        return raw
    return _ATTRIBUTE_MACRO.sub(_blank_attribute, _BARE_MACRO_LINE.sub(_blank, raw))


def extract_c_family(raw: bytes, path: str, grammar: str, lang: Language) -> dict:
    bad = ts.decode_or_unread(raw)
    if bad:
        return bad
    raw = _without_macros(raw)
    root, err = ts.parse(grammar, raw)
    if err:
        return err
    header = _is_header(path)
    walker = _Walker(raw, header)
    try:
        walker.walk(root)
    except RecursionError:
        return {"status": "unread", "reason": "nested too deeply"}
    exports: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for entry in walker.exports:  # one entry per name (#if branches, overloads' first), macros after the rest
        if _INTERNAL_QUALIFIER.search(entry["name"]) or entry["name"] in _KEYWORDS:  # a keyword: a macro misread
            continue  # a specialization for an internal type (formatter<detail::styled_arg<T>>) is no API to call
        entry["name"] = ts.squash(entry["name"], 80)
        key = (entry["kind"], entry["name"])
        if key not in seen:
            seen.add(key)
            exports.append(entry)
    exports.sort(key=lambda e: e["kind"] == "macro")
    facts: dict = {"status": "ok", "exports": exports if header else [], "imports": sorted(set(walker.imports)),
                   "symbols": walker.symbols}
    place = _public_by_place(path)
    if not header:
        facts["public"] = False
    elif place is not None:
        facts["public"] = place
    if walker.main or (not header and _MAIN.search(raw)):  # the regex: a main split by #ifdef branches
        facts["main"] = "main()"
    return ts.flag_facts(facts, root, path, lang)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one C file (see the module docstring)."""
    return extract_c_family(raw, path, LANGUAGE.grammar, LANGUAGE)


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    """An ``#include`` that names a file of the repository: next to the includer first, then by path suffix."""
    local = join_relative(from_path, spec)
    if ctx.exists(local):
        return local
    return ctx.find_suffix(spec) if "/" in spec or not spec.startswith(("std", "sys")) else None


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    """System and third-party headers are not named one by one: the manifest's packages are listed instead."""
    return None
