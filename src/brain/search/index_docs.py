"""The memory documents of the search index: every markdown store under ``.brain/`` and the decision records.

Indexed by content hash (a file whose size and modification time did not move is not read
again; the folder fingerprint skips an unchanged tree without a walk), each document with
its kind, title, raw text and its identifiers split (``tokenize.index_extra``). A mixin of
``SearchIndex``: it reads and writes through the index's connection.
"""

from __future__ import annotations

import contextlib

import hashlib
import os
import stat
from pathlib import Path
from typing import Iterable

from ..memory.files import read_memory_file, read_regular_file
from ..trees import walk as walk_tree
from ..memory.paths import has_link_between, is_plain_memory_name
from .tokenize import index_extra

__all__ = ["MemoryDocs", "kind_of"]


def kind_of(path: str) -> str:
    """The memory kind of a path relative to .brain/ (decision records may live elsewhere)."""
    top = path.split("/", 1)[0]
    return {
        "now.md": "now", "focus.md": "focus", "notes": "note", "workflows": "workflow", "modules": "card",
        "decisions": "decision", "decisions.md": "decision", "handoffs": "handoff", "contracts": "contract",
        "agents": "profile", "@decisions": "decision",
    }.get(top, "memory")


def _title(path: str, text: str) -> str:
    """The first markdown heading within the first 20 lines, else the path."""
    if text.startswith("#"):
        line = text.split("\n", 1)[0]
        return line.lstrip("#").strip()[:120] or path
    for line in text.split("\n", 20)[:20]:
        if line.startswith("#"):
            return line.lstrip("#").strip()[:120]
    return path


