"""Definitions and calls out of source text: what the function index stores, per language.

Per definition: its qualified name (``Class.method``, ``outer.inner``), kind (``function``,
``method``, ``class``), first and last line (1-based, inclusive; a decorator's line counts as
the first), whether it is public, its signature, and the names it calls (with how: a bare
name, ``self.x`` or ``obj.x``).

Extractors plug in per language through ``register_extractor``: Python uses ``ast``
(exact call sites); TypeScript/JavaScript uses tree-sitter when the ``typescript`` extra
is installed. Any extractor that yields symbols shaped like
``Symbol(qualname, kind, start, end, exported, signature)`` (the cards' language
extractors) joins through ``from_symbols``, which finds the calls in each body with a
language-neutral ``name(`` scan. Pure: text in, definitions out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import pyast
from ..records import record
from ..lazyre import lazy

__all__ = ["FunctionDef", "Call", "KINDS", "MAX_CALLS", "extract_functions", "python_functions", "from_symbols",
           "register_extractor", "has_extractor"]

KINDS = ("function", "method", "class")
MAX_CALLS = 400  # per definition: a generated table of calls is not a call graph


@record(frozen=True)
class Call:
    """One call site inside a definition's own body (not inside a nested definition)."""

    name: str
    line: int
    via: str  # "name" (f()), "self" (self.f() / cls.f() / super().f()), "attr" (obj.f()), "set" (self.x = ...: no call)


@record(frozen=True)
class FunctionDef:
    qual: str
    kind: str  # function | method | class
    start: int  # 1-based, inclusive (first decorator)
    end: int  # 1-based, inclusive
    exported: bool
    signature: str
    body_start: int = 0  # first line of the body (after the signature), 0 when unknown
    calls: tuple[Call, ...] = ()
    bases: tuple[str, ...] = ()  # for classes: base class names as written (last dotted part)

    @property
    def name(self) -> str:
        return self.qual.rsplit(".", 1)[-1]

    @property
    def parent(self) -> str:
        return self.qual.rsplit(".", 1)[0] if "." in self.qual else ""


# -- Python ------------------------------------------------------------------------


# nodes that hold no call: never pushed on the walk (a Name's Load context would be its only child), and
# the plain values of the other fields; compared by exact type, which is what makes the walk cheap. Made with
# ``ast`` at the first Python text read (``_load_ast``): a task boot imports this module and reads none
ast = None
_LEAVES: frozenset = frozenset()
_DEFS: frozenset = frozenset()


def _load_ast() -> None:
    global ast, _LEAVES, _DEFS
    if ast is None:
        import ast as module

        _LEAVES = frozenset({module.Name, module.Constant, module.Pass, module.Break, module.Continue, module.Global,
                             module.Nonlocal, module.alias, str, int, float, bool, complex, bytes, type(None), type(...)}
                            | {cls for base in (module.expr_context, module.operator, module.unaryop, module.cmpop,
                                                module.boolop)
                               for cls in base.__subclasses__()})
        _DEFS = frozenset({module.FunctionDef, module.AsyncFunctionDef, module.ClassDef})
        ast = module


# fields that only ever hold leaves (names, flags, contexts, operators, aliases): never read by the walk
_PLAIN_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "module", "level", "type_comment",
                           "kind", "conversion", "simple", "is_async", "kwd_attrs", "rest", "tag"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(name for name in cls._fields if name not in _PLAIN_FIELDS)
    return fields


def _children(node: ast.AST, out: list) -> None:
    """``ast.iter_child_nodes`` onto ``out``, leaving out the nodes that cannot hold a call."""
    leaves = _LEAVES
    for name in _fields(node.__class__):
        value = getattr(node, name, None)
        kind = value.__class__
        if kind is list:
            if value:  # most lists are empty (decorators, keywords, orelse): no comprehension for them
                out += [item for item in value if item.__class__ not in leaves]
        elif kind not in leaves:
            out.append(value)


