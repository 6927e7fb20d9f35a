"""How `brain map` reads files: bounded reads, content hashes, and the one parallel pass of a big run.

The pass reads each file once, in worker processes, and does everything that file is read for:
its card facts (hashed and extracted) and, when the code index wants it, the rows of the code
and function index (``brain.search.build.index_file``), the Python syntax tree and the
tree-sitter symbols shared between the two. The parent stores the card facts and streams the
index rows into ``index.db`` in path order, a window of files at a time, so a 20,000-file
repository is never held in memory at once.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from collections.abc import Callable, Iterator

from .. import pyast

__all__ = ["hash_file", "read_capped", "safe_extract", "too_large_fact", "sha256", "read_pass", "WINDOW"]

WINDOW = 1024  # files handed to the pool at once: bounds the results waiting for the parent


def sha256(data: bytes) -> str:
    import hashlib  # lazy: a boot reads cached hashes and never loads OpenSSL

    return hashlib.sha256(data).hexdigest()


def hash_file(full: str | Path, keep: int) -> tuple[str, bytes | None, int]:
    """(sha256, bytes, size) of a file read in chunks: the bytes only when at most ``keep``, else None.

    A repository may commit a multi-GB (well-compressed) file: it is hashed, so its card still follows
    it, but never held in memory."""
    import hashlib

    digest, kept, size = hashlib.sha256(), [], 0
    with open(full, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
            if size <= keep:
                kept.append(chunk)
            else:
                kept.clear()
    return digest.hexdigest(), (b"".join(kept) if size <= keep else None), size


def read_capped(full: str | Path, keep: int) -> bytes | None:
    """The bytes of a file of at most ``keep`` bytes; None when it is larger (refused by its size unread)."""
    with open(full, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > keep:
            return None
        data = handle.read(keep + 1)
    return data if len(data) <= keep else None


def safe_extract(path: str, raw: bytes, *, dotted: str | None, max_bytes: int, tree: ast.Module | None = None) -> dict:
    """``extract_file``, with a file nested too deeply for its parser (a 100,000-deep JSON array in a committed
    package.json, a C expression of 10,000 parentheses) listed as not read instead of ending the map.
    ``tree``: the Python file's syntax tree, when the caller parsed it already."""
    from .extract import extract_file

    try:
        return extract_file(path, raw, dotted=dotted, max_bytes=max_bytes, tree=tree)
    except RecursionError:
        return {"status": "unread", "reason": "nested too deeply"}


def too_large_fact(size: int) -> dict:
    """The facts of a file above cards.max_file_bytes, as extract_file reports them."""
    return {"status": "unread", "reason": f"too large ({size} bytes)"}


def _plain_utf8(raw: bytes) -> bool:
    """Bytes whose ``ast.parse`` equals that of the text the index decodes from them: strict UTF-8, no BOM,
    no carriage return, no coding declaration (which would make the parser decode them otherwise)."""
    if b"\r" in raw or raw.startswith(b"\xef\xbb\xbf") or b"coding" in b"\n".join(raw.split(b"\n", 2)[:2]):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _shared_tree(path: str, raw: bytes | None, wanted: bool) -> ast.Module | None:
    if not wanted or raw is None or not path.endswith((".py", ".pyi")) or b"\x00" in raw[:8192] or not _plain_utf8(raw):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pyast.parse(raw, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # each side parses again and reports it its own way


def read_job(job: tuple) -> tuple[str, str | None, dict | None, tuple | None]:
    """Worker: read one file once; hash and extract its card facts (``card``) and index it (``spec``: language,
    module, is a package). Never raises: what failed is None, and the parent does it itself."""
    from ..search.build import index_read, paused_gc

    root, path, dotted, max_bytes, card, spec = job
    full = os.path.join(root, path)
    sha = facts = item = raw = None
    try:
        if card:
            sha, raw, size = hash_file(full, max_bytes)
        else:
            with open(full, "rb") as handle:
                raw = handle.read()
        tree = _shared_tree(path, raw, card and spec is not None)
        if card:
            facts = too_large_fact(size) if raw is None else safe_extract(path, raw, dotted=dotted, max_bytes=max_bytes,
                                                                         tree=tree)
        if spec is not None:
            if raw is None:  # above the cards' bound, not the index's
                with open(full, "rb") as handle:
                    raw = handle.read()
            lang, module, is_package = spec
            with paused_gc():  # the rows of one file: young objects in no cycle (see paused_gc)
                item = index_read(raw, path, lang, module, is_package, card_facts=facts if card else None,
                                  card_max_bytes=max_bytes, tree=tree)
    except Exception:  # noqa: BLE001 - the main process does this file itself
        return path, sha if facts is not None else None, facts, None
    return path, sha, facts, item


Progress = Callable[[int, int, str], None]


def read_pass(root: str, jobs: list[tuple], workers: int, store: Callable[[str, str, dict], None],
              progress: Progress | None = None) -> Iterator[tuple[str, tuple]]:
    """Run ``read_job`` over ``jobs`` (sorted by path) in worker processes; card facts go to ``store(path,
    sha, facts)``, index rows are yielded as ``(path, rows)`` in job order. Any failure of the pool stops
    the yield: the caller reads the rest itself (parallelism is an optimisation only)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..workers import Lifeline

    total = len(jobs)
    try:
        context = multiprocessing.get_context("fork")
        # the workers die with this process, even when it is killed with SIGKILL (brain.workers)
        with Lifeline() as lifeline, ProcessPoolExecutor(max_workers=min(workers, 8), mp_context=context,
                                                          initializer=lifeline.initializer,
                                                          initargs=lifeline.initargs) as pool:
            done = 0
            for start in range(0, total, WINDOW):
                for path, sha, facts, item in pool.map(read_job, jobs[start: start + WINDOW], chunksize=16):
                    if sha is not None:
                        store(path, sha, facts)
                    if progress and done % 64 == 0:
                        progress(done, total, "reading files")
                    done += 1
                    if item is not None:
                        yield path, item
    except Exception as exc:  # noqa: BLE001 - parallelism is an optimisation only
        import logging  # lazy: only this fallback logs, and a boot never reaches it

        logging.getLogger("brain.cards").debug("parallel extraction failed, continuing serially: %s", exc)
