"""The derived graph: modules, files, cards, decisions and contracts, and how they relate.

Nodes are ``file:<path>``, ``module:<folder>``, ``card:<name>``, ``decision:<id>``,
``contract:<name>`` and ``memory:<path>`` (a memory file in a ``[[wiki link]]``). Edges: a file is ``in`` its module, ``imports`` another
file; a module ``depends`` on another (from its files' imports); a card
``describes`` its module; a contract ``declares`` for its module; a decision
``decides-about`` the files, modules and cards it names and ``supersedes`` an
earlier one; a memory file ``links`` to each memory file its ``[[name]]``,
``[[folder/name]]`` or ``[[name|label]]`` links resolve to (a path with or without
`.md`, else the file of that name, notes/ first). Everything is rebuilt from the index's code tables and the memory
documents, so it is as derived as the rest of index.db.

Kept up to date by what changed (``update_graph``): triggers note, in the same transaction as the
write, every memory document added, changed or removed (``graph_pending``) and any change of the code
tables (``graph_code`` in meta). Nothing noted: no graph work. Only plain memory files noted: only
their own links are re-resolved, and the links of the files that name them by name (``link_targets``
keeps each link's name), since a file appearing or going changes what those resolve to. A change of
code, a card, a contract or a decision rebuilds the whole graph (their edges reach every file).
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..lazyre import lazy

__all__ = ["GRAPH_SCHEMA", "rebuild_graph", "update_graph", "related", "resolve_node", "wiki_links", "resolve_link",
           "link_key", "retarget_links"]

GRAPH_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes(id TEXT PRIMARY KEY, kind TEXT, label TEXT, path TEXT);
CREATE TABLE IF NOT EXISTS edges(src TEXT, dst TEXT, kind TEXT, PRIMARY KEY(src, dst, kind));
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
-- a memory path changed since the graph was built; existed: whether it was there then (its first change
-- was a removal), so a file whose text alone changed does not re-resolve the links naming it. Nothing is
-- noted before a first graph (a fresh index's bulk build): that graph is built whole anyway
CREATE TABLE IF NOT EXISTS graph_pending(path TEXT PRIMARY KEY, kind TEXT, existed INTEGER);
CREATE TABLE IF NOT EXISTS link_targets(key TEXT, src TEXT, PRIMARY KEY(key, src));
CREATE INDEX IF NOT EXISTS link_targets_src ON link_targets(src);
CREATE TRIGGER IF NOT EXISTS graph_doc_added AFTER INSERT ON docs
  WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'graph_built') BEGIN
  INSERT OR IGNORE INTO graph_pending(path, kind, existed) VALUES (NEW.path, NEW.kind, 0); END;
CREATE TRIGGER IF NOT EXISTS graph_doc_removed AFTER DELETE ON docs
  WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'graph_built') BEGIN
  INSERT OR IGNORE INTO graph_pending(path, kind, existed) VALUES (OLD.path, OLD.kind, 1); END;
CREATE TRIGGER IF NOT EXISTS graph_doc_changed AFTER UPDATE ON docs
  WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'graph_built') BEGIN
  INSERT OR IGNORE INTO graph_pending(path, kind, existed) VALUES (OLD.path, OLD.kind, 1);
  INSERT OR IGNORE INTO graph_pending(path, kind, existed) VALUES (NEW.path, NEW.kind, 0); END;
""" + "".join(f"""CREATE TRIGGER IF NOT EXISTS graph_{table}_{event.lower()} AFTER {event} ON {table}
  WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'graph_built')
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'graph_code') BEGIN
  INSERT INTO meta(key, value) VALUES ('graph_code', 'stale'); END;
""" for table in ("code_files", "code_imports") for event in ("INSERT", "DELETE", "UPDATE"))

# the document kinds whose edges reach code files and modules: any change of one rebuilds the graph
WHOLE_GRAPH_KINDS = frozenset({"card", "contract", "decision"})

