"""The Exposes section of a card: each file's public API as blocks, held to a token budget.

Python files list their public classes, functions and names (with what the package
``__init__`` re-exports), TypeScript/JavaScript files their exports, and the languages
behind the extractor interface their ``generic`` blocks. While the section is over its
budget, the costliest file drops one level of detail (docs, method signatures, methods,
signatures, names only), and the section says so. Pure, like the rest of the rendering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..tokens import estimate_tokens
from .discovery import Module
from .generic import exposing_files, generic_blocks
from .markers import sanitize

if TYPE_CHECKING:
    from .render import RenderInput

__all__ = ["rel_to_module", "python_blocks", "node_blocks", "exposes_section", "exposed_names", "exposed_routes", "private_base"]


def rel_to_module(module: Module, path: str) -> str:
    return path[len(module.folder) + 1:] if module.folder else path


def _skip_for_exposes(dotted: str, path: str, base: str = "") -> bool:
    """Test files, migrations, `__main__` and private modules expose nothing.

    Privacy is judged below ``base``, the module's own package: the card of a private package
    that holds the implementation (`httpx/_transports`) shows what its files define."""
    name = path.rpartition("/")[2]
    if name in ("__main__.py", "conftest.py", "setup.py") or name.startswith(("test_", "tests_")) or name.endswith("_test.py"):
        return True
    if base and (dotted == base or dotted.startswith(base + ".")):
        dotted = dotted[len(base):].lstrip(".") or "__init__"
    parts = dotted.split(".")
    if any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts):
        return True
    return any(p in ("migrations", "tests") for p in parts[1:])


# -- Python Exposes -----------------------------------------------------------------------


def _py_file_entries(facts: dict, dotted: str, is_init: bool, own_tops: set[str]) -> tuple[list[dict], list[tuple[str, str]]]:
    """(defined entries, [(name, source module)] re-exports) a Python file exposes."""
    defs = {d["name"]: d for d in facts.get("defs", [])}
    imported = {}
    for name, source, _orig in facts.get("reexports", []):
        if name != "*":
            imported.setdefault(name, source)
    entries: list[dict] = []
    reexports: list[tuple[str, str]] = []
    if facts.get("all") is not None:
        for name in dict.fromkeys(facts["all"]):
            if name in defs:
                entries.append(defs[name])
            elif name in imported:
                reexports.append((name, imported[name]))
            else:
                reexports.append((name, ""))
        return entries, reexports
    for entry in facts.get("defs", []):
        if entry["name"].startswith("_"):
            continue
        if entry["kind"] == "var" and not (entry.get("upper") or entry.get("annotated")):
            continue
        entries.append(entry)
    if is_init:
        for name, source, _orig in facts.get("reexports", []):
            if name == "*" or name.startswith("_"):
                continue
            if source.split(".")[0] in own_tops:
                reexports.append((name, source))
    return entries, reexports


def _entry_line(entry: dict, level: int) -> list[str]:
    kind = entry["kind"]
    prefix = {"class": "class ", "def": "", "async def": "async ", "var": ""}.get(kind, "")
    text = f"- `{prefix}{entry['sig']}`" if level < 4 else f"`{entry['name']}`"
    if level <= 2 and entry.get("doc"):
        text += f" — {entry['doc']}"
    lines = [text]
    fields = entry.get("fields") or []
    if kind == "class" and fields and level < 3:
        if level <= 1:
            lines.append("  - fields: " + ", ".join(f"`{f}`" for f in fields))
        else:
            lines.append("  - fields: " + ", ".join(f"`{f.split(':', 1)[0]}`" for f in fields))
    methods = entry.get("methods") or []
    if kind == "class" and methods and level < 3:
        if level == 0:
            for m in methods:
                tag = "" if m["kind"] in ("def",) else f" ({m['kind']})"
                line = f"  - `{m['sig']}`{tag}"
                if m.get("doc"):
                    line += f" — {m['doc']}"
                lines.append(line)
        elif level == 1:
            for m in methods:
                tag = "" if m["kind"] in ("def",) else f" ({m['kind']})"
                lines.append(f"  - `{m['sig']}`{tag}")
        else:
            lines.append("  - methods: " + ", ".join(f"`{m['name']}`" for m in methods))
    return lines


def _python_block(dotted: str, facts: dict, entries: list[dict], reexports: list[tuple[str, str]], level: int,
                  count: int = 1) -> str:
    label = f"`{dotted}`" + (f" ({count} modules alike)" if count > 1 else "")
    if level >= 4:
        names = [e["name"] for e in entries] + [n for n, _ in reexports]
        return f"- {label}: " + ", ".join(f"`{n}`" for n in names)
    head = f"### {label}" + (f" — {facts['doc']}" if facts.get("doc") and level <= 2 and count == 1 else "")
    lines = [head, ""]
    for entry in entries:
        lines.extend(_entry_line(entry, level))
    if reexports:
        by_source: dict[str, list[str]] = {}
        for name, source in reexports:
            by_source.setdefault(source, []).append(name)
        for source in sorted(by_source):
            names = ", ".join(f"`{n}`" for n in by_source[source])
            lines.append(f"- re-exports {names}" + (f" (from `{source}`)" if source else ""))
    return "\n".join(lines)


def _pattern(names: list[str]) -> str:
    """``a.x.f``, ``a.y.f`` -> ``a.*.f``."""
    split = [n.split(".") for n in names]
    if len({len(p) for p in split}) != 1:
        return names[0] + ", …"
    return ".".join(parts[0] if len(set(parts)) == 1 else "*" for parts in zip(*split))


def private_base(inp: RenderInput) -> str:
    """The dotted package of a module that is itself private (`httpx._transports`), else ""."""
    init = f"{inp.module.folder}/__init__.py" if inp.module.folder else "__init__.py"
    dotted = inp.dotted.get(init, "")
    parts = dotted.split(".") if dotted else []
    return dotted if any(p.startswith("_") and not p.endswith("__") for p in parts) else ""


def python_blocks(inp: RenderInput) -> list[tuple[str, Callable[[int], str]]]:
    """(key, render at a detail level) per Python file that exposes something; look-alike files grouped."""
    own_tops = inp.project.top_packages
    files = [p for p in inp.module.files if p in inp.dotted]
    base = private_base(inp)
    found = []
    for path in sorted(files, key=lambda p: (inp.dotted[p], p)):
        facts = inp.facts.get(path) or {}
        dotted = inp.dotted[path]
        if facts.get("status") != "ok" or _skip_for_exposes(dotted, path, base):
            continue
        entries, reexports = _py_file_entries(facts, dotted, path.endswith("__init__.py"), own_tops)
        if entries or reexports:
            found.append((path, dotted, facts, entries, reexports))
    groups: dict[tuple, list[int]] = {}
    for i, (path, dotted, _facts, entries, reexports) in enumerate(found):
        key = (path.rpartition("/")[2], tuple(e["name"] for e in entries), tuple(n for n, _ in reexports))
        groups.setdefault(key, []).append(i)
    blocks = []
    done: set[int] = set()
    for i, (path, dotted, facts, entries, reexports) in enumerate(found):
        if i in done:
            continue
        key = (path.rpartition("/")[2], tuple(e["name"] for e in entries), tuple(n for n, _ in reexports))
        members = groups[key] if len(groups[key]) >= 3 else [i]
        done.update(members)
        label = _pattern([found[j][1] for j in members]) if len(members) > 1 else dotted
        blocks.append((path, lambda level, label=label, facts=facts, entries=entries, reexports=reexports, n=len(members):
                       _python_block(label, facts, entries, reexports, level, n)))
    return blocks


# -- TypeScript / Node Exposes ------------------------------------------------------------------


def _node_entry_files(inp: RenderInput) -> set[str]:
    """Source files behind package.json main/module/exports/bin (dist/x.js is looked up as src/x.ts too)."""
    import posixpath

    files = set(inp.module.files)
    found: set[str] = set()
    for path in inp.module.files:
        pkg = (inp.facts.get(path) or {}).get("package")
        if not pkg:
            continue
        base = path.rpartition("/")[0]
        for target in pkg.get("entry_targets", []):
            norm = posixpath.normpath(posixpath.join(base, target)) if base else posixpath.normpath(target)
            stem = norm.rsplit(".", 1)[0] if "." in norm.rpartition("/")[2] else norm
            stems = {stem}
            for built in ("dist/", "build/", "lib/", "out/"):
                if f"/{built}" in f"/{stem}":
                    stems.add(("/" + stem).replace(f"/{built}", "/src/", 1).lstrip("/"))
            for cand_stem in stems:
                for cand in (norm, *(cand_stem + ext for ext in (".ts", ".tsx", ".mts", ".js", ".mjs", ".cjs", ".jsx")),
                             *(cand_stem + "/index" + ext for ext in (".ts", ".tsx", ".js"))):
                    if cand in files:
                        found.add(cand)
    return found


def _node_block(inp: RenderInput, path: str, facts: dict, entry: bool, level: int) -> str:
    rel = rel_to_module(inp.module, path)
    pkg = facts.get("package")
    if pkg:
        lines = []
        if pkg.get("name"):
            lines.append(f"- package `{pkg['name']}`" + (f" {pkg['version']}" if pkg.get("version") else "")
                         + (f" — {sanitize(pkg['description'])[:110]}" if pkg.get("description") and level <= 2 else ""))
        for key in ("main", "module", "types", "bin"):
            if pkg.get(key):
                lines.append(f"- `{key}`: {pkg[key]}")
        if pkg.get("exports"):
            lines.append("- `exports`: " + ", ".join(f"`{e}`" for e in pkg["exports"]))
        return f"### `{rel}`\n\n" + "\n".join(lines)
    exports = facts.get("exports") or []
    if level >= 4:
        return f"- `{rel}`: " + ", ".join(f"`{e['name']}`" for e in exports)
    lines = [f"### `{rel}`" + (" (entry point)" if entry else ""), ""]
    reexports: dict[str, list[str]] = {}
    for e in exports:
        if e["kind"] == "reexport":
            reexports.setdefault(e.get("from") or "", []).append(e["name"])
            continue
        sig = e["sig"] if level < 3 else e["name"]
        text = f"- `{e['kind']} {sig}`" if e["kind"] != "default" else f"- `export default {sig}`"
        if level <= 2 and e.get("doc"):
            text += f" — {e['doc']}"
        lines.append(text)
        if e.get("members") and level < 2:
            lines.append("  - members: " + ", ".join(f"`{m}`" for m in e["members"]))
    for source, names in reexports.items():
        lines.append("- re-exports " + ", ".join(f"`{n}`" for n in names) + (f" from `{source}`" if source else ""))
    return "\n".join(lines)


def node_blocks(inp: RenderInput) -> list[tuple[str, Callable[[int], str]]]:
    entry_files = _node_entry_files(inp)
    blocks = []
    for path in sorted(inp.module.files, key=lambda p: (0 if p in entry_files or p.endswith("package.json") else 1, p)):
        facts = inp.facts.get(path) or {}
        if facts.get("status") != "ok":
            continue
        name = path.rpartition("/")[2]
        pkg = facts.get("package")
        if pkg is not None:
            if not any(pkg.get(k) for k in ("name", "main", "module", "types", "bin", "exports")):
                continue
        elif not facts.get("exports") or ".test." in name or ".spec." in name or "/__tests__/" in f"/{path}":
            continue
        blocks.append((path, lambda level, path=path, facts=facts, entry=path in entry_files:
                       _node_block(inp, path, facts, entry, level)))
    return blocks


def exposes_section(inp: RenderInput) -> tuple[str, int]:
    """(Exposes body, files whose detail was lowered): the most detail that fits the budget.

    Every file starts fully detailed; while the section is over budget, the costliest
    file drops one level (docs, method signatures, methods, signatures, names only).
    Files that still do not fit at the lowest level are named at the end.
    """
    make = python_blocks if inp.module.kind == "python" else node_blocks if inp.module.kind == "node" else None
    if make is None and inp.module.kind != "other":
        make = lambda i: generic_blocks(i.module, i.facts)  # noqa: E731 - languages behind the extractor interface
    if make is None:
        return "_No extractor for this language: see the files below and the How to use section._", 0
    blocks = make(inp)
    via = ""
    if inp.reexported_by:  # a private package: say where users get its names
        via = "_Private package: " + "; ".join(
            f"`{pkg}` re-exports " + ("all its public names (`import *`)" if names == ["*"] else
                                      ", ".join(f"`{n}`" for n in names[:12]) + (" …" if len(names) > 12 else ""))
            + (f" (through `{rest[0]}`)" if rest and rest[0] else "")
            for pkg, names, *rest in inp.reexported_by) + "._\n\n"
    if not blocks:
        if inp.module.kind not in ("python", "node"):
            return via + "_Nothing public found by the language's rule (exported names, `pub`, `public`, public headers)._", 0
        return via + "_Nothing public found (no `__all__`, no public top-level names)._", 0
    levels = [0] * len(blocks)
    texts = [render(0) for _key, render in blocks]
    costs = [estimate_tokens(t) + 1 for t in texts]
    total = sum(costs)
    budget = inp.exposes_budget
    while total > budget:
        candidates = [i for i in range(len(blocks)) if levels[i] < 4]
        if not candidates:
            break
        i = max(candidates, key=lambda j: (-levels[j], costs[j], -j))
        levels[i] += 1
        texts[i] = blocks[i][1](levels[i])
        new = estimate_tokens(texts[i]) + 1
        total += new - costs[i]
        costs[i] = new
    shown = len(blocks)
    while total > budget and shown > 1:
        shown -= 1
        total -= costs[shown]
    body = via + "\n\n".join(texts[:shown])
    lowered = sum(1 for lv in levels[:shown] if lv)
    notes = []
    if lowered:
        notes.append(f"detail lowered in {lowered} of {shown} files to fit {budget} tokens: read the files for full signatures")
    if shown < len(blocks):
        rest = [blocks[i][0] for i in range(shown, len(blocks))]
        notes.append(f"{len(rest)} more files not shown: " + ", ".join(f"`{rel_to_module(inp.module, p)}`" for p in rest[:20])
                     + (" …" if len(rest) > 20 else ""))
    if notes:
        body += "\n\n_" + "; ".join(notes) + "._"
    return body, lowered


def exposed_names(inp: RenderInput) -> set[str]:
    """Every public name the module's files expose (for contracts)."""
    names: set[str] = set()
    if inp.module.kind == "python":
        for path in inp.module.files:
            facts = inp.facts.get(path) or {}
            dotted = inp.dotted.get(path)
            if dotted is None or facts.get("status") != "ok" or _skip_for_exposes(dotted, path, private_base(inp)):
                continue
            entries, reexports = _py_file_entries(facts, dotted, path.endswith("__init__.py"), inp.project.top_packages)
            names.update(e["name"] for e in entries)
            names.update(n for n, _ in reexports)
    else:
        paths = inp.module.files if inp.module.kind in ("node", "other") else exposing_files(inp.module, inp.facts)
        for path in paths:
            for e in (inp.facts.get(path) or {}).get("exports") or []:
                names.add(e["name"])
                names.update(f"{e['name']}.{m['name']}" for m in e.get("members") or [] if isinstance(m, dict) and m.get("kind") == "method")
    return names


def exposed_routes(inp: RenderInput) -> list[tuple[str, str, str, str]]:
    """(method, path, handler, file) for every route found in the module, sorted."""
    routes = set()
    for path in inp.module.files:
        facts = inp.facts.get(path) or {}
        for method, route, handler in facts.get("routes") or []:
            routes.add((method, route, handler, rel_to_module(inp.module, path)))
    return sorted(routes, key=lambda r: (r[1], r[0], r[2], r[3]))


# -- other sections ---------------------------------------------------------------------------


