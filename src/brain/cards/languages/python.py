"""Python behind the extractor interface, read with the standard library's ``ast`` (no grammar wheel).

What one file exposes, imports, routes and runs (``extract_ast``), and its symbols with line
ranges (``symbols_of``, the code index's shape). The result of a file is a plain dict (picklable,
cached per content hash) so the map can skip unchanged files. Nothing here reads the disk: the
extractors take the bytes. A file that does not parse is reported with a reason, never raised.
"""

from __future__ import annotations

import ast
import warnings

from ... import pyast
from .base import Language, Symbol

__all__ = ["LANGUAGE", "extract", "extract_ast", "symbols_of", "format_args", "first_line", "resolve_relative",
           "HTTP_METHODS"]

LANGUAGE = Language(
    name="python", label="Python", extensions=(".py", ".pyi"), extra="",
    manifests=(), test_patterns=(r"(^|/)tests?/", r"(^|/)test_[^/]*\.py$", r"_test\.py$", r"(^|/)conftest\.py$"),
)


HTTP_METHODS = ("get", "post", "put", "patch", "delete", "head", "options", "trace", "websocket", "api_route", "route")
MAX_SIG = 160       # a signature longer than this is shortened
MAX_DEFAULT = 32    # a default value longer than this is shown as ...
MAX_DOC = 110       # docstring first lines are cut here


def first_line(doc: str | None) -> str:
    """The first non-empty line of a docstring, shortened, without marker-looking text."""
    if not doc:
        return ""
    for line in doc.strip().splitlines():
        line = line.strip()
        if line:
            if len(line) > MAX_DOC:
                line = line[: MAX_DOC - 1].rstrip() + "…"
            line = line.replace("<!--", "<!-").replace("-->", "->")
            return line if line.count("`") % 2 == 0 else line.replace("`", "'")
    return ""


def _short(node: ast.AST | None, limit: int = MAX_DEFAULT) -> str:
    if node is None:
        return ""
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of odd trees must not stop the map
        return "…"
    text = " ".join(text.split())
    return text if len(text) <= limit else "…"


def _param(arg: ast.arg, default: ast.AST | None) -> str:
    """One parameter as a signature writes it: `name`, `name: T`, `name=x`, `name: T = x`."""
    text = arg.arg
    if arg.annotation is not None:
        text += f": {_short(arg.annotation, 48)}"
    if default is not None:
        text += ("=" if arg.annotation is None else " = ") + _short(default)
    return text


def format_args(args: ast.arguments, *, drop_first: bool = False) -> str:
    """Render an argument list compactly: annotations kept, long defaults elided."""
    parts: list[str] = []
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    start = 1 if drop_first and positional else 0
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        if i < start:
            continue
        parts.append(_param(arg, default))
        if args.posonlyargs and i == len(args.posonlyargs) - 1:
            parts.append("/")
    if args.vararg is not None:
        parts.append("*" + args.vararg.arg + (f": {_short(args.vararg.annotation, 48)}" if args.vararg.annotation else ""))
    elif args.kwonlyargs:
        parts.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        parts.append(_param(arg, default))
    if args.kwarg is not None:
        parts.append("**" + args.kwarg.arg + (f": {_short(args.kwarg.annotation, 48)}" if args.kwarg.annotation else ""))
    return ", ".join(parts)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> str:
    decorators = {_short(d, 64) for d in node.decorator_list}
    drop = method and "staticmethod" not in decorators
    text = f"{node.name}({format_args(node.args, drop_first=drop)})"
    if node.returns is not None:
        text += f" -> {_short(node.returns, 48)}"
    if len(text) > MAX_SIG:
        text = text[: MAX_SIG - 2].rstrip() + "…)"
    return text


def _function(node, *, method: bool = False) -> dict:
    decorators = [_short(d, 64) for d in node.decorator_list]
    kind = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    if method:
        if "property" in decorators or any(d.endswith(".setter") or d.endswith("cached_property") for d in decorators):
            kind = "property"
        elif "classmethod" in decorators:
            kind = "classmethod"
        elif "staticmethod" in decorators:
            kind = "staticmethod"
    return {"kind": kind, "name": node.name, "sig": _signature(node, method=method) if kind != "property" else node.name,
            "doc": first_line(ast.get_docstring(node, clean=True))}


_FIELD_CALLS = ("Field", "ForeignKey", "OneToOneField", "ManyToManyField", "Column", "relationship", "mapped_column")


def _field_of(item: ast.stmt) -> str | None:
    """``name: type`` for dataclass/pydantic/TypedDict fields and ORM columns (Django, SQLAlchemy)."""
    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not item.target.id.startswith("_"):
        annotation = _short(item.annotation, 40)
        if annotation.startswith("ClassVar"):
            return None
        return f"{item.target.id}: {annotation}"
    if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name) \
            and isinstance(item.value, ast.Call) and not item.targets[0].id.startswith("_"):
        func = item.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name.endswith(_FIELD_CALLS):
            return f"{item.targets[0].id}: {name}"
    return None


