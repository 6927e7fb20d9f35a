"""What a card is built from, hashed: file hashes (cached by size and mtime), the signature every card
shares, a module's source hash, and its files' facts (cached per content hash).

A mixin of ``Mapper`` (``brain.cards.mapper``). ``EXTRACTOR_VERSION`` is part of every hash: bumping
it rebuilds every card and drops every cached fact.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..memory.files import atomic_write_bytes, content_hash, new_sha256, read_memory_file
from .contracts import Contract, contract_rel_path, parse_contract
from .discovery import FileInfo, Module
from .project import PROJECT_FILES
from .reading import hash_file, read_capped, safe_extract, sha256, too_large_fact

__all__ = ["Hashing", "EXTRACTOR_VERSION"]


def _hashlib():
    """hashlib, imported when a hash is computed (a boot reads cached ones: OpenSSL is 2-3 ms to load)."""
    import hashlib

    return hashlib


def _pickle():
    """pickle, imported at the first read or write of a facts cache (most boots touch none)."""
    import pickle

    return pickle


EXTRACTOR_VERSION = "13"  # 13: a Go package in a doc/ folder is a module; 12: Go/Java packages are modules, nested go.mod entry points, C++ internal namespaces, autotools


class Hashing:
    """Hashes and cached facts of one map run (mixed into ``Mapper``)."""

    def _stat(self) -> dict[str, list]:
        if self._stat_cache is None:
            try:
                self._stat_cache = json.loads((self.cache_dir / "files.json").read_bytes())
                if not isinstance(self._stat_cache, dict):
                    self._stat_cache = {}
            except (OSError, ValueError):
                self._stat_cache = {}
        return self._stat_cache

    def file_hash(self, info: FileInfo, data: bytes | None = None) -> tuple[str, bytes | None]:
        """(sha256, bytes if they were read) of a file, skipping the read when size and mtime match."""
        cache = self._stat()
        hit = cache.get(info.path)
        if data is None and hit and hit[0] == info.size and hit[1] == info.mtime_ns:
            return hit[2], None
        if data is None:
            try:
                sha, data, _size = hash_file(self.repo / info.path, self.max_file_bytes)  # None above the bound
            except OSError:
                data = b""
                sha = sha256(data)
        else:
            sha = sha256(data)
        cache[info.path] = [info.size, info.mtime_ns, sha]
        self._stat_dirty = True
        return sha, data

    def global_signature(self) -> str:
        """What every card depends on besides its own files."""
        if self._global_sig is None:
            h = new_sha256()  # small inputs: no OpenSSL import on a boot that checks a card
            h.update(f"extractor {EXTRACTOR_VERSION}\nbudget {self.exposes_budget}\nmax {self.max_file_bytes}\n".encode())
            for name in PROJECT_FILES:
                try:
                    raw = read_capped(self.repo / name, self.max_file_bytes)  # hashed only when too large
                    sha = hash_file(self.repo / name, self.max_file_bytes)[0] if raw is None else ""
                    h.update(name.encode() + b"\0" + (raw if raw is not None else sha.encode()) + b"\0")
                except OSError:
                    h.update(name.encode() + b"\0-\0")
            for module in self.modules():
                h.update(f"module {module.name} {module.kind}\n".encode("utf-8", "surrogateescape"))
            self._global_sig = h.hexdigest()
        return self._global_sig

    def contract(self, module: Module) -> tuple[Contract | None, bytes]:
        rel = contract_rel_path(module.name)
        data = read_memory_file(self.brain.dir, rel)  # never through a link
        if data is None:
            return None, b""
        return parse_contract(data), data

    def module_hash(self, module: Module, data: dict[str, bytes] | None = None) -> str:
        infos = self._infos()
        h = new_sha256()
        h.update(self.global_signature().encode() + b"\n")
        h.update(f"{module.name}\n{module.kind}\n".encode("utf-8", "surrogateescape"))
        for path in module.files:
            sha, raw = self.file_hash(infos[path])
            if data is not None and raw is not None:
                data[path] = raw
            h.update(f"f {path} {sha}\n".encode("utf-8", "surrogateescape"))
        for path in module.other:
            h.update(f"o {path}\n".encode("utf-8", "surrogateescape"))
        for path in self._ancestor_manifests(module):
            sha, _raw = self.file_hash(infos[path])
            h.update(f"m {path} {sha}\n".encode("utf-8", "surrogateescape"))
        _contract, raw_contract = self.contract(module)
        if raw_contract:
            h.update(b"contract " + content_hash(raw_contract).encode() + b"\n")
        for parent in self._parent_inits(module):  # a private package's card says who re-exports it
            h.update(f"p {parent} {self.file_hash(infos[parent])[0]}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()

    def _parent_inits(self, module: Module) -> list[str]:
        """The `__init__.py` of each package above a private Python package, nearest first, while the
        package below is private (`pkg/_impl/_transports` -> `pkg/_impl`'s, then `pkg`'s)."""
        if module.kind != "python" or not module.folder:
            return []
        inits: list[str] = []
        folder = module.folder
        while folder:
            parent, _, last = folder.rpartition("/")
            if not last.startswith("_") or last.startswith("__"):
                break
            init = f"{parent}/__init__.py" if parent else "__init__.py"
            if init not in self._infos() or init in module.files:
                break
            inits.append(init)
            folder = parent
        return inits

    def _reexported_by(self, module: Module) -> list[tuple[str, list[str], str]]:
        """(package, names, through) for each package up the chain whose `__init__` re-exports names of this
        private package: directly (``through`` empty), or names the package below it re-exported
        (``through`` names that package). The chain stops where nothing is carried further up."""
        found: list[tuple[str, list[str], str]] = []
        below: str | None = None  # the dotted package the names were carried into, one level down
        carried: list[str] = []
        for init in self._parent_inits(module):
            try:
                raw = read_capped(self.repo / init, self.max_file_bytes)
            except OSError:
                break
            if raw is None:
                break
            dotted = self.dotted().get(init)
            facts = safe_extract(init, raw, dotted=dotted, max_bytes=self.max_file_bytes)
            direct, through = [], []
            for name, source, _orig in facts.get("reexports") or []:
                if name.startswith("_") and name != "*":
                    continue
                if self.resolve(source) == module.name:
                    direct.append(name)
                elif below is not None and source == below:
                    if name == "*":
                        through += carried
                    elif name in carried or "*" in carried:
                        through.append(name)
            direct, through = list(dict.fromkeys(direct)), [n for n in dict.fromkeys(through) if n not in direct]
            if direct:
                found.append((dotted or init, direct, ""))
            if through and below is not None:
                found.append((dotted or init, through, below))
            carried = list(dict.fromkeys(direct + through))
            if not carried or not dotted:
                break
            below = dotted
        return found

    _info_map: Mapping[str, FileInfo] | None = None

    def _infos(self) -> Mapping[str, FileInfo]:
        """Every file's FileInfo by path. Under a saved layout whose files were not stat-ed yet, each is
        stat-ed when first read (a card's staleness check reads one module's files, not the tree's)."""
        if self._info_map is None:
            if self._files is None and self._modules is not None:
                self._info_map = _StatOnRead(self)
            else:
                self._info_map = {f.path: f for f in self.files()}
        return self._info_map

    def _all_infos(self) -> dict[str, FileInfo]:
        """The files of a full stat of the layout (rediscovered when one is gone), by path."""
        self._info_map = {f.path: f for f in self.files()}
        return self._info_map

    def _facts_cache_path(self, module: Module) -> Path:
        return self.cache_dir / "facts" / (_hashlib().sha1(module.name.encode("utf-8", "surrogateescape")).hexdigest()[:20] + ".pkl")

    def facts(self, module: Module, data: dict[str, bytes]) -> dict[str, dict]:
        """Facts of every file of ``module``, re-extracting only files whose content changed."""
        cache_path = self._facts_cache_path(module)
        try:
            with open(cache_path, "rb") as handle:
                cached = _pickle().load(handle)
            if not isinstance(cached, dict) or cached.get("version") != EXTRACTOR_VERSION:
                cached = {"version": EXTRACTOR_VERSION, "files": {}}
        except Exception:  # noqa: BLE001 - any broken cache is just a miss
            cached = {"version": EXTRACTOR_VERSION, "files": {}}
        infos = self._infos()
        dotted = self.dotted()
        out: dict[str, dict] = {}
        fresh: dict[str, tuple] = {}
        changed = False
        for path in module.files:
            info = infos[path]
            sha, raw = self.file_hash(info, data.get(path))
            key = (sha, dotted.get(path), self.max_file_bytes)
            hit = cached["files"].get(path)
            pre = self._prefetched.get(path)
            if hit and hit[0] == key:
                out[path] = hit[1]
            elif pre is not None and pre[0] == sha:
                out[path] = pre[1]
                changed = True
            else:
                if raw is None:
                    raw = data.get(path)
                size = 0
                if raw is None:
                    try:
                        _sha_again, raw, size = hash_file(self.repo / path, self.max_file_bytes)
                    except OSError:
                        raw = b""
                out[path] = (too_large_fact(size) if raw is None else
                             safe_extract(path, raw, dotted=dotted.get(path), max_bytes=self.max_file_bytes))
                changed = True
            fresh[path] = (key, out[path])
        self._unread_seen[module.name] = [[p, f.get("reason", "")] for p, f in sorted(out.items()) if f.get("status") == "unread"]
        if changed or set(fresh) != set(cached["files"]):
            try:
                atomic_write_bytes(cache_path, _pickle().dumps({"version": EXTRACTOR_VERSION, "files": fresh},
                                                              protocol=_pickle().HIGHEST_PROTOCOL), durable=False, private=True)
            except OSError:
                pass
        return out


class _StatOnRead(Mapping):
    """A saved layout's files by path, each stat-ed at its first read. A file gone since the layout
    was saved falls back to a full stat of the layout, which discovers it again (Mapper.files)."""

    def __init__(self, mapper) -> None:
        self._mapper = mapper
        self._repo = str(mapper.repo)
        self._paths: dict[str, bool] = {}  # path -> whether it is one of the "other" files (never read)
        for module in mapper._modules:
            self._paths.update(dict.fromkeys(module.files, False))
            self._paths.update(dict.fromkeys(module.other, True))
        self._seen: dict[str, FileInfo] = {}

    def __getitem__(self, path: str) -> FileInfo:
        info = self._seen.get(path)
        if info is None:
            if self._paths[path]:
                info = FileInfo(path, 0, 0)
            else:
                try:
                    st = os.stat(os.path.join(self._repo, path))
                except OSError:
                    return self._mapper._all_infos()[path]
                info = FileInfo(path, st.st_size, st.st_mtime_ns)
            self._seen[path] = info
        return info

    def __contains__(self, path) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