def _own_calls(node: ast.AST) -> tuple[Call, ...]:
    """Calls in ``node``'s body, not descending into nested functions or classes (they have their own).

    The children are pushed inline (``_children``'s loop, without a call per node): the walk visits
    every node of a Python file once, and this loop is most of what indexing a Python file costs. A call
    is noted as a (line, name, via) tuple: deduplicated and sorted as tuples, and a
    ``Call`` made only for each distinct one."""
    found: list[tuple[int, str, str]] = []
    stack: list = []
    _children(node, stack)
    call, attribute, load, name_node = ast.Call, ast.Attribute, ast.Load, ast.Name
    leaves, defs, field_map, own = _LEAVES, _DEFS, _FIELDS, ("self", "cls")
    while stack and len(found) < MAX_CALLS:
        child = stack.pop()
        kind = child.__class__
        if kind in defs:
            stack.extend(child.decorator_list)  # a decorator runs in the enclosing scope
            continue
        if kind is call:
            func = child.func
            if func.__class__ is attribute:
                value = func.value
                if value.__class__ is name_node and value.id in own or (
                        value.__class__ is call and value.func.__class__ is name_node and value.func.id == "super"):
                    found.append((child.lineno, func.attr, "self"))
                else:
                    found.append((child.lineno, func.attr, "attr"))
                # the callee's own attribute node is counted here: walk only its receiver and the arguments
                stack.append(value)
                stack.extend(child.args)
                stack.extend(child.keywords)
                continue
            if func.__class__ is name_node:
                found.append((child.lineno, func.id, "name"))
        elif kind is attribute:
            if child.ctx.__class__ is not load:
                # `self.x = ...`, `clone._fields = ...`, `self.query.x = ...`: data the methods share (fn_attrs)
                found.append((child.lineno, child.attr, "set"))
            elif child.value.__class__ is name_node and child.value.id in own:
                found.append((child.lineno, child.attr, "self"))  # `self.identity`: a property is a call too
        fields = field_map.get(kind)
        if fields is None:
            fields = _fields(kind)
        for name in fields:
            value = getattr(child, name, None)
            vkind = value.__class__
            if vkind is list:
                if value:
                    stack += [item for item in value if item.__class__ not in leaves]
            elif vkind not in leaves:
                stack.append(value)
    return tuple([Call(name, line, via) for line, name, via in sorted(set(found))])


def _signature(lines: list[str], node, body_start: int) -> str:
    first = node.lineno
    last = max(first, body_start - 1) if body_start > first else first
    text = " ".join(line.strip() for line in lines[first - 1 : last])
    return text[:300]


def python_functions(text: str, tree: ast.Module | None = None) -> list[FunctionDef]:
    """Functions, methods and classes of one Python source text, in line order (pure); ``tree`` is the
    text's ``ast.parse`` when the caller has it already (the index build parses a file once)."""
    _load_ast()
    if tree is None:
        try:
            tree = pyast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
    lines = text.splitlines()
    out: list[FunctionDef] = []

    def visit(body, prefix: str, in_class: bool, public: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + node.name
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                end = getattr(node, "end_lineno", None) or node.lineno
                body_start = node.body[0].lineno if node.body else node.lineno  # == lineno for a one-line def
                dunder = node.name.startswith("__") and node.name.endswith("__")
                exported = public and (not node.name.startswith("_") or (in_class and dunder))
                if isinstance(node, ast.ClassDef):
                    bases = tuple(b.attr if isinstance(b, ast.Attribute) else b.id for b in node.bases
                                  if isinstance(b, (ast.Name, ast.Attribute)))
                    out.append(FunctionDef(qual, "class", start, end, exported, _signature(lines, node, body_start),
                                           body_start, _own_calls(node), bases))
                    visit(node.body, qual + ".", True, exported)
                else:
                    out.append(FunctionDef(qual, "method" if in_class else "function", start, end, exported,
                                           _signature(lines, node, body_start), body_start, _own_calls(node)))
                    visit(node.body, qual + ".", False, False)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith)) or type(node).__name__ == "TryStar":
                visit(getattr(node, "body", []), prefix, in_class, public)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, prefix, in_class, public)
                visit(getattr(node, "orelse", []), prefix, in_class, public)
                visit(getattr(node, "finalbody", []), prefix, in_class, public)

    visit(tree.body, "", False, True)
    out.sort(key=lambda d: (d.start, d.qual))
    return out


