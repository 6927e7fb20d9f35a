"""Card rendering: pure functions from extracted facts to the generated markdown block.

Same facts, same bytes: every list is sorted or kept in file order, nothing depends
on time, the machine or the order files were read. The Exposes section is held to a
token budget by lowering its detail level step by step (docs, then method
signatures, then methods, then signatures), and says so when it did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .contracts import Contract, divergence
from .discovery import TS_EXT, Module
from .exposes import exposed_names, exposed_routes, exposes_section, node_blocks, python_blocks, rel_to_module
from .generic import generic_dependencies, generic_entry_points, manifest_lines
from .markers import BEGIN, END, sanitize
from .project import STDLIB, ProjectInfo

__all__ = ["RenderInput", "render_generated", "python_blocks", "node_blocks", "exposes_section", "exposed_names", "exposed_routes", "NODE_BUILTINS"]

MAX_ROUTES = 60
MAX_FILES_LISTED = 200
MAX_PACKAGES_LISTED = 80
MAX_IMPORT_NAMES = 4
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")

NODE_SUFFIXES = tuple(sorted(TS_EXT)) + ("package.json",)


def _label(kind: str) -> str:
    from .languages.base import language_named

    lang = language_named(kind)
    return lang.label if lang else "Source"


NODE_BUILTINS = frozenset({
    "assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram", "dns",
    "domain", "events", "fs", "http", "http2", "https", "inspector", "module", "net", "os", "path", "perf_hooks",
    "process", "punycode", "querystring", "readline", "repl", "stream", "string_decoder", "timers", "tls", "tty",
    "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib", "test",
})


@dataclass
class RenderInput:
    module: Module
    source_hash: str
    facts: dict[str, dict]                       # path -> facts of a file
    dotted: dict[str, str]                       # python path -> dotted module name
    resolve: Callable[[str], str | None]         # dotted python module -> brain module
    resolve_node: Callable[[str, str], str | None] = lambda spec, path: None  # import spec, from file -> module
    is_module: Callable[[str], bool] = lambda dotted: False                  # a dotted name is a Python module
    project: ProjectInfo = field(default_factory=ProjectInfo)
    contract: Contract | None = None
    contract_path: str = ""
    exposes_budget: int = 2500
    entry_label: Callable[[str, str], str] = lambda label, path: label  # an entry point's command, from the file's project root
    packages: tuple[str, ...] = ()               # a Go/Java project root: the package modules under it (its own go.mod/pom)
    node_declared: dict[str, str] = field(default_factory=dict)   # npm name -> "name@version"
    # languages behind the extractor interface (generic.py): import spec, from file -> module / external package
    resolve_import: Callable[[str, str], str | None] = lambda spec, path: None
    external: Callable[[str, str], tuple | None] = lambda spec, path: None
    context: str = ""                            # the nearest manifest's title when the module has none of its own
    reexported_by: list[tuple] = field(default_factory=list)  # (package, names[, through]) re-exporting a private one


def _entry_points(inp: RenderInput) -> list[str]:
    lines = []
    module = inp.module
    for name, target, group in inp.project.entry_points:
        target_mod = target.split(":", 1)[0].strip()
        if inp.resolve(target_mod) == module.name:
            lines.append(f"- `{name}` → `{target}` ({group})")
    for path in module.files:
        facts = inp.facts.get(path) or {}
        if path.endswith("__main__.py") and path in inp.dotted:
            pkg = inp.dotted[path].rpartition(".")[0]
            lines.append(f"- `python -m {pkg}` (`{rel_to_module(module, path)}`)")
        elif facts.get("main") is True:
            lines.append(f"- `{rel_to_module(module, path)}` runs as a script (`if __name__ == \"__main__\"`)")
        pkg = facts.get("package")
        if pkg and isinstance(pkg, dict):
            for script, command in sorted((pkg.get("scripts") or {}).items()):
                lines.append(f"- `npm run {script}`: `{sanitize(str(command))[:120]}`")
            for name, target in sorted((pkg.get("bin_map") or {}).items()):
                lines.append(f"- `{name}` → `{target}` (bin)")
    return lines + generic_entry_points(module, inp.facts, inp.entry_label)


def _dependencies(inp: RenderInput) -> tuple[list[str], list[str]]:
    internal: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    importers: dict[str, list[str]] = {}  # dependency -> the files of this module importing it
    external: set[str] = set()
    module = inp.module
    own_tops = inp.project.top_packages
    for path in module.files:
        facts = inp.facts.get(path) or {}
        seen_here: set[str] = set()
        if not path.endswith(NODE_SUFFIXES) and not path.endswith((".py", ".pyi")):
            continue  # languages behind the extractor interface: generic_dependencies below
        if path.endswith((".py", ".pyi")):
            for target, names in facts.get("imports") or []:
                top = target.split(".")[0]
                pairs = set()
                for name in names or [None]:
                    full = f"{target}.{name}" if name and name != "*" else None
                    if full and inp.is_module(full):  # `from pkg import submodule`
                        pairs.add((inp.resolve(full), full))
                    else:
                        pairs.add((inp.resolve(target), target))
                for resolved, used in sorted(pairs, key=lambda p: (p[0] or "", p[1])):
                    if resolved:
                        if resolved != module.name:
                            internal.setdefault(resolved, set()).add(used)
                            if resolved not in seen_here:
                                counts[resolved] = counts.get(resolved, 0) + 1
                                importers.setdefault(resolved, []).append(path)
                                seen_here.add(resolved)
                    elif top not in STDLIB and top not in own_tops and top:
                        external.add(top)
        else:
            for spec in facts.get("imports") or []:
                resolved = inp.resolve_node(spec, path)
                if resolved:
                    if resolved != module.name:
                        internal.setdefault(resolved, set()).add(spec)
                        if resolved not in seen_here:
                            counts[resolved] = counts.get(resolved, 0) + 1
                            importers.setdefault(resolved, []).append(path)
                            seen_here.add(resolved)
                elif not spec.startswith((".", "/", "@/", "~/", "#")):
                    bare = spec[5:] if spec.startswith("node:") else spec
                    name = "/".join(bare.split("/")[:2]) if bare.startswith("@") else bare.split("/")[0]
                    if spec.startswith("node:") or name in NODE_BUILTINS:
                        continue
                    external.add("npm:" + name)
    more_internal, more_importers, generic_external = generic_dependencies(module, inp.facts, inp.resolve_import, inp.external)
    generic_specs = set()
    for name, specs in more_internal.items():
        internal.setdefault(name, set()).update(specs)
        generic_specs.update(specs)
        files = more_importers.get(name, [])
        counts[name] = counts.get(name, 0) + len(files)
        importers.setdefault(name, []).extend(files)
    internal_lines = []
    def listed(items: list[str]) -> str:
        more = f" and {len(items) - MAX_IMPORT_NAMES} more" if len(items) > MAX_IMPORT_NAMES else ""
        return ", ".join(f"`{t}`" for t in items[:MAX_IMPORT_NAMES]) + more

    for name in sorted(internal, key=lambda n: (-counts.get(n, 0), n)):
        # "N files: <those N files>", then what they import: each count matches the list it heads
        files = sorted(rel_to_module(module, p) for p in importers.get(name, []))
        n = len(files)
        internal_lines.append(f"- `{name}` ({n} file{'s' if n != 1 else ''}: {listed(files)}; imports "
                              f"{listed(sorted(internal[name]))})")
    for name in sorted(internal, key=lambda n: (-counts.get(n, 0), n)):
        # the Python modules this one uses from each dependency, for the boot (invisible when rendered)
        used = [t for t in sorted(internal[name]) if _DOTTED.match(t) and t not in generic_specs]
        if used and "-->" not in name:
            internal_lines.append(f"<!-- brain:uses {name} {','.join(used)} -->")
    external_lines = []
    for top in sorted(external):
        if top.startswith("npm:"):
            name = top[4:]
            req = inp.node_declared.get(name) or inp.project.declared.get(top)
            external_lines.append(f"- `{name}` — " + (f"declared (`{req}`)" if req else "not declared in package.json"))
        else:
            dist, req = inp.project.dist_for_import(top)
            external_lines.append(f"- `{top}` — " + (f"declared (`{req}`)" if req else f"not declared (distribution `{dist}`?)"))
    external_lines.extend(generic_external)
    return internal_lines, external_lines


def _migrations(inp: RenderInput) -> list[str]:
    module = inp.module
    folders: dict[str, list[str]] = {}
    for path in list(module.files) + list(module.other):
        folder, _, name = path.rpartition("/")
        parts = folder.split("/")
        if "migrations" in parts or (parts and parts[-1] == "versions" and any(
                p.startswith(folder.rpartition("/")[0] + "/") and p.endswith(("env.py", "alembic.ini", "script.py.mako"))
                for p in module.files + module.other)):
            idx = len(parts) - 1 - parts[::-1].index("migrations") if "migrations" in parts else len(parts) - 1
            root = "/".join(parts[: idx + 1])
            if name in ("__init__.py", ".gitkeep", "README", "README.md", "migration_lock.toml"):
                continue
            if name.endswith((".py", ".sql", ".js", ".ts", ".mjs", ".cjs")):
                rest = path[len(root) + 1:]
                folders.setdefault(root, []).append(rest)
    lines = []
    for root in sorted(folders):
        items = sorted(folders[root])
        lines.append(f"- `{rel_to_module(module, root)}/`: {len(items)} migration{'s' if len(items) != 1 else ''}, "
                     f"latest `{items[-1]}`")
    return lines


def _openapi_routes(inp: RenderInput) -> list[str]:
    lines = []
    for path in inp.module.files:
        facts = inp.facts.get(path) or {}
        for method, route in facts.get("openapi") or []:
            lines.append(f"- `{method} {route}` ({rel_to_module(inp.module, path)})")
    return lines


def _contract_section(inp: RenderInput) -> list[str]:
    if inp.contract is None:
        return []
    c = inp.contract
    lines = [f"Declared in `{inp.contract_path}`."]
    if c.error:
        lines.append(f"- **unreadable**: {sanitize(c.error)}")
        return lines
    if c.summary:
        lines.append(sanitize(c.summary))
    if c.exposes or c.has_exposes:
        lines.append("- exposes: " + (", ".join(f"`{n}`" for n in c.exposes) or "nothing"))
    if c.routes or c.has_routes:
        lines.append("- routes: " + (", ".join(f"`{r}`" for r in c.routes) or "none"))
    div = divergence(c, exposed_names(inp), {f"{m} {p}" for m, p, _h, _f in exposed_routes(inp)})
    if not any(div.values()):
        lines.append("- code matches the contract.")
    else:
        if div["missing_names"]:
            lines.append("- **declared but missing in code**: " + ", ".join(f"`{n}`" for n in div["missing_names"]))
        if div["missing_routes"]:
            lines.append("- **declared routes missing in code**: " + ", ".join(f"`{r}`" for r in div["missing_routes"]))
        if div["undeclared_names"]:
            lines.append("- **in code but undeclared**: " + ", ".join(f"`{n}`" for n in div["undeclared_names"]))
        if div["undeclared_routes"]:
            lines.append("- **routes in code but undeclared**: " + ", ".join(f"`{r}`" for r in div["undeclared_routes"]))
    return lines


def _collapse_paths(paths: list[str]) -> list[str]:
    """Backquoted paths, with look-alikes (same name, one folder differing) as one `a/*/b.py` (N) entry."""
    groups: dict[tuple, list[str]] = {}
    for path in paths:
        parts = path.split("/")
        groups.setdefault((parts[-1], len(parts)), []).append(path)
    patterns: dict[tuple, str | None] = {}
    for key, members in groups.items():
        pattern = None
        if len(members) >= 3 and key[1] > 1:
            split = [m.split("/") for m in members]
            pattern = "/".join(c[0] if len(set(c)) == 1 else "*" for c in zip(*split))
            if pattern.count("*") != 1:
                pattern = None
        patterns[key] = pattern
    out: list[str] = []
    for path in paths:
        parts = path.split("/")
        key = (parts[-1], len(parts))
        if patterns[key] is None:
            out.append(f"`{path}`")
        elif path == groups[key][0]:
            out.append(f"`{patterns[key]}` ({len(groups[key])})")
    return out


def _files(inp: RenderInput) -> list[str]:
    module = inp.module
    read = []
    unread = []
    for path in module.files:
        facts = inp.facts.get(path) or {}
        if facts.get("status") == "unread":
            unread.append(f"`{rel_to_module(module, path)}` ({facts.get('reason', 'not read')})")
        else:
            read.append(rel_to_module(module, path))
    lines = [f"{len(read)} read, {len(unread)} not read, {len(module.other)} other files, "
             f"in `{module.folder or '.'}/`."]
    names = _collapse_paths(read)
    shown = names[:MAX_FILES_LISTED]
    if shown:
        more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
        lines.append("- " + ", ".join(shown) + more)
    if unread:
        lines.append("- not read: " + ", ".join(unread))
    if module.other:
        groups: dict[str, int] = {}
        for path in module.other:
            rel = rel_to_module(module, path)
            key = rel.split("/", 1)[0] + "/" if "/" in rel else "(top)"
            groups[key] = groups.get(key, 0) + 1
        lines.append("- other: " + ", ".join(f"`{k}` {v}" for k, v in sorted(groups.items())))
    return lines


def render_generated(inp: RenderInput) -> str:
    """The whole generated block, markers included, ending with the end marker line."""
    module = inp.module
    out = [BEGIN, f"# Module `{module.name}`", f"<!-- brain:source sha256:{inp.source_hash} files:{len(module.files)} -->", ""]
    kind_text = {"python": "Python", "node": "TypeScript/Node", "other": "Source"}.get(module.kind) or _label(module.kind)
    if module.kind in ("c", "cpp"):  # a header-only folder: C++ when its headers were read as C++
        read_as = [(inp.facts.get(p) or {}).get("lang") for p in module.files]
        if read_as.count("cpp") > read_as.count("c"):
            kind_text = _label("cpp")
    desc = f"{kind_text} module in `{module.folder or '.'}/`"
    title = next((f["manifest"]["title"] for p in module.files
                  if (f := inp.facts.get(p) or {}).get("manifest") and f["manifest"].get("title")), "")
    if title:
        desc = f"{title} in `{module.folder or '.'}/`"
    elif inp.context.startswith(("package ", "module ")):
        desc = f"{kind_text} {inp.context}, in `{module.folder or '.'}/`"
    elif inp.context:
        desc += f", part of {inp.context}"
    if module.package:
        desc = f"Python package `{module.package}`"
        init = f"{module.folder}/__init__.py"
        doc = (inp.facts.get(init) or {}).get("doc")
        if doc:
            desc += f": {doc}"
    out += [sanitize(desc) + ("" if desc.endswith((".", "!", "?", "…")) else "."), ""]
    exposes, _level = exposes_section(inp)
    out += ["## Exposes", "", sanitize(exposes), ""]
    entry_points = _entry_points(inp)
    if entry_points:
        out += ["## Entry points", ""] + [sanitize(x) for x in entry_points] + [""]
    internal, external = _dependencies(inp)
    declared = manifest_lines(module, inp.facts)
    if inp.packages:
        shown = ", ".join(f"`{p}`" for p in inp.packages[:MAX_PACKAGES_LISTED])
        more = f" and {len(inp.packages) - MAX_PACKAGES_LISTED} more" if len(inp.packages) > MAX_PACKAGES_LISTED else ""
        count = len(inp.packages)
        declared.append(f"- {count} package{'s' if count != 1 else ''} with {'their' if count != 1 else 'its'} own card: {shown}{more}")
    out += ["## Dependencies", ""]
    if declared:
        out += ["Manifest:"] + declared + [""]
    if not internal and not external and not declared:
        out += ["None beyond the standard library.", ""]
    if internal:
        out += ["Internal modules (the boot follows these):"] + internal + [""]
    if external:
        out += ["External packages:"] + [sanitize(x) for x in external] + [""]
    migrations = _migrations(inp)
    if migrations:
        out += ["## Migrations", ""] + migrations + [""]
    routes = exposed_routes(inp)
    openapi = _openapi_routes(inp)
    if routes or openapi:
        lines = [f"- `{m} {p}` → `{h}` ({f})" if h else f"- `{m} {p}` ({f})" for m, p, h, f in routes[:MAX_ROUTES]]
        if len(routes) > MAX_ROUTES:
            lines.append(f"- and {len(routes) - MAX_ROUTES} more")
        if openapi:
            lines += ["OpenAPI:"] + openapi[:MAX_ROUTES]
        out += ["## Routes", ""] + [sanitize(x) for x in lines] + [""]
    contract = _contract_section(inp)
    if contract:
        out += ["## Contract", ""] + contract + [""]
    out += ["## Files", ""] + [sanitize(x) for x in _files(inp)]
    out += [END, ""]
    # file names that are not UTF-8 (surrogate escapes) are shown with replacement characters
    return "\n".join(out).encode("utf-8", "replace").decode("utf-8")