class MemoryDocs:
    """The memory-document half of ``SearchIndex`` (see the module doc)."""

    # -- memory documents ----------------------------------------------------------
    def _memory_roots(self) -> list[tuple[str, Path]]:
        roots = [("", self.brain_dir)]
        if self.decisions_dir:
            folder = Path(os.path.normpath(self.repo / self.decisions_dir))  # lexical: links are not followed
            if (folder.is_dir() and folder != self.brain_dir / "decisions"
                    and not has_link_between(self.repo, folder)):
                roots.append(("@decisions/", folder))
        return roots

    def _walk_memory(self) -> tuple[dict[str, tuple[str, int, int]], list[str]]:
        """Every markdown store (relative path -> its path, size and mtime) and the folders holding them
        (for the cheap change check). One lstat a file, which also tells a link: a no-op `brain index`
        at 50,000 notes is this walk."""
        found: dict[str, tuple[str, int, int]] = {}
        folders: list[str] = []
        for prefix, root in self._memory_roots():
            if os.path.islink(root):
                continue  # a linked decisions folder is never read (a cloned repository may carry one)
            for folder, dirs, names in walk_tree(root):  # never descends into linked folders (nor too deep)
                rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
                rel_dir = "" if rel_dir == "." else rel_dir + "/"
                dirs[:] = [] if prefix else sorted(  # the decisions folder is read flat
                    d for d in dirs if is_plain_memory_name(d) and not os.path.islink(os.path.join(folder, d))
                    and not (rel_dir == "" and d.casefold() == "runtime"))
                folders.append(folder)
                contracts = prefix == "" and rel_dir == "contracts/"
                for name in names:
                    if not (name.endswith(".md") or (contracts and name.endswith(".yml"))):
                        continue  # brain.local.yml and every other setting file included: never indexed
                    if not is_plain_memory_name(name):
                        continue
                    path = os.path.join(folder, name)
                    try:
                        st = os.lstat(path)
                    except OSError:
                        continue  # removed while listed
                    if not stat.S_ISLNK(st.st_mode):  # a link is never followed nor read
                        found[prefix + rel_dir + name] = (path, st.st_size, st.st_mtime_ns)
        return found, folders

    def memory_files(self) -> dict[str, Path]:
        """Every markdown store: .brain/**/*.md (runtime excluded), contracts, and the decision records folder."""
        return {rel: Path(path) for rel, (path, _, _) in sorted(self._walk_memory()[0].items())}

    def _fingerprint(self, folders: list[str]) -> str:
        """Folder mtimes (a file added, removed or atomically replaced changes them) and top-level file stamps."""
        parts = []
        for folder in folders:
            try:
                parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
            except OSError:
                parts.append(f"{folder}:-")
        for name in ("now.md", "focus.md", "decisions.md"):
            try:
                st = os.stat(self.brain_dir / name)
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        return "\n".join(parts)

    def _memory_unchanged(self) -> bool:
        row = self.db.execute("SELECT value FROM meta WHERE key='memory_folders'").fetchone()
        if not row:
            return False
        folders = row[0].split("\n") if row[0] else []
        known = self.db.execute("SELECT value FROM meta WHERE key='memory_fingerprint'").fetchone()
        return bool(known) and known[0] == self._fingerprint(folders)

    def _fingerprint_is(self, folders: list[str]) -> bool:
        """Whether the cheap change check already holds these folders and their current stamps."""
        rows = dict(self.db.execute(
            "SELECT key, value FROM meta WHERE key IN ('memory_folders', 'memory_fingerprint')"))
        return (rows.get("memory_folders") == "\n".join(folders)
                and rows.get("memory_fingerprint") == self._fingerprint(folders))

    def _remember_fingerprint(self, folders: list[str]) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_folders', ?)", ("\n".join(folders),))
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_fingerprint', ?)",
                        (self._fingerprint(folders),))

    def _put_doc(self, rel: str, text: str) -> bool:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        row = self.db.execute("SELECT hash FROM docs WHERE path = ?", (rel,)).fetchone()
        if row and row[0] == digest:
            return False
        self._drop_doc(rel)
        kind, title = kind_of(rel), _title(rel, text)
        cur = self.db.execute("INSERT INTO docs(path, kind, title, hash) VALUES (?,?,?,?)", (rel, kind, title, digest))
        head = f"{title} {rel}"
        self.db.execute("INSERT INTO docs_fts(rowid, title, body, extra) VALUES (?,?,?,?)",
                        (cur.lastrowid, head, text, index_extra(head + "\n" + text)))
        return True

    def _drop_doc(self, rel: str) -> None:
        row = self.db.execute("SELECT id FROM docs WHERE path = ?", (rel,)).fetchone()
        if row:
            self.db.execute("DELETE FROM docs_fts WHERE rowid = ?", (row[0],))
            self.db.execute("DELETE FROM docs WHERE id = ?", (row[0],))

    def update_memory(self, rel: str) -> None:
        """Re-index one memory path after a write (the Brain.on_write listener)."""
        path = self.brain_dir / rel
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            data = read_memory_file(self.brain_dir, rel)
            if data is not None:
                text = data.decode("utf-8", errors="replace")
                self._put_doc(rel, text)
                st = path.stat()
                db.execute("INSERT OR REPLACE INTO doc_stamps(path, size, mtime_ns) VALUES (?,?,?)",
                           (rel, st.st_size, st.st_mtime_ns))
            else:
                self._drop_doc(rel)
                db.execute("DELETE FROM doc_stamps WHERE path = ?", (rel,))
            row = db.execute("SELECT value FROM meta WHERE key='memory_folders'").fetchone()
            if row:  # this write moved its folder's mtime: keep the cheap check valid
                folders = row[0].split("\n") if row[0] else []
                if str(path.parent) in folders or not path.exists():
                    self._remember_fingerprint(folders)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if getattr(self._local, "graph_deferred", False):
            return  # noted in graph_pending: the caller brings the graph up to date once, at its end
        from .graph import update_graph  # its own links and the links naming it (a card: the whole graph)

        update_graph(self)

    @contextlib.contextmanager
    def graph_deferred(self):
        """Memory writes in this block (this thread's) leave the graph to one ``update_graph`` after it:
        `brain map` writing 60 cards rebuilds the graph once, not 60 times."""
        before = getattr(self._local, "graph_deferred", False)
        self._local.graph_deferred = True
        try:
            yield self
        finally:
            self._local.graph_deferred = before

    def _memory_diff(self, files: dict[str, tuple[str, int, int]]) -> tuple[list[str], list[str]]:
        """(indexed paths whose file is gone, files new or changed since they were indexed), by size and mtime."""
        stamps = {path: (size, mtime) for path, size, mtime in self.db.execute(
            "SELECT docs.path, doc_stamps.size, doc_stamps.mtime_ns FROM docs LEFT JOIN doc_stamps USING (path)")}
        return (sorted(stamps.keys() - files.keys()),
                sorted(rel for rel, (_, size, mtime) in files.items() if stamps.get(rel, ()) != (size, mtime)))

    def memory_changes(self) -> tuple[list[str], list[str]]:
        """What `brain index` would do to the memory documents now: (removed, changed) paths, nothing written.

        `brain doctor` asks this rather than comparing the file's mtime with the newest memory file: writes go
        to the WAL (the database file's mtime moves at a checkpoint, which waits while any other process holds
        the index open), a no-op refresh writes nothing, and a file dated in the future stays newer; none of
        those means the index is behind, and `brain index` could clear none of them."""
        return self._memory_diff(self._walk_memory()[0])

    def refresh_memory(self, *, quick: bool = False) -> dict[str, int]:
        """Bring the memory documents up to date, reading only files whose size or mtime changed.

        ``quick`` (the boot's refresh) first checks the folders' mtimes and the top-level
        files, and reads nothing when none changed. An in-place edit that keeps its
        folder's mtime is then caught by the next `brain index` (post-merge/checkout hooks)."""
        db = self.db
        if quick and self._memory_unchanged():
            count = db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
            return {"documents": count, "changed": 0, "removed": 0}
        files, folders = self._walk_memory()
        removed, changed = self._memory_diff(files)
        if not removed and not changed and self._fingerprint_is(folders):
            return {"documents": len(files), "changed": 0, "removed": 0}  # nothing to write: no write lock
        db.execute("BEGIN IMMEDIATE")
        try:
            removed, changed = self._memory_diff(files)  # again under the write lock: another process may have done it
            for rel in removed:
                self._drop_doc(rel)
                db.execute("DELETE FROM doc_stamps WHERE path = ?", (rel,))
            written = 0
            for rel in changed:
                path, size, mtime = files[rel]
                try:
                    data = read_regular_file(Path(path))
                except OSError:
                    continue
                if data is None:
                    continue
                text = data.decode("utf-8", errors="replace")
                written += self._put_doc(rel, text)
                db.execute("INSERT OR REPLACE INTO doc_stamps(path, size, mtime_ns) VALUES (?,?,?)", (rel, size, mtime))
            self._remember_fingerprint(folders)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return {"documents": len(files), "changed": written, "removed": len(removed)}

    def add_documents(self, docs: Iterable[tuple[str, str, str]]) -> int:
        """Bulk-index (path, kind, text) documents in one transaction (imports, benchmarks)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            rows, fts = [], []
            next_id = (db.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
            seen: set[str] = set()
            empty = next_id == 1
            sha = hashlib.sha256
            for rel, kind, text in docs:
                if rel in seen:
                    raise ValueError(f"duplicate document path {rel!r}")
                seen.add(rel)
                if not empty:
                    self._drop_doc(rel)
                title = _title(rel, text)
                head = title + " " + rel
                rows.append((next_id, rel, kind, title, sha(text.encode("utf-8")).hexdigest()))
                fts.append((next_id, head, text, index_extra(head + "\n" + text)))
                next_id += 1
            db.executemany("INSERT INTO docs(id, path, kind, title, hash) VALUES (?,?,?,?,?)", rows)
            db.executemany("INSERT INTO docs_fts(rowid, title, body, extra) VALUES (?,?,?,?)", fts)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return len(rows)
