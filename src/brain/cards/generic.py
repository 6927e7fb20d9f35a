"""Card parts for every language behind the extractor interface (Go, Rust, Java, C, C++…).

Language-independent: everything here reads the facts keys documented in
``languages/base.py`` (``exports``, ``unit``, ``group``, ``public``, ``hides``, ``main``,
``manifest``, ``imports``, ``test``) and never a language name. Python and
TypeScript/Node keep their own richer blocks in exposes.py.
"""

from __future__ import annotations

import re
from typing import Callable

from .markers import sanitize

__all__ = ["generic_blocks", "exposing_files", "generic_entry_points", "generic_dependencies", "manifest_lines", "MAX_DECLARED"]

MAX_DECLARED = 30
MAX_NAMES = 40
_SEPARATORS = ("::", ".", "/")
_INTERNAL_NAME = re.compile(r"(?i)(^|[_.-])(private|priv|internal|impl|inl|detail|details|util|utils|compat|test)[_.-]")


def _rel(folder: str, path: str) -> str:
    return path[len(folder) + 1:] if folder else path


def _hidden(unit: str, hidden: set[str]) -> bool:
    """True when ``unit`` is, or sits under, a unit declared private (``a::b`` under ``a``)."""
    for h in hidden:
        if unit == h or any(unit.startswith(h + sep) for sep in _SEPARATORS):
            return True
    return False


def exposing_files(module, facts: dict[str, dict]) -> list[str]:
    """Files whose exports count: not tests, not private by place; only public ones when some are marked so."""
    files = []
    for path in module.files:
        f = facts.get(path) or {}
        if f.get("status") != "ok" or f.get("test") or f.get("manifest") or f.get("public") is False:
            continue
        if "exports" not in f:
            continue
        files.append(path)
    declared_public = {path for p in module.files for path in (((facts.get(p) or {}).get("manifest") or {}).get("public_files") or ())}
    if declared_public & set(files):  # headers a manifest installs (automake include_HEADERS, meson install_headers)
        files = [p for p in files if p in declared_public or (facts.get(p) or {}).get("public") is True]
    elif any((facts.get(p) or {}).get("public") is True for p in files):
        files = [p for p in files if (facts.get(p) or {}).get("public") is True]
    hidden: set[str] = set()
    for path in module.files:
        hidden.update((facts.get(path) or {}).get("hides") or ())
    if hidden:
        files = [p for p in files if not _hidden((facts.get(p) or {}).get("unit") or "", hidden)]
    return files


def _member_lines(members: list[dict], level: int) -> list[str]:
    if not members or level >= 3:
        return []
    if level == 2:
        return ["  - members: " + ", ".join(f"`{n}`" for n in dict.fromkeys(m["name"] for m in members))]
    out = []
    for m in members:
        line = f"  - `{m['sig']}`"
        if level == 0 and m.get("doc"):
            line += f" — {m['doc']}"
        out.append(line)
    return out


def _merge_methods(entries: list[dict]) -> list[dict]:
    """Methods declared apart from their type (Go ``func (T) M``) join the type's members when it is in the block."""
    by_name = {e["name"]: e for e in entries if e.get("kind") != "method"}
    out = []
    for e in entries:
        owner, dot, member = e["name"].partition(".")
        if e.get("kind") == "method" and dot and owner in by_name:
            target = by_name[owner]
            target["members"] = list(target.get("members") or []) + [{"kind": "method", "name": member, "sig": e["sig"],
                                                                       "doc": e.get("doc", "")}]
            continue
        out.append(e)
    return out


def _block(heading: str, entries: list[dict], level: int) -> str:
    if level >= 4:  # names only, the first MAX_NAMES of a large file (a card names the file to read for the rest)
        names = list(dict.fromkeys(" ".join(e["name"].split()) for e in entries))
        more = f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
        return f"- {heading}: " + ", ".join(f"`{n}`" for n in names[:MAX_NAMES]) + more
    lines = [f"### {heading}", ""]
    for e in entries:
        line = f"- `{e['sig']}`"
        if level <= 2 and e.get("doc"):
            line += f" — {e['doc']}"
        lines.append(line)
        lines.extend(_member_lines(e.get("members") or [], level))
    return "\n".join(lines)