def _class(node: ast.ClassDef) -> dict:
    bases = [_short(b, 48) for b in node.bases] + [f"{k.arg}={_short(k.value, 48)}" for k in node.keywords if k.arg]
    methods = []
    fields = []
    seen = set()
    for item in node.body:
        field = _field_of(item)
        if field is not None:
            fields.append(field)
            continue
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if item.name.startswith("_") and item.name != "__init__":
                continue
            if item.name in seen:  # property setters and overloads: keep the first
                continue
            seen.add(item.name)
            methods.append(_function(item, method=True))
    return {"kind": "class", "name": node.name, "sig": f"{node.name}({', '.join(bases)})" if bases else node.name,
            "doc": first_line(ast.get_docstring(node, clean=True)), "methods": methods, "fields": fields[:40]}


def _literal_names(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return names if len(names) == len(node.elts) else names or None
    return None


def resolve_relative(package: str, module: str | None, level: int) -> str | None:
    """Absolute dotted name of ``from <level dots><module> import ...`` inside ``package``."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    if module:
        base = base + module.split(".")
    return ".".join(base) if base else None


def _str_arg(call: ast.Call, index: int = 0, keyword: str | None = None) -> str | None:
    node = None
    if len(call.args) > index:
        node = call.args[index]
    elif keyword:
        node = next((k.value for k in call.keywords if k.arg == keyword), None)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _methods_kw(call: ast.Call) -> list[str] | None:
    for k in call.keywords:
        if k.arg == "methods":
            names = _literal_names(k.value)
            if names:
                return [m.upper() for m in names]
    return None


def _routes_from_decorator(dec: ast.AST, handler: str) -> list[list[str]]:
    """Flask/FastAPI/Starlette-style ``@x.route("/p", methods=[..])`` / ``@x.get("/p")``."""
    if not isinstance(dec, ast.Call) or not isinstance(dec.func, ast.Attribute):
        return []
    attr = dec.func.attr
    if attr not in HTTP_METHODS:
        return []
    path = _str_arg(dec, 0, "path") or _str_arg(dec, 0, "rule")
    if path is None or not (path.startswith("/") or path == ""):
        return []
    if attr in ("route", "api_route"):
        methods = _methods_kw(dec) or (["GET"] if attr == "route" else ["ANY"])
    elif attr == "websocket":
        methods = ["WS"]
    else:
        methods = [attr.upper()]
    return [[m, path, handler] for m in methods]


def _routes_from_call(call: ast.Call, in_urls: bool) -> list[list[str]]:
    """Route tables: Starlette ``Route(...)``, ``add_url_rule``, ``add_api_route``, Django ``path(...)``."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("Route", "WebSocketRoute", "Mount", "Host"):
        path = _str_arg(call, 0, "path")
        if path is None:
            return []
        target = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg in ("endpoint", "app", "routes")), None)
        handler = _short(target, 48) if target is not None else ""
        if name == "Mount":
            return [["MOUNT", path, handler]]
        if name == "WebSocketRoute":
            return [["WS", path, handler]]
        if name == "Host":
            return []
        return [[m, path, handler] for m in (_methods_kw(call) or ["GET"])]
    if name in ("add_url_rule", "add_api_route", "add_route", "add_websocket_route"):
        path = _str_arg(call, 0, "rule") or _str_arg(call, 0, "path")
        if path is None or not path.startswith("/"):
            return []
        target = call.args[1] if len(call.args) > 1 and name != "add_url_rule" else next(
            (k.value for k in call.keywords if k.arg in ("view_func", "endpoint", "route")), call.args[2] if len(call.args) > 2 else None)
        handler = _short(target, 48) if target is not None else ""
        default = ["WS"] if name == "add_websocket_route" else ["GET"] if name != "add_api_route" else ["ANY"]
        return [[m, path, handler] for m in (_methods_kw(call) or default)]
    if in_urls and name in ("path", "re_path", "url"):
        path = _str_arg(call, 0, "route")
        if path is None:
            return []
        target = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "view"), None)
        handler = _short(target, 60) if target is not None else ""
        if handler.startswith("include("):
            return [["INCLUDE", path, handler]]
        return [["ANY", path, handler]]
    return []


_ROUTE_TABLE_MARKS = (b"Route(", b"Mount(", b"add_url_rule", b"add_api_route", b"add_route", b"add_websocket_route")
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module):
    """Every statement of the tree, without descending into expressions."""
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in _BODY_FIELDS:
            children = getattr(node, name, None)
            if children:
                stack.extend(reversed(children))


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = [test.left, test.comparators[0]]
        has_name = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
        has_main = any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)
        return has_name and has_main
    return False