_DECISION_ID = lazy(r"^(\d{1,6})")
_SUPERSEDES = lazy(r"supersedes?\s*(?:decision\s*|adr[- ]?|#)?(\d{1,6})", re.IGNORECASE)
_SUPERSEDED_BY = lazy(r"superseded\s+by\s*(?:decision\s*|adr[- ]?|#)?(\d{1,6})", re.IGNORECASE)
# a path starts only where a run of name characters starts and every run is taken possessively, so no
# run is scanned twice (the former `[\w.\-]+(?:/...)+` rescanned a long run from each of its positions:
# quadratic, 10 s for 32 KB of one word in a decision an agent wrote); same matches as before
_PATHISH = lazy(r"(?<![\w.\-])[\w.\-]++(?:/[\w.\-]++)+|`([\w.\-/]++)`")
# [[target]], [[target|label]], [[target#heading]]: negated classes and bounds keep it linear
_WIKI = lazy(r"\[\[([^\[\]\n|#]{1,200})(?:[|#][^\[\]\n]{0,200})?\]\]")


def wiki_links(text: str) -> list[str]:
    """The targets of the ``[[wiki links]]`` in ``text``, in order, without duplicates."""
    seen: list[str] = []
    for match in _WIKI.finditer(text):
        target = match.group(1).strip()
        if target and target not in seen:
            seen.append(target)
    return seen


def link_key(target: str) -> str:
    """The name a link target or memory path goes by: its last part without `.md`, lower-case.

    Every path a link can resolve to has the link's key (the path itself, the path with `.md`,
    or a file of that name), so the files whose links may change when ``path`` appears or goes
    are the ones with a link of ``link_key(path)``."""
    return target.strip().strip("/").removeprefix(".brain/").rsplit("/", 1)[-1].removesuffix(".md").lower()


def _by_stem(paths: set[str]) -> dict[str, list[str]]:
    by_stem: dict[str, list[str]] = defaultdict(list)
    for path in sorted(paths, key=lambda p: (not p.startswith("notes/"), p)):
        by_stem[link_key(path)].append(path)
    return by_stem


def resolve_link(target: str, paths: set[str], by_stem: dict[str, list[str]]) -> str | None:
    """The memory path a link target names: a path (with or without .md), else a file of that name."""
    t = target.strip().strip("/").removeprefix(".brain/")
    for candidate in (t, f"{t}.md"):
        if candidate in paths:
            return candidate
    stems = by_stem.get(link_key(t), [])
    return stems[0] if stems else None


def retarget_links(text: str, old: str, new: str, paths: set[str]) -> tuple[str, int]:
    """``text`` with each ``[[link]]`` that resolves to memory path ``old`` (among ``paths``, the memory
    files before a rename) pointed at ``new`` instead, its label or heading kept; and how many changed.

    A link written as a path stays a path (``[[notes/old]]`` -> ``[[notes/new]]``); one written as a
    name gets the new name when no other file goes by that name after the rename, else the path."""
    by_stem = _by_stem(paths)
    after = (paths - {old}) | {new}
    after_stems = _by_stem(after)
    changed = 0

    def swap(match: re.Match) -> str:
        nonlocal changed
        target = match.group(1)
        if resolve_link(target, paths, by_stem) != old:
            return match.group(0)
        written = target.strip()
        if "/" in written:
            replacement = new if written.endswith(".md") else new.removesuffix(".md")
        else:
            name = new.rsplit("/", 1)[-1].removesuffix(".md")
            alone = after_stems.get(link_key(name), []) == [new]  # a name two files share would be a guess
            replacement = name if alone else new.removesuffix(".md")
        changed += 1
        start, end = match.span(1)
        whole = match.group(0)
        base = match.start(0)
        return whole[:start - base] + replacement + whole[end - base:]

    return _WIKI.sub(swap, text), changed


def _module_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def rebuild_graph(index) -> dict[str, int]:
    """Recompute nodes and edges from the code tables and memory documents of ``index``.

    Read and written in one write transaction, so two threads or processes refreshing at once
    cannot leave the graph of the older tables last."""
    from .code import transaction

    with transaction(index.db) as db:
        return _rebuild_graph(db)


def _meta(db, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _graph_current(db) -> bool:
    return (_meta(db, "graph_built") is not None and _meta(db, "graph_code") is None
            and db.execute("SELECT 1 FROM graph_pending LIMIT 1").fetchone() is None)


def _counts(db) -> dict[str, int]:
    return {"nodes": db.execute("SELECT COUNT(*) FROM nodes").fetchone()[0],
            "edges": db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]}