# -- any extractor's symbols ---------------------------------------------------------

_CALL_SITE = lazy(r"(?:(\bthis|\bself|\bsuper\(\))\s*\.\s*|(\.)\s*)?\b([A-Za-z_$][\w$]*)\s*\(")
_NOT_CALLS = frozenset("if for while switch catch return function fn func def match typeof sizeof new await yield "
                       "elif and or not in class struct impl".split())


def _scan_calls(lines: list[str], start: int, end: int, skip: list[tuple[int, int]], own: str = "") -> tuple[Call, ...]:
    found: set[Call] = set()
    for number in range(start, end + 1):
        if any(a <= number <= b for a, b in skip):
            continue
        line = lines[number - 1] if number - 1 < len(lines) else ""
        if len(line) > 1000:
            continue  # minified or generated: no call graph worth the time
        for match in _CALL_SITE.finditer(line):
            name = match.group(3)
            if name in _NOT_CALLS or (number == start and name == own):
                continue  # a keyword, or the definition's own name on its first line
            via = "self" if match.group(1) else "attr" if match.group(2) else "name"
            found.add(Call(name, number, via))
            if len(found) >= MAX_CALLS:
                break
    return tuple(sorted(found, key=lambda c: (c.line, c.name, c.via)))


_KIND_MAP = {"function": "function", "func": "function", "fn": "function", "method": "method", "constructor": "method",
             "class": "class", "struct": "class", "enum": "class", "trait": "class", "interface": "class", "impl": "class",
             "type": "class", "object": "class", "record": "class", "module": "class", "namespace": "class"}


def from_symbols(symbols: Iterable, text: str) -> list[FunctionDef]:
    """Definitions from any extractor's symbols (``qualname, kind, start, end, exported, signature``).

    Kinds are folded onto function / method / class (a struct, trait or impl is a class:
    it holds methods); symbols of other kinds (constants, fields) are left out. Calls are
    found by scanning each body for ``name(``, outside the ranges of nested definitions.
    """
    lines = text.splitlines()
    defs = []
    for sym in symbols:
        kind = _KIND_MAP.get(str(getattr(sym, "kind", "")).lower())
        start, end = int(getattr(sym, "start", 0) or 0), int(getattr(sym, "end", 0) or 0)
        if kind is None or start < 1 or end < start:
            continue
        defs.append((str(sym.qualname), kind, start, end, bool(getattr(sym, "exported", False)),
                     str(getattr(sym, "signature", "") or "")[:300]))
    defs.sort(key=lambda d: (d[2], -d[3], d[0]))
    out = []
    for qual, kind, start, end, exported, signature in defs:
        inner = [(s, e) for q, k, s, e, _, _ in defs if (s, e) != (start, end) and start <= s and e <= end]
        if kind != "class" and "." in qual and any(q == qual.rsplit(".", 1)[0] and k == "class" for q, k, *_ in defs):
            kind = "method"
        body_start = start + 1 if end > start else start
        out.append(FunctionDef(qual, kind, start, end, exported, signature or (lines[start - 1].strip()[:300] if start <= len(lines) else ""),
                               body_start, _scan_calls(lines, start, end, inner, qual.rsplit(".", 1)[-1])))
    return out


# -- TypeScript / JavaScript through tree-sitter ---------------------------------------

@record(frozen=True)
class _Symbol:
    qualname: str
    kind: str
    start: int
    end: int
    exported: bool
    signature: str


_TS_FUNCS = {"function_declaration", "generator_function_declaration"}
_TS_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}