def extract_ast(data: bytes, *, dotted: str, is_package: bool, path: str = "<file>",
                tree: ast.Module | None = None) -> dict:
    """Facts of one Python file. ``dotted`` is the file's module name (``a.b`` for a/b.py or a/b/__init__.py);
    ``tree`` is ``ast.parse(data)`` when the caller parsed it already."""
    if b"\x00" in data[:8192]:
        return {"status": "unread", "reason": "binary"}
    try:
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = pyast.parse(data, filename=path)
    except SyntaxError as exc:
        return {"status": "unread", "reason": f"syntax error line {exc.lineno}"}
    except (ValueError, UnicodeDecodeError, RecursionError, MemoryError) as exc:
        return {"status": "unread", "reason": type(exc).__name__}
    package = dotted if is_package else dotted.rpartition(".")[0]
    facts: dict = {
        "status": "ok",
        "doc": first_line(ast.get_docstring(tree, clean=True)),
        "all": None,
        "defs": [],
        "imports": [],     # [absolute dotted module, [names]] ; names [] for `import x`
        "reexports": [],   # [name, absolute source module] for `from X import name` at top level
        "main": False,
        "routes": [],
    }
    in_urls = path.rpartition("/")[2] == "urls.py"
    defined: dict[str, dict] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            entry = _function(node)
            defined[node.name] = entry
            for dec in node.decorator_list:
                facts["routes"].extend(_routes_from_decorator(dec, node.name))
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = _class(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                if target.id == "__all__":
                    names = _literal_names(node.value) if node.value is not None else None
                    if names is not None:
                        if isinstance(node, ast.AugAssign) and facts["all"] is not None:
                            facts["all"] = facts["all"] + names
                        else:
                            facts["all"] = names
                    elif isinstance(node.value, ast.BinOp) and facts["all"] is None:
                        # __all__ = a.__all__ + b.__all__ + [...]: keep the literal parts
                        collected = []
                        for part in ast.walk(node.value):
                            lit = _literal_names(part)
                            if lit:
                                collected.extend(lit)
                        facts["all"] = collected
                elif not target.id.startswith("_") and target.id not in defined:
                    annotation = _short(node.annotation, 48) if isinstance(node, ast.AnnAssign) else ""
                    defined[target.id] = {"kind": "var", "name": target.id,
                                          "sig": f"{target.id}: {annotation}" if annotation else target.id, "doc": "",
                                          "upper": target.id.isupper(), "annotated": bool(annotation)}
        elif isinstance(node, ast.If) and _is_main_guard(node):
            facts["main"] = True
        elif isinstance(node, ast.ImportFrom):
            source = resolve_relative(package, node.module, node.level)
            if source:
                for alias in node.names:
                    if alias.name != "*":
                        facts["reexports"].append([alias.asname or alias.name, source, alias.name])
                    else:
                        facts["reexports"].append(["*", source, "*"])
    # imports anywhere in the statement tree (function-level imports are dependencies too);
    # expressions are walked only in files that may hold route tables (walking them is the cost)
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                facts["imports"].append([alias.name, []])
        elif isinstance(node, ast.ImportFrom):
            source = resolve_relative(package, node.module, node.level)
            if source:
                facts["imports"].append([source, [a.name for a in node.names]])
    if in_urls or any(mark in data for mark in _ROUTE_TABLE_MARKS):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                facts["routes"].extend(_routes_from_call(node, in_urls))
    facts["defs"] = list(defined.values())
    facts["symbols"] = symbols_of(tree)  # the code index's shape (languages/base.py Symbol)
    return facts


def symbols_of(tree: ast.Module) -> list[Symbol]:
    """Top-level functions, classes and their methods, and top-level assignments, with line ranges."""
    out: list[Symbol] = []

    def sig(node) -> str:
        try:
            args = ast.unparse(node.args)
        except Exception:  # noqa: BLE001 - odd trees still give a name
            args = "…"
        ret = ""
        if getattr(node, "returns", None) is not None:
            try:
                ret = " -> " + ast.unparse(node.returns)
            except Exception:  # noqa: BLE001
                ret = ""
        text = f"{'async def' if isinstance(node, ast.AsyncFunctionDef) else 'def'} {node.name}({args}){ret}"
        return " ".join(text.split())[:160]

    for node in tree.body:
        end = getattr(node, "end_lineno", None) or node.lineno if hasattr(node, "lineno") else 0
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(Symbol(node.name, "function", node.lineno, end, not node.name.startswith("_"), sig(node)))
        elif isinstance(node, ast.ClassDef):
            out.append(Symbol(node.name, "class", node.lineno, end, not node.name.startswith("_"), f"class {node.name}"))
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    public = not node.name.startswith("_") and (not item.name.startswith("_") or item.name == "__init__")
                    out.append(Symbol(f"{node.name}.{item.name}", "method", item.lineno, item.end_lineno or item.lineno,
                                      public, sig(item)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id != "__all__":
                    kind = "const" if target.id.isupper() else "var"
                    out.append(Symbol(target.id, kind, node.lineno, end, not target.id.startswith("_"), target.id))
    return out


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Python file (``extract_ast``) with its ``symbols``: the extractor interface's entry."""
    name = path.rpartition("/")[2]
    if dotted is None:
        dotted = name.rsplit(".", 1)[0]
    return extract_ast(raw, dotted=dotted, is_package=name.startswith("__init__."), path=path)