def update_graph(index, *, counts: bool = True) -> dict:
    """Bring the graph up to date with what changed since it was built (see the module's docstring).

    ``work`` in the answer says what that took: ``none``, ``links`` (the links of the changed
    memory files and of the files naming them) or ``full``. What changed is read again inside
    the write transaction, so a concurrent refresh never has the older graph written last.
    ``counts=False`` (a caller that drops the answer: every task boot) leaves out ``nodes`` and ``edges``
    when nothing was to do: counting both tables walks each (0.3 ms of a Django task boot)."""
    from .code import transaction

    db = index.db
    if _graph_current(db):  # the common no-op: no write lock, no graph work
        return {**_counts(db), "work": "none"} if counts else {"work": "none"}
    with transaction(db):
        if _graph_current(db):
            return {**_counts(db), "work": "none"}
        pending = {path: (kind, bool(existed)) for path, kind, existed in
                   db.execute("SELECT path, kind, existed FROM graph_pending")}
        if (_meta(db, "graph_built") is None or _meta(db, "graph_code") is not None
                or any(kind in WHOLE_GRAPH_KINDS for kind, _ in pending.values())):
            return {**_rebuild_graph(db), "work": "full"}
        present = {path for path in pending
                   if db.execute("SELECT 1 FROM docs WHERE path = ?", (path,)).fetchone() is not None}
        _relink(db, set(pending), {path for path, (_, existed) in pending.items() if existed != (path in present)})
        db.execute("DELETE FROM graph_pending")
        return {**_counts(db), "work": "links"}


def _relink(db, changed: set[str], came_or_went: set[str]) -> None:
    """Re-resolve the links of the ``changed`` memory files, and of every file with a link of the name of
    one that ``came_or_went`` (what those links resolve to may be another file now). Only the edges that
    differ are written."""
    sources = set(changed)
    for key in {link_key(path) for path in came_or_went}:
        sources.update(src for (src,) in db.execute("SELECT src FROM link_targets WHERE key = ?", (key,)))
    resolver: tuple[set[str], dict] | None = None
    touched: set[str] = set()
    for src in sorted(sources):
        nid = f"memory:{src}"
        old = {dst for (dst,) in db.execute("SELECT dst FROM edges WHERE src = ? AND kind = 'links'", (nid,))}
        row = db.execute("SELECT docs_fts.body FROM docs JOIN docs_fts ON docs_fts.rowid = docs.id "
                         "WHERE docs.path = ?", (src,)).fetchone()
        targets = wiki_links(row[0]) if row and "[[" in row[0] else []
        if targets and resolver is None:  # every memory path, read only when some file has links to resolve
            paths = {r[0] for r in db.execute("SELECT path FROM docs")}
            resolver = (paths, _by_stem(paths))
        new = set()
        for target in targets:
            dst = resolve_link(target, *resolver)
            if dst and dst != src:
                new.add(f"memory:{dst}")
        db.execute("DELETE FROM link_targets WHERE src = ?", (src,))
        db.executemany("INSERT OR IGNORE INTO link_targets(key, src) VALUES (?, ?)",
                       [(key, src) for key in sorted({link_key(t) for t in targets})])
        db.executemany("DELETE FROM edges WHERE src = ? AND dst = ? AND kind = 'links'",
                       [(nid, d) for d in sorted(old - new)])
        db.executemany("INSERT OR IGNORE INTO edges(src, dst, kind) VALUES (?, ?, 'links')",
                       [(nid, d) for d in sorted(new - old)])
        if old != new:
            touched.update({nid} | (old ^ new))
    for node in sorted(touched):  # a memory node exists while a link starts or ends at it
        linked = db.execute("SELECT 1 FROM edges WHERE kind = 'links' AND (src = ? OR dst = ?) LIMIT 1",
                            (node, node)).fetchone()
        if linked:
            rel = node[len("memory:"):]
            db.execute("INSERT OR IGNORE INTO nodes(id, kind, label, path) VALUES (?, 'memory', ?, ?)",
                       (node, rel, rel))
        else:
            db.execute("DELETE FROM nodes WHERE id = ?", (node,))


