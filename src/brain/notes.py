"""Managing memory files: list them with titles and sizes, delete one, rename one.

Every change goes through the brain's own paths: the store's ``resolve`` (the path rule
every memory path obeys), its ``write`` / ``delete`` (atomic, under the write lock, with
``expected_hash``), the territory check of the writer's role, and the write listeners
(the search index drops or adds the document, the graph follows its links). Nothing
here decides on its own whether a path is allowed.

A rename is a write of the new path (which must not exist) then a delete of the old one
with the hash that was read; if the old file changed in between, the new one is removed
again and the rename is refused, so no content is lost or duplicated. With
``sync.commit_on_write`` a delete or a rename is committed as a write is (``Brain.commit_memory``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import Conflict, InvalidInput

__all__ = ["NoteInfo", "list_notes", "remove_note", "move_note", "PROTECTED", "LISTED_FOLDERS"]

PROTECTED = ("now.md", "focus.md")  # every boot reads them: write new text, never remove or rename them
LISTED_FOLDERS = ("notes", "workflows", "decisions", "agents", "handoffs", "contracts")  # `--all` adds cards, local handoffs
_HEADING = re.compile(r"^#{1,6}[ \t]+(.{1,200})$", re.MULTILINE)


@dataclass(frozen=True)
class NoteInfo:
    path: str
    title: str
    bytes: int

    def to_dict(self) -> dict:
        return {"path": self.path, "title": self.title, "bytes": self.bytes}


def _title(path: str, head: str) -> str:
    match = _HEADING.search(head)
    return match.group(1).strip() if match else path.rsplit("/", 1)[-1].removesuffix(".md")


def _walk(store, folder: str, depth: int = 0) -> list[str]:
    paths = store.list(folder)
    base = store.folder(folder)
    if depth < 4 and base.is_dir():
        for child in sorted(base.iterdir()):
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                paths += _walk(store, f"{folder}/{child.name}", depth + 1)
    return paths


def list_notes(brain, *, everything: bool = False) -> list[NoteInfo]:
    """The project's memory files (markdown), with the first heading as title and the size in bytes.

    Without ``everything``: the top-level files and the folders people curate (LISTED_FOLDERS,
    without `handoffs/local/`); with it, the module cards and the local handoffs too."""
    store = brain.memory
    paths = store.list("")
    for folder in LISTED_FOLDERS + (("modules",) if everything else ()):
        paths += _walk(store, folder)
    if not everything:
        paths = [p for p in paths if not p.startswith("handoffs/local/")]
    out = []
    for rel in sorted(set(paths)):
        try:
            path = store.resolve(rel)
            with open(path, "rb") as handle:
                head = handle.read(4096).decode("utf-8", errors="replace")
            out.append(NoteInfo(rel, _title(rel, head), path.stat().st_size))
        except OSError:
            continue  # removed meanwhile
    return out


def _check_target(brain, path: str, what: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise InvalidInput(f"{what}: give a memory path such as notes/setup.md", field="path")
    rel = brain.memory.relative(brain.memory.resolve(path))  # the store's path rule decides, and normalizes
    if rel.split("/", 1)[0] == "runtime":
        raise InvalidInput("runtime/ holds logs and derived state, not memory", field="path")
    if rel in PROTECTED:
        raise InvalidInput(f"{rel} is read by every boot and cannot be {what}d", field="path",
                           hint=f"write new text into it instead: `brain write {rel.removesuffix('.md')}`")
    if not rel.endswith(".md"):
        raise InvalidInput(f"{rel} is not a markdown memory file", field="path")
    return rel


def remove_note(brain, path: str, *, expected_hash: str | None = None, role: str | None = None,
                reason: str | None = None) -> dict:
    """Delete one memory file (NotFound if absent, Conflict if it changed since ``expected_hash``)."""
    rel = _check_target(brain, path, "remove")
    brain.check_territory(rel, role=role)
    linked = _linked_from(brain, rel)  # before: once it is gone, links to it no longer resolve
    brain.memory.delete(rel, expected_hash=expected_hash)
    brain.notify_write(rel)
    brain.commit_memory([rel], writer=role, reason=reason, action="delete")
    return {"removed": rel, "linked_from": linked}


def move_note(brain, source: str, dest: str, *, expected_hash: str | None = None, role: str | None = None,
              reason: str | None = None, rewrite_links: bool = True) -> dict:
    """Rename one memory file; the destination must not exist. Returns the new hash.

    With ``rewrite_links`` the [[links]] that pointed at the old path are pointed at the new one, each
    linking file written through the one write path (its territory checked for ``role``, over the version
    read): a file that cannot be rewritten is listed in ``links_left`` with why, and the move stands."""
    src = _check_target(brain, source, "move")
    dst = _check_target(brain, dest, "move")
    from .security.redact import refuse_secret_name

    refuse_secret_name(brain.redactor, dst, "path")  # a new name holding a key would keep it (a file to move away is fine)
    if src == dst:
        raise InvalidInput(f"{src} is already there", field="dest")
    brain.check_territory(src, role=role)
    brain.check_territory(dst, role=role)
    doc = brain.memory.read(src)
    linked = _linked_from(brain, src)
    before = {n.path for n in list_notes(brain, everything=True)} | {src}
    if expected_hash is not None and not doc.hash.startswith(expected_hash.lower()):
        raise Conflict(src, expected_hash, doc.hash)
    new = brain.memory.write(dst, doc.text, expected_hash="")  # refused if dst exists
    try:
        brain.memory.delete(src, expected_hash=doc.hash)
    except Exception:  # the source changed (or vanished) meanwhile: undo, so nothing is duplicated
        brain.memory.delete(dst, expected_hash=new.hash)
        raise
    brain.notify_write(src)
    brain.notify_write(dst)
    brain.commit_memory([src, dst], writer=role, reason=reason, action="move")
    rewritten: list[str] = []
    left: list[dict] = []
    if rewrite_links and linked:
        with brain.commit_batch(writer=role, reason=reason or f"links to {src} now name {dst}"):
            rewritten, left = _rewrite_links(brain, linked, src, dst, before, role)
    return {"moved": src, "to": dst, "hash": new.hash, "linked_from": linked, "links_rewritten": rewritten,
            "links_left": left}


def _rewrite_links(brain, files: list[str], src: str, dst: str, paths: set[str], role: str | None):
    from .errors import BrainError
    from .search.graph import retarget_links

    rewritten, left = [], []
    for rel in files:
        path = dst if rel == src else rel  # a file linking to itself moved with it
        try:
            doc = brain.memory.read(path)
            text, changed = retarget_links(doc.text, src, dst, paths)
            if changed:
                brain.write(path, text, expected_hash=doc.hash, role=role)
                rewritten.append(path)
        except BrainError as exc:  # a territory refusal, a concurrent change: say so, keep the move
            left.append({"path": path, "error": exc.kind, "message": exc.message})
    return rewritten, left


def _linked_from(brain, rel: str) -> list[str]:
    """Memory files whose [[wiki links]] pointed at ``rel`` (to fix after a rename or delete)."""
    index = brain.index
    if not index.exists:
        return []
    try:
        rows = index.db.execute("SELECT src FROM edges WHERE dst = ? AND kind = 'links' ORDER BY src",
                                (f"memory:{rel}",)).fetchall()
    except Exception:  # noqa: BLE001 - derived help only
        return []
    return [r[0].removeprefix("memory:") for r in rows]
