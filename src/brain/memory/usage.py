"""Which memory files get used, and which have gone stale: `brain notes --stale`.

Memory that nobody reads costs every reader: it crowds search results and ages into wrong advice.
brain already records what each boot injected (runtime/boots.jsonl, the sections' sources); reads
and search results a person or an agent asked for are recorded here, one JSON line per call in
runtime/uses.jsonl (private to the user, rotated like the boot records). A file is stale when no
boot, read or search used it for N days and nobody wrote it in that time, or when it names code
(a backticked function or class) that the code index no longer has. Nothing here deletes: the list
is for a person to prune.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

__all__ = ["record_use", "last_uses", "stale_notes", "vanished_names", "USE_KINDS"]

USE_KINDS = ("read", "search")
MAX_USES_BYTES = 16 * 1024 * 1024
MAX_LINE = 64 * 1024
MAX_PATHS = 50
# a backticked name that reads as code: a call (`parse_args()`, `Brain.edit()`) or a CamelCase class
# (`SearchIndex`, `Brain.edit`); a bare snake_case word may be a setting or a flag, so it is not taken
_CODE_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]{0,80}(?:\.[A-Za-z_][A-Za-z0-9_]{0,80}){0,3})(\(\))?`")
_CLASS_LIKE = re.compile(r"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$")


def record_use(runtime: Path, kind: str, paths: list[str]) -> None:
    """One line saying memory ``paths`` were used by a ``kind`` call; never raises (usage is a hint)."""
    if kind not in USE_KINDS or not paths:
        return
    from ..appendonly import append_line
    from ..memory.private import ensure_private_dir

    try:
        ensure_private_dir(runtime)
        path = runtime / "uses.jsonl"
        try:
            if path.stat().st_size > MAX_USES_BYTES:
                os.replace(path, path.with_suffix(".jsonl.1"))
        except FileNotFoundError:
            pass
        line = json.dumps({"at": time.time(), "kind": kind, "paths": [str(p)[:300] for p in paths[:MAX_PATHS]]},
                          sort_keys=True) + "\n"
        append_line(path, line.encode("utf-8"))
    except Exception:  # noqa: BLE001 - a read must not fail because its usage line could not be written
        return


def _lines(path: Path):
    from ..inputs import bounded_lines

    try:
        handle = open(path, "rb")
    except OSError:
        return
    with handle:
        for raw, _, whole in bounded_lines(handle, MAX_LINE):
            if raw is None or not whole:
                continue
            try:
                yield json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                continue


def last_uses(runtime: Path) -> dict[str, float]:
    """Memory path -> the last time a boot injected it, or a read or a search returned it."""
    last: dict[str, float] = {}

    def seen(path, at) -> None:
        if isinstance(path, str) and isinstance(at, (int, float)) and at > last.get(path, 0.0):
            last[path] = float(at)

    for name in ("boots.jsonl.1", "boots.jsonl"):
        for record in _lines(runtime / name):
            if isinstance(record, dict):
                for section in record.get("sections") or []:
                    if isinstance(section, dict):
                        seen(section.get("source"), record.get("at"))
    for name in ("uses.jsonl.1", "uses.jsonl"):
        for record in _lines(runtime / name):
            if isinstance(record, dict) and isinstance(record.get("paths"), list):
                for path in record["paths"]:
                    seen(path, record.get("at"))
    return last


def vanished_names(text: str, defined) -> list[str]:
    """The code names ``text`` writes in backticks that ``defined(names) -> set`` does not know."""
    names = []
    for match in _CODE_NAME.finditer(text):
        name = match.group(1)
        if match.group(2) or _CLASS_LIKE.match(name):
            if name not in names:
                names.append(name)
    if not names:
        return []
    known = defined([n.rsplit(".", 1)[-1] for n in names])
    return [n for n in names if n.rsplit(".", 1)[-1] not in known]


def _defined_in_code(brain):
    """A lookup of names the code index defines, or None when there is no code index to ask."""
    index = brain.index
    if not index.exists:
        return None
    try:
        if index.db.execute("SELECT 1 FROM code_files LIMIT 1").fetchone() is None:
            return None
    except Exception:  # noqa: BLE001 - no code tables: no code facts to check
        return None

    def defined(names: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(names), 200):
            chunk = names[start:start + 200]
            marks = ",".join("?" * len(chunk))
            rows = index.db.execute(f"SELECT DISTINCT name FROM code_symbols WHERE name IN ({marks})", chunk)
            found.update(r[0] for r in rows)
        return found

    return defined


def stale_notes(brain, days: float, *, now: float | None = None) -> list[dict]:
    """Memory files unused (no boot, read or search) and unwritten for ``days``, and files naming code
    the index no longer defines; each with why. now.md and focus.md are read by every boot: never stale."""
    now = time.time() if now is None else now
    cutoff = now - days * 86400
    last = last_uses(brain.runtime)
    defined = _defined_in_code(brain)
    out = []
    for note in brain.notes():
        if note.path in ("now.md", "focus.md"):
            continue
        reasons = []
        try:
            mtime = brain.memory.resolve(note.path).stat().st_mtime
        except OSError:
            continue
        used = last.get(note.path)
        if max(used or 0.0, mtime) < cutoff:
            reasons.append(f"not used by a boot, read or search for {days:g} days" if used is None or used < mtime
                           else f"last used {int((now - used) // 86400)} days ago")
        gone: list[str] = []
        if defined is not None:
            doc = brain.memory.read_or_none(note.path)
            if doc is not None:
                gone = vanished_names(doc.text[:200_000], defined)
            if gone:
                reasons.append("names code the repository no longer defines: " + ", ".join(f"`{n}`" for n in gone[:5]))
        if reasons:
            out.append({"path": note.path, "title": note.title, "last_used": used, "modified": mtime,
                        "missing_names": gone, "why": reasons})
    return out
