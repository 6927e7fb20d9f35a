"""The memory documents of the search index: every markdown store under ``.brain/`` and the decision records.

Indexed by content hash (a file whose size and modification time did not move is not read
again; the folder fingerprint skips an unchanged tree without a walk), each document with
its kind, title, raw text and its identifiers split (``tokenize.index_extra``). A mixin of
``SearchIndex``: it reads and writes through the index's connection.
"""

from __future__ import annotations

import contextlib

import json
import os
from pathlib import Path
from collections.abc import Iterable

from ..memory.files import read_memory_file, read_regular_file
from ..memory.paths import has_link_between
from .tokenize import index_extra

__all__ = ["MemoryDocs", "kind_of"]


def walk_memory(roots: list[tuple[str, str]], kept: dict | None = None) -> tuple[list, dict]:
    """``memory_walk.walk_memory``, imported when a refresh walks (a boot whose memory folders are unchanged
    walks nothing)."""
    from .memory_walk import walk_memory as walk

    return walk(roots, kept)


def found_files(walked: list):
    """``memory_walk.found`` (see ``walk_memory``)."""
    from .memory_walk import found

    return found(walked)


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


def _path_of(rel: str, where: dict[str, str]) -> str:
    """The file path of a memory document found by the walk (``where``: relative folder -> its path)."""
    cut = rel.rfind("/") + 1
    return os.path.join(where[rel[:cut]], rel[cut:])


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

    def _walk_memory(self, kept: dict | None = None) -> tuple[list, dict]:
        """Every folder holding markdown stores, with its files' names and stamps, and the listings to keep
        (``memory_walk``: an unchanged folder is not read again, only its files stat'ed; one stat a file,
        which also tells a link)."""
        return walk_memory([(prefix, str(root)) for prefix, root in self._memory_roots()], kept)

    def _kept_listings(self) -> tuple[dict, bool]:
        """The listings the last refresh kept, and whether their file stamps are exactly the index's own
        (no write since then: ``update_memory`` and ``add_documents`` drop that mark)."""
        rows = dict(self.db.execute(
            "SELECT key, value FROM meta WHERE key IN ('memory_listing', 'memory_listing_exact')"))
        try:
            kept = json.loads(rows["memory_listing"]) if "memory_listing" in rows else {}
        except ValueError:
            return {}, False
        return (kept, rows.get("memory_listing_exact") == "1") if isinstance(kept, dict) else ({}, False)

    def _listing_not_exact(self) -> None:
        self.db.execute("DELETE FROM meta WHERE key = 'memory_listing_exact'")

    def memory_files(self) -> dict[str, Path]:
        """Every markdown store: .brain/**/*.md (runtime excluded), contracts, and the decision records folder."""
        walked, _ = self._walk_memory()
        where = {key: folder for key, folder, _, _ in walked}
        return {rel: Path(_path_of(rel, where)) for rel, _, _ in sorted(found_files(walked))}

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
        import hashlib  # lazy: a boot whose memory is indexed already hashes nothing (OpenSSL: 2-3 ms)

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
            self._listing_not_exact()  # the index's stamps move here: the next refresh compares them again
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

        update_graph(self, counts=False)  # the answer is not read here

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

    def _memory_delta(self, files: set[tuple[str, int, int]]) -> tuple[list[str], list[tuple[str, int, int]]]:
        """(indexed paths whose file is gone, the (path, size, mtime) of files new or changed since they were
        indexed). Sets of rows compared in one step: a no-op refresh at 50,000 notes builds no dictionary."""
        stamps = set(self.db.execute(
            "SELECT docs.path, doc_stamps.size, doc_stamps.mtime_ns FROM docs LEFT JOIN doc_stamps USING (path)"))
        if stamps == files:
            return [], []
        return (sorted({rel for rel, _, _ in stamps - files} - {rel for rel, _, _ in files}),
                sorted(files - stamps))

    def _memory_diff(self, files: set[tuple[str, int, int]]) -> tuple[list[str], list[str]]:
        """(indexed paths whose file is gone, files new or changed since they were indexed), by size and mtime."""
        removed, changed = self._memory_delta(files)
        return removed, [rel for rel, _, _ in changed]

    def memory_changes(self) -> tuple[list[str], list[str]]:
        """What `brain index` would do to the memory documents now: (removed, changed) paths, nothing written.

        `brain doctor` asks this rather than comparing the file's mtime with the newest memory file: writes go
        to the WAL (the database file's mtime moves at a checkpoint, which waits while any other process holds
        the index open), a no-op refresh writes nothing, and a file dated in the future stays newer; none of
        those means the index is behind, and `brain index` could clear none of them."""
        return self._memory_diff(found_files(self._walk_memory(self._kept_listings()[0])[0]))

    def refresh_memory(self, *, quick: bool = False) -> dict[str, int]:
        """Bring the memory documents up to date, reading only files whose size or mtime changed.

        ``quick`` (the boot's refresh) first checks the folders' mtimes and the top-level
        files, and reads nothing when none changed. An in-place edit that keeps its
        folder's mtime is then caught by the next `brain index` (post-merge/checkout hooks)."""
        db = self.db
        if quick and self._memory_unchanged():
            count = db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
            return {"documents": count, "changed": 0, "removed": 0}
        kept, exact = self._kept_listings()
        walked, keep = self._walk_memory(kept)
        folders = [folder for _, folder, _, _ in walked]
        if exact and len(keep) == len(walked) and keep == kept and self._fingerprint_is(folders):
            # every folder listed as kept, every file stamped as the index holds it: nothing to compare
            count = sum(len(names) - stamps[::2].count(-1) for _, _, names, stamps in walked)
            return {"documents": count, "changed": 0, "removed": 0}
        files, where = found_files(walked), {key: folder for key, folder, _, _ in walked}
        removed, changed = self._memory_delta(files)
        if not removed and not changed and keep == kept and self._fingerprint_is(folders) and (
                exact or len(keep) != len(walked)):
            return {"documents": len(files), "changed": 0, "removed": 0}  # nothing to write: no write lock
        db.execute("BEGIN IMMEDIATE")
        try:
            removed, changed = self._memory_delta(files)  # again under the write lock: another process may have done it
            for rel in removed:
                self._drop_doc(rel)
                db.execute("DELETE FROM doc_stamps WHERE path = ?", (rel,))
            written, unread = 0, 0
            for rel, size, mtime in changed:
                path = _path_of(rel, where)
                try:
                    data = read_regular_file(Path(path))
                except OSError:
                    data = None
                if data is None:
                    unread += 1
                    continue
                text = data.decode("utf-8", errors="replace")
                written += self._put_doc(rel, text)
                db.execute("INSERT OR REPLACE INTO doc_stamps(path, size, mtime_ns) VALUES (?,?,?)", (rel, size, mtime))
            self._remember_fingerprint(folders)
            if keep != kept:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_listing', ?)",
                           (json.dumps(keep, separators=(",", ":")),))
            if unread:  # a file listed but not read stays out of the index: the next refresh compares again
                self._listing_not_exact()
            else:  # the index's stamps are now the walk's: an unchanged walk needs no comparison
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('memory_listing_exact', '1')")
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
            self._listing_not_exact()
            rows, fts = [], []
            next_id = (db.execute("SELECT MAX(id) FROM docs").fetchone()[0] or 0) + 1
            seen: set[str] = set()
            empty = next_id == 1
            import hashlib

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