def _ts_symbols(text: str, tsx: bool) -> list[_Symbol]:
    try:
        import tree_sitter
        import tree_sitter_typescript
    except ImportError:
        return []
    lang = tree_sitter.Language(tree_sitter_typescript.language_tsx() if tsx else tree_sitter_typescript.language_typescript())
    src = text.encode("utf-8")
    tree = tree_sitter.Parser(lang).parse(src)
    out: list[_Symbol] = []

    def name_of(node) -> str | None:
        n = node.child_by_field_name("name")
        return src[n.start_byte:n.end_byte].decode("utf-8", "replace") if n is not None else None

    def sig(node) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        return " ".join(src[node.start_byte:end].decode("utf-8", "replace").split())[:300]

    def walk(node, prefix: str, exported: bool, depth: int) -> None:
        if depth > 60:
            return
        for child in node.named_children:
            is_export = child.type == "export_statement"
            target = child
            if is_export:
                decl = child.child_by_field_name("declaration")
                if decl is None:
                    continue
                target = decl
            kind = None
            name = None
            if target.type in _TS_FUNCS:
                kind, name = "function", name_of(target)
            elif target.type in _TS_CLASSES:
                kind, name = "class", name_of(target)
            elif target.type == "method_definition":
                kind, name = "method", name_of(target)
            elif target.type in ("lexical_declaration", "variable_declaration"):
                for decl in target.named_children:
                    value = decl.child_by_field_name("value") if decl.type == "variable_declarator" else None
                    dname = name_of(decl) if decl.type == "variable_declarator" else None
                    if value is not None and dname and value.type in ("arrow_function", "function_expression", "function"):
                        head = src[target.start_byte:(value.child_by_field_name("body") or value).start_byte]
                        out.append(_Symbol(prefix + dname, "function", child.start_point[0] + 1, target.end_point[0] + 1,
                                           exported or is_export, " ".join(head.decode("utf-8", "replace").split())[:300]))
                        walk(value, prefix + dname + ".", False, depth + 1)
                continue
            if kind and name:
                out.append(_Symbol(prefix + name, kind, child.start_point[0] + 1, target.end_point[0] + 1,
                                   exported or is_export if kind != "method" else not name.startswith("#"), sig(target)))
                walk(target.child_by_field_name("body") or target, prefix + name + ".", False, depth + 1)
            elif target.type in ("statement_block", "class_body", "program", "expression_statement", "if_statement"):
                walk(target, prefix, exported, depth + 1)

    walk(tree.root_node, "", False, 0)
    return out


def _typescript(text: str, path: str) -> list[FunctionDef]:
    return from_symbols(_ts_symbols(text, path.endswith((".tsx", ".jsx"))), text)


# -- dispatch ------------------------------------------------------------------------

Extractor = Callable[[str, str], list[FunctionDef]]  # (text, path) -> definitions
_EXTRACTORS: dict[str, Extractor] = {
    "python": lambda text, path: python_functions(text),
    "ts": _typescript,
    "js": _typescript,
}


# the languages the cards read through tree-sitter (`cards.languages`): their symbols, with line ranges, are
# the function index's definitions too; without the grammar wheel a file simply has none
CARD_LANGUAGES = ("go", "rust", "java", "kotlin", "c", "cpp", "csharp", "swift", "scala", "ruby", "php")
MAX_CARD_FILE = 1_000_000


def _card_symbols(text: str, path: str) -> list[FunctionDef]:
    from ..cards.extract import extract_file

    facts = extract_file(path, text.encode("utf-8", "replace"), dotted=None, max_bytes=MAX_CARD_FILE)
    return from_symbols(facts.get("symbols") or (), text)


for _lang in CARD_LANGUAGES:
    _EXTRACTORS[_lang] = _card_symbols


def register_extractor(lang: str, extractor: Extractor) -> None:
    """Plug a language in: ``extractor(text, path)`` returns its definitions (``from_symbols`` helps)."""
    _EXTRACTORS[lang] = extractor


def has_extractor(lang: str) -> bool:
    """Whether files of ``lang`` have definitions in the function index (fn_files lists only those)."""
    return lang in _EXTRACTORS


def extract_functions(text: str, lang: str, path: str = "") -> list[FunctionDef]:
    """Definitions of one file (pure); a language without an extractor has none."""
    extractor = _EXTRACTORS.get(lang)
    if extractor is None:
        return []
    try:
        return extractor(text, path)
    except (ValueError, RecursionError, MemoryError):
        return []