def _rebuild_graph(db) -> dict[str, int]:
    nodes: dict[str, tuple[str, str, str]] = {}
    edges: set[tuple[str, str, str]] = set()
    files = {p: m for p, m in db.execute("SELECT path, module FROM code_files WHERE is_test = 0")}
    by_module = {m: p for p, m in sorted(files.items())}
    folder_of = {path: _module_of(path) for path in files}  # each file's module folder, worked out once
    for path, mod in folder_of.items():
        nodes[f"file:{path}"] = ("file", path, path)
        nodes[f"module:{mod}"] = ("module", mod, mod)
        edges.add((f"file:{path}", f"module:{mod}", "in"))
    for path, target in db.execute("SELECT path, target FROM code_imports"):
        if path not in files:
            continue
        dst = by_module.get(target) or by_module.get(target.rsplit(".", 1)[0])
        if not dst and target.startswith("."):
            dst = None
        if dst and dst != path:
            edges.add((f"file:{path}", f"file:{dst}", "imports"))
            a, b = folder_of[path], folder_of[dst]
            if a != b:
                edges.add((f"module:{a}", f"module:{b}", "depends"))
    modules = set(folder_of.values())
    named = _ModuleNames(modules)
    decisions: dict[str, str] = {}
    for rel, text in db.execute("SELECT docs.path, docs_fts.body FROM docs JOIN docs_fts ON docs_fts.rowid = docs.id "
                                "WHERE docs.kind IN ('card', 'contract', 'decision')"):
        name = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if rel.startswith("modules/"):
            name = rel[len("modules/"):].rsplit(".", 1)[0]  # cards of nested modules live in subfolders
            nid = f"card:{name}"
            nodes[nid] = ("card", name, rel)
            for mod in _named_modules(text, name, modules, named):
                edges.add((nid, f"module:{mod}", "describes"))
        elif rel.startswith("contracts/"):
            nid = f"contract:{name}"
            nodes[nid] = ("contract", name, rel)
            edges.add((nid, f"card:{name}", "declares"))
        elif rel != "decisions.md":
            m = _DECISION_ID.match(name)
            did = str(int(m.group(1))) if m else name
            decisions[did] = rel
            nid = f"decision:{did}"
            nodes[nid] = ("decision", name, rel)
            for target in _SUPERSEDES.findall(text):
                edges.add((nid, f"decision:{int(target)}", "supersedes"))
            for target in _SUPERSEDED_BY.findall(text):
                edges.add((f"decision:{int(target)}", nid, "supersedes"))
            for found in _PATHISH.finditer(text):
                ref = (found.group(1) or found.group(0)).strip("`./")
                if ref in files:
                    edges.add((nid, f"file:{ref}", "decides-about"))
                elif ref in modules:
                    edges.add((nid, f"module:{ref}", "decides-about"))
            for card in re.findall(r"modules/([\w.\-]+)\.md", text):
                edges.add((nid, f"card:{card}", "decides-about"))
    keys = _link_memory(db, nodes, edges)
    # edges may point at nodes that are not (yet) known, e.g. a decision number not on disk
    db.execute("DELETE FROM nodes")
    db.execute("DELETE FROM edges")
    db.execute("DELETE FROM link_targets")
    db.executemany("INSERT INTO nodes(id, kind, label, path) VALUES (?,?,?,?)",
                   [(k, *v) for k, v in sorted(nodes.items())])
    db.executemany("INSERT OR IGNORE INTO edges(src, dst, kind) VALUES (?,?,?)", sorted(edges))
    db.executemany("INSERT OR IGNORE INTO link_targets(key, src) VALUES (?,?)", sorted(keys))
    db.execute("DELETE FROM graph_pending")  # the graph is now that of every table as they are
    db.execute("DELETE FROM meta WHERE key = 'graph_code'")
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('graph_built', '1')")
    return {"nodes": len(nodes), "edges": len(edges)}