def generic_blocks(module, facts: dict[str, dict]) -> list[tuple[str, Callable[[int], str]]]:
    """(key file, render at a detail level) per exposing unit: a folder-grouped unit (Go package) or a file."""
    folder = module.folder
    groups: dict[tuple, list[str]] = {}
    for path in exposing_files(module, facts):
        f = facts[path]
        if not f.get("exports"):
            continue
        key = (path.rpartition("/")[0], f.get("unit") or "") if f.get("group") == "folder" else (path, "")
        groups.setdefault(key, []).append(path)
    blocks = []
    # files whose names say they are internal (jv_private.h, format-inl.h, detail.rs) come last, so a budget
    # cut drops them first
    for key in sorted(groups, key=lambda k: (bool(_INTERNAL_NAME.search(k[0].rpartition("/")[2])), k)):
        paths = groups[key]
        entries: list[dict] = []
        for path in paths:
            entries.extend(dict(e) for e in facts[path].get("exports") or [])
        entries = _merge_methods(entries)
        if len(paths) > 1 or facts[paths[0]].get("group") == "folder":
            rel = _rel(folder, key[0]) if key[0] != folder else "."
            heading = f"`{rel}/`" + (f" ({key[1]})" if key[1] else "")
        else:
            unit = facts[paths[0]].get("unit") or ""
            heading = f"`{_rel(folder, paths[0])}`" + (f" (`{unit}`)" if unit else "")
        doc = next((facts[p].get("doc") for p in paths if facts[p].get("doc")), "")
        blocks.append((paths[0], lambda level, h=heading, e=entries, d=doc:
                       _block(h + (f" — {d}" if d and level <= 2 else ""), e, level)))
    return blocks


def generic_entry_points(module, facts: dict[str, dict], entry_label: Callable[[str, str], str] | None = None) -> list[str]:
    """Entry points of a module; ``entry_label(label, path)`` restates a command from the file's own project root."""
    lines = []
    for path in module.files:
        f = facts.get(path) or {}
        label = f.get("main")
        if isinstance(label, str) and label and not f.get("test"):
            if entry_label is not None:
                label = entry_label(label, path)
            lines.append(f"- `{label}` (`{_rel(module.folder, path)}`)")
        manifest = f.get("manifest")
        if manifest:
            for name, target, how in manifest.get("entry_points") or []:
                lines.append(f"- `{name}`" + (f" → `{target}`" if target else "") + f" ({how})")
    return list(dict.fromkeys(lines))


def manifest_lines(module, facts: dict[str, dict]) -> list[str]:
    """What a module's own manifests declare: dependencies and workspace members."""
    lines = []
    for path in module.files:
        manifest = (facts.get(path) or {}).get("manifest")
        if not manifest:
            continue
        rel = _rel(module.folder, path)
        declared = list((manifest.get("declared") or {}).values())
        if declared:
            shown = ", ".join(f"`{sanitize(d)}`" for d in declared[:MAX_DECLARED])
            more = f" and {len(declared) - MAX_DECLARED} more" if len(declared) > MAX_DECLARED else ""
            lines.append(f"- declared in `{rel}`: {shown}{more}")
        members = manifest.get("members") or []
        if members:
            lines.append(f"- members in `{rel}`: " + ", ".join(f"`{sanitize(m)}`" for m in members[:MAX_DECLARED]))
        for item in manifest.get("internal") or []:
            lines.append(f"- {sanitize(item)}")
    return lines


def generic_dependencies(module, facts: dict[str, dict], resolve: Callable[[str, str], str | None],
                         external: Callable[[str, str], tuple[str, str | None, str] | None]):
    """(internal {module: specs}, importers {module: files}, external lines) from the imports of non-Python,
    non-Node files."""
    internal: dict[str, set[str]] = {}
    importers: dict[str, list[str]] = {}
    found: dict[str, tuple[str | None, str]] = {}
    for path in module.files:
        f = facts.get(path) or {}
        if f.get("status") != "ok" or "imports" not in f or f.get("package") is not None or f.get("test"):
            continue  # a test's imports (testify, fixtures) are not what the module depends on
        seen_here: set[str] = set()
        for spec in f.get("imports") or []:
            target = resolve(spec, path)
            if target:
                if target != module.name:
                    internal.setdefault(target, set()).add(spec)
                    if target not in seen_here:
                        importers.setdefault(target, []).append(path)
                        seen_here.add(target)
                continue
            ext = external(spec, path)
            if ext is not None:
                name, requirement, manifest = ext
                if name not in found or (requirement and not found[name][0]):
                    found[name] = (requirement, manifest)
    lines = []
    for name in sorted(found):
        requirement, manifest = found[name]
        if requirement:
            lines.append(f"- `{name}` — declared (`{requirement}`)")
        else:
            lines.append(f"- `{name}` — " + (f"not declared in {manifest}" if manifest else "external"))
    return internal, importers, lines
