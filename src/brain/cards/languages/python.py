"""Python behind the extractor interface: the ``ast`` reader of ``brain.cards.python``, plus symbols.

No grammar wheel: Python is read with the standard library's ``ast``.
"""

from __future__ import annotations

import ast

from .base import Language, Symbol

__all__ = ["LANGUAGE", "extract", "symbols_of"]

LANGUAGE = Language(
    name="python", label="Python", extensions=(".py", ".pyi"), extra="",
    manifests=(), test_patterns=(r"(^|/)tests?/", r"(^|/)test_[^/]*\.py$", r"_test\.py$", r"(^|/)conftest\.py$"),
)


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
    """Facts of one Python file (``brain.cards.python.extract``) with its ``symbols``."""
    from ..python import extract as extract_py

    name = path.rpartition("/")[2]
    if dotted is None:
        dotted = name.rsplit(".", 1)[0]
    return extract_py(raw, dotted=dotted, is_package=name.startswith("__init__."), path=path)