def _link_memory(db, nodes: dict, edges: set) -> set[tuple[str, str]]:
    """``memory:`` nodes and ``links`` edges from the [[wiki links]] of every memory document;
    returns the (name, file) of every link, resolved or not (``link_targets``)."""
    paths = {row[0] for row in db.execute("SELECT path FROM docs")}
    by_stem = _by_stem(paths)
    keys: set[tuple[str, str]] = set()
    rows = db.execute("SELECT docs.path, docs_fts.body FROM docs JOIN docs_fts ON docs_fts.rowid = docs.id "
                      "WHERE instr(docs_fts.body, '[[') > 0")
    for rel, text in rows:
        for target in wiki_links(text):
            keys.add((link_key(target), rel))
            dst = resolve_link(target, paths, by_stem)
            if dst and dst != rel:
                nodes[f"memory:{rel}"] = ("memory", rel, rel)
                nodes[f"memory:{dst}"] = ("memory", dst, dst)
                edges.add((f"memory:{rel}", f"memory:{dst}", "links"))
    return keys


class _ModuleNames:
    """The module folders a card's name can mean, looked up instead of tested one folder at a time per card:
    the folder itself, a folder ending in ``/name``, or one whose dotted spelling is the name."""

    def __init__(self, modules: set[str]) -> None:
        self.by_name: dict[str, set[str]] = defaultdict(set)
        for m in modules:
            self.by_name[m].add(m)
            self.by_name[m.replace("/", ".")].add(m)
            cut = m.find("/")
            while cut != -1:
                self.by_name[m[cut + 1:]].add(m)
                cut = m.find("/", cut + 1)

    def named(self, name: str) -> set[str]:
        return set(self.by_name.get(name, ()))


def _named_modules(text: str, name: str, modules: set[str], names: _ModuleNames | None = None) -> set[str]:
    """Modules a card is about: its name as a folder, or folders it lists."""
    if names is not None:
        found = names.named(name)
    else:
        found = {m for m in modules if m == name or m.endswith("/" + name) or m.replace("/", ".") == name}
    for match in _PATHISH.finditer(text[:20000]):
        ref = (match.group(1) or match.group(0)).strip("`./")
        if ref in modules:
            found.add(ref)
        elif _module_of(ref) in modules and "." in ref.rsplit("/", 1)[-1]:
            found.add(_module_of(ref))
    return found if len(found) <= 20 else {m for m in found if m == name or m.endswith("/" + name)}


def resolve_node(db, target: str) -> list[str]:
    """Node ids a user's ``X`` names: an id, a file path, a module folder or dotted path, a card, a decision."""
    target = target.strip().strip("/")
    candidates = [target] if ":" in target else []
    candidates += [f"file:{target}", f"module:{target}", f"module:{target.replace('.', '/')}", f"card:{target}",
                   f"contract:{target}", f"memory:{target.removeprefix('.brain/')}", f"memory:{target}.md",
                   f"memory:notes/{target}.md"]
    if target.isdigit():
        candidates.append(f"decision:{int(target)}")
    m = _DECISION_ID.match(target.rsplit("/", 1)[-1])
    if m:
        candidates.append(f"decision:{int(m.group(1))}")
    found = []
    for cid in candidates:
        if db.execute("SELECT 1 FROM nodes WHERE id = ?", (cid,)).fetchone() and cid not in found:
            found.append(cid)
    if not found:
        row = db.execute("SELECT path FROM code_files WHERE module = ? AND is_test = 0", (target,)).fetchone()
        if row:
            found.append(f"file:{row[0]}")
    return found


def related(db, target: str, limit: int = 30) -> dict:
    """The neighbours of ``target`` in both directions, grouped by edge kind, bounded."""
    ids = resolve_node(db, target)
    out: dict[str, list[dict]] = defaultdict(list)
    count = 0
    for nid in ids:
        rows = db.execute(
            "SELECT 'out', kind, dst FROM edges WHERE src = ? UNION ALL SELECT 'in', kind, src FROM edges WHERE dst = ? "
            "ORDER BY 1, 2, 3", (nid, nid)).fetchall()
        for direction, kind, other in rows:
            if kind == "in" and direction == "in" and nid.startswith("module:") and count >= limit // 2:
                continue
            if count >= limit:
                break
            label = kind if direction == "out" else f"{kind} (from)"
            out[label].append({"node": other, "via": nid})
            count += 1
    total = sum(db.execute("SELECT COUNT(*) FROM edges WHERE src = ? OR dst = ?", (n, n)).fetchone()[0] for n in ids)
    return {"target": target, "nodes": ids, "related": dict(out), "shown": count, "total": total}
