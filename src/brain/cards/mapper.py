"""`brain map`: build or refresh module cards, incrementally, with the truth kept in the cards.

Each card carries the sha256 of everything it was built from (its files' bytes, the
names of its other files, its contract, the project files, the module layout and the
extractor version). A run recomputes that hash per module and rebuilds only the cards
whose hash differs. ``runtime/cards/`` holds derived caches (file hashes keyed by size
and mtime, per-file facts keyed by content hash, the last layout): deleting it makes the
next run slower, never wrong.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import pickle
import posixpath
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import BrainError, Conflict, NotFound
from ..inputs import loads_json
from ..memory.files import atomic_write_bytes, read_memory_file
from ..trees import walk as walk_tree
from .contracts import Contract, contract_rel_path, parse_contract
from .discovery import FileInfo, Module, card_rel_path, discover, python_names, scan
from .markers import BEGIN, SOURCE_RE, join_card, parse_card
from .project import PROJECT_FILES, ProjectInfo, load_project
from .reading import hash_file, read_capped, read_pass, safe_extract, sha256, too_large_fact

__all__ = ["Mapper", "MapReport", "EXTRACTOR_VERSION", "Progress"]

log = logging.getLogger("brain.cards")

EXTRACTOR_VERSION = "13"  # 13: a Go package in a doc/ folder is a module; 12: Go/Java packages are modules, nested go.mod entry points, C++ internal namespaces, autotools
Progress = Callable[[int, int, str], None]


@dataclass
class MapReport:
    modules: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)       # cards that differ from the code (check mode: not written)
    missing: list[str] = field(default_factory=list)     # modules without a card yet
    orphans: list[str] = field(default_factory=list)     # cards whose module no longer exists
    removed: list[str] = field(default_factory=list)     # orphan cards deleted (they had no human text)
    decisions_index: str = "current"                      # current | rewritten | stale (check mode)
    errors: dict[str, str] = field(default_factory=dict)  # cards that could not be written, and why
    unread: dict[str, list[list[str]]] = field(default_factory=dict)
    seconds: float = 0.0
    checked: bool = False
    index: dict | None = None  # what the code index build did (None: not built, as with --check or --module)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("modules", "written", "unchanged", "stale", "missing", "orphans", "removed",
                                              "decisions_index", "errors", "unread", "seconds", "checked", "index")}

    @property
    def ok(self) -> bool:
        """For --check: no card is stale, missing or orphaned, and decisions.md matches the records."""
        return not (self.stale or self.missing or self.orphans) and self.decisions_index != "stale"


CARD_WRITE_ATTEMPTS = 20  # re-reads of a card that changed under a map before it gives up (never overwrites)
PARALLEL_MIN_FILES = 150  # below this, worker processes cost more than they save


def _strip_jsonc(text: str) -> str:
    """tsconfig.json allows comments and trailing commas."""
    import re

    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return re.sub(r",(\s*[}\]])", r"\1", text)


class Mapper:
    """One repository's module cards. Created per run; holds the caches of that run."""

    def __init__(self, brain) -> None:
        self.brain = brain
        self.repo: Path = brain.repo
        self.cards_dir: Path = brain.dir / "modules"
        self.cache_dir: Path = brain.runtime / "cards"
        settings = brain.settings
        self.globs: list[str] = list(settings.get("modules") or [])
        self.exposes_budget: int = settings.get("cards.exposes_tokens")
        self.max_file_bytes: int = settings.get("cards.max_file_bytes")
        self.split = (settings.get("cards.split_bytes"), settings.get("cards.split_min_bytes"))
        self._files: list[FileInfo] | None = None
        self._modules: list[Module] | None = None
        self._stat_cache: dict[str, list] | None = None
        self._stat_dirty = False
        self._project: ProjectInfo | None = None
        self._global_sig: str | None = None
        self._dotted: dict[str, str] | None = None
        self._dotted_to_module: dict[str, str] | None = None
        self._owner_cache: dict[str, str | None] = {}
        self._module_folders: tuple[object, dict[str, str]] = (None, {})
        self._lang_modules: dict[str, object] = {}
        self._folders: dict[str, int] = {}
        self._layout_dirty = False
        self._unread_seen: dict[str, list[list[str]]] = {}
        self._prefetched: dict[str, tuple[str, dict]] = {}
        self.workers: int = settings.get("cards.workers")

    # -- layout ------------------------------------------------------------------------
    def _ensure_layout(self) -> None:
        """Modules and files: from the saved layout when no folder changed since, else scanned and discovered."""
        if self._modules is not None:
            return
        if self.load_layout():
            return
        folders: dict[str, int] = {}
        self._files = scan(self.repo, prune=not self.globs, folders=folders)
        self._folders = folders
        self._modules = discover(self._files, self.globs, split_bytes=self.split[0], split_min_bytes=self.split[1])
        self._layout_dirty = True

    def files(self) -> list[FileInfo]:
        self._ensure_layout()
        return self._files

    def modules(self) -> list[Module]:
        self._ensure_layout()
        return self._modules

    def module(self, name: str) -> Module:
        name = name.strip().strip("/") or "."
        for module in self.modules():
            if module.name == name:
                return module
        close = self.close_names(name)
        raise NotFound(f"module {name!r}", hint=("did you mean " + ", ".join(f"`{c}`" for c in close) + "? ")
                       if close else f"`brain map --list` lists the {len(self.modules())} modules")

    def has_module(self, name: str) -> bool:
        name = name.strip().strip("/") or "."
        return any(module.name == name for module in self.modules())

    def close_names(self, name: str, limit: int = 5) -> list[str]:
        """Module names that contain ``name`` or that it contains: what a mistyped or partial name meant."""
        name = name.strip().strip("/") or "."
        return [n for n in (m.name for m in self.modules()) if name in n or (n != "." and n in name)][:limit]

    def owner(self, path: str) -> str | None:
        """The module a repository-relative path belongs to (deepest module folder containing it)."""
        modules = self.modules()
        if self._module_folders[0] is not modules:  # built once per layout, not once per import resolved
            self._module_folders = (modules, {m.folder: m.name for m in modules})
        folders = self._module_folders[1]
        folder = path.rpartition("/")[0] if not path.endswith("/") else path.rstrip("/")
        probe = folder
        while True:
            if probe in self._owner_cache:
                return self._owner_cache[probe]
            if probe in folders:
                found = folders[probe]
                break
            if not probe:
                found = None
                break
            probe = probe.rpartition("/")[0]
        self._owner_cache[folder] = found
        return found

    def project(self) -> ProjectInfo:
        if self._project is None:
            self._project = load_project(self.repo)
            self._project.top_packages = {d.split(".")[0] for d in self.dotted().values()}
        return self._project

    def dotted(self) -> dict[str, str]:
        if self._dotted is None:
            self._dotted = python_names(self.files())
        return self._dotted

    def resolve(self, dotted: str) -> str | None:
        """The module that defines a dotted Python name (longest known prefix)."""
        if self._dotted_to_module is None:
            table: dict[str, str] = {}
            by_path = {p: m.name for m in self.modules() if m.kind == "python" for p in m.files}
            for path, name in self.dotted().items():
                module = by_path.get(path)
                if module is not None:
                    table[name] = module
            self._dotted_to_module = table
        table = self._dotted_to_module
        probe = dotted
        while probe:
            if probe in table:
                return table[probe]
            probe = probe.rpartition(".")[0]
        return None

    def is_module(self, dotted: str) -> bool:
        self.resolve(dotted)  # builds the table
        return dotted in (self._dotted_to_module or {})

    def node_packages(self) -> dict[str, str]:
        """npm package name -> module, from the package.json of each module."""
        out: dict[str, str] = {}
        for module in self.modules():
            path = f"{module.folder}/package.json" if module.folder else "package.json"
            if path in module.files:
                try:
                    data = loads_json(read_capped(self.repo / path, self.max_file_bytes) or b"")
                except (OSError, ValueError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("name"), str):
                    out.setdefault(data["name"], module.name)
        return out

    _ts_aliases: list[tuple[str, str, list[str]]] | None = None

    def ts_aliases(self) -> list[tuple[str, str, list[str]]]:
        """(folder of the tsconfig, alias prefix, target prefixes) from tsconfig.json `paths`, most specific first."""
        if self._ts_aliases is None:
            found = []
            folders = {""} | {m.folder for m in self.modules() if m.kind == "node"}
            for folder in sorted(folders):
                path = self.repo / folder / "tsconfig.json" if folder else self.repo / "tsconfig.json"
                try:
                    raw = (read_capped(path, self.max_file_bytes) or b"").decode("utf-8", errors="replace")
                except OSError:
                    continue
                try:
                    data = loads_json(_strip_jsonc(raw))  # a committed tsconfig may nest 100,000 deep
                except ValueError:
                    continue
                options = data.get("compilerOptions") if isinstance(data, dict) else None
                if not isinstance(options, dict):
                    continue
                base_url = options.get("baseUrl") if isinstance(options.get("baseUrl"), str) else "."
                base = posixpath.normpath(posixpath.join(folder, base_url)) if folder else posixpath.normpath(base_url)
                base = "" if base == "." else base
                for alias, targets in (options.get("paths") or {}).items():
                    if isinstance(alias, str) and isinstance(targets, list):
                        prefixes = [posixpath.normpath(posixpath.join(base, t.split("*")[0])) + ("/" if t.split("*")[0].endswith("/") else "")
                                    for t in targets if isinstance(t, str)]
                        found.append((folder, alias.split("*")[0], prefixes))
            found.sort(key=lambda a: -len(a[1]))
            self._ts_aliases = found
        return self._ts_aliases

    def resolve_node(self, spec: str, from_path: str) -> str | None:
        for folder, alias, prefixes in self.ts_aliases():
            if alias and spec.startswith(alias) and (not folder or from_path.startswith(folder + "/")):
                for prefix in prefixes:
                    target = (prefix + spec[len(alias):]).lstrip("/")
                    owner = self.owner(target + "/x") if (self.repo / target).is_dir() else self.owner(target)
                    if owner is not None:
                        return owner
        if spec.startswith("."):
            base = from_path.rpartition("/")[0]
            parts = [p for p in (base.split("/") if base else [])]
            for piece in spec.split("/"):
                if piece in ("", "."):
                    continue
                if piece == "..":
                    if not parts:
                        return None
                    parts.pop()
                else:
                    parts.append(piece)
            target = "/".join(parts)
            return self.owner(target + "/x") if (self.repo / target).is_dir() else self.owner(target)
        if self._node_packages is None:
            self._node_packages = self.node_packages()
        name = "/".join(spec.split("/")[:2]) if spec.startswith("@") else spec.split("/")[0]
        return self._node_packages.get(name)

    _node_packages: dict[str, str] | None = None

    # -- languages behind the extractor interface: manifests and import resolution ---------------
    _manifest_facts: dict[str, list[tuple[str, dict]]] | None = None
    _suffix_index: dict[str, list[str]] | None = None

    def manifests(self, lang: str) -> list[tuple[str, dict]]:
        """(folder, manifest facts) of every manifest of ``lang`` in the repository, deepest folder first."""
        if self._manifest_facts is None:
            from .discovery import MANIFESTS
            from .languages.base import parse_manifest

            found: dict[str, list[tuple[str, dict]]] = {}
            for info in self.files():
                folder, _, name = info.path.rpartition("/")
                owner_lang = MANIFESTS.get(name)
                if owner_lang is None or not info.size:
                    continue
                try:
                    raw = read_capped(self.repo / info.path, self.max_file_bytes)
                except OSError:
                    continue
                if raw is None:
                    continue
                facts = parse_manifest(name, raw, info.path) or {}
                manifest = facts.get("manifest")
                if manifest:
                    found.setdefault(manifest.get("language") or owner_lang, []).append((folder, dict(manifest, file=name)))
            for items in found.values():
                items.sort(key=lambda item: (-item[0].count("/") - bool(item[0]), item[0]))
            self._manifest_facts = found
        return self._manifest_facts.get(lang, [])

    def nearest_manifest(self, path: str, lang: str) -> dict | None:
        """The manifest of ``lang`` in the deepest folder containing ``path``."""
        for folder, manifest in self.manifests(lang):
            if not folder or path.startswith(folder + "/"):
                return manifest
        return None

    def find_suffix(self, suffix: str) -> str | None:
        """The shortest repository path (file or folder) ending with ``/suffix`` or equal to it."""
        suffix = suffix.strip("/")
        if not suffix:
            return None
        if self._suffix_index is None:
            index: dict[str, list[str]] = {}
            for info in self.files():
                path = info.path
                while path:
                    index.setdefault(path.rpartition("/")[2], []).append(path)
                    path = path.rpartition("/")[0]
            for key in index:
                index[key] = sorted(set(index[key]), key=lambda p: (p.count("/"), p))
            self._suffix_index = index
        last = suffix.rpartition("/")[2]
        for path in self._suffix_index.get(last, ()):
            if path == suffix or path.endswith("/" + suffix):
                return path
        return None

    def exists(self, path: str) -> bool:
        return path in self._infos() or self.find_suffix(path) == path

    def _lang_module(self, path: str):
        """The language module of a file by its extension (looked up once per extension: called per import)."""
        suffix = posixpath.splitext(path)[1].lower()
        if suffix in self._lang_modules:
            return self._lang_modules[suffix]
        from .discovery import LANG_EXT
        from .languages.base import LANGUAGE_MODULES

        lang = LANG_EXT.get(suffix)
        mod = None
        if lang is not None:
            import importlib

            mod = importlib.import_module(LANGUAGE_MODULES[lang])
        self._lang_modules[suffix] = mod
        return mod

    def resolve_import(self, spec: str, from_path: str) -> str | None:
        """The module an import of a file in a language behind the extractor interface lands in."""
        mod = self._lang_module(from_path)
        resolver = getattr(mod, "resolve_import", None)
        if resolver is None:
            return None
        target = resolver(spec, from_path, self)
        if not target:
            return None
        return self.owner(target + "/x") if target not in self._infos() else self.owner(target)

    def external(self, spec: str, from_path: str):
        mod = self._lang_module(from_path)
        fn = getattr(mod, "external", None)
        return fn(spec, from_path, self) if fn is not None else None

    def context_title(self, module: Module) -> str:
        """The nearest manifest above a module that has none of its own ("Go module `x`")."""
        from .discovery import MANIFESTS

        if module.kind in ("python", "node", "other") or any(p.rpartition("/")[2] in MANIFESTS for p in module.files):
            return ""
        lang = "java" if module.kind == "kotlin" else "c" if module.kind == "cpp" else module.kind
        probe = module.folder + "/x" if module.folder else "x"
        manifest = self.nearest_manifest(probe, lang)
        if manifest is None:
            return ""
        import importlib

        from .languages.base import LANGUAGE_MODULES

        describe = getattr(importlib.import_module(LANGUAGE_MODULES[module.kind]), "describe_folder", None) \
            if module.kind in LANGUAGE_MODULES else None
        if describe is not None:
            folder = next((f for f, m in self.manifests(lang) if m is manifest), "")
            return describe(module.folder, folder, manifest)
        return manifest.get("title", "")

    def _ancestor_manifests(self, module: Module) -> list[str]:
        """Manifests in folders above a module: their bytes change what its card says."""
        from .discovery import MANIFESTS

        if module.kind in ("python", "node") or not module.folder:
            return []
        infos = self._infos()
        out = []
        folder = module.folder.rpartition("/")[0] if "/" in module.folder else ""
        while True:
            for name in MANIFESTS:
                path = f"{folder}/{name}" if folder else name
                if path in infos:
                    out.append(path)
            if not folder:
                return out
            folder = folder.rpartition("/")[0]

    # -- hashing -----------------------------------------------------------------------
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
            h = hashlib.sha256()
            h.update(f"extractor {EXTRACTOR_VERSION}\nbudget {self.exposes_budget}\nmax {self.max_file_bytes}\n".encode())
            for name in PROJECT_FILES:
                try:
                    sha, raw, _size = hash_file(self.repo / name, self.max_file_bytes)
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
        h = hashlib.sha256()
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
            h.update(b"contract " + sha256(raw_contract).encode() + b"\n")
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

    _info_map: dict[str, FileInfo] | None = None

    def _infos(self) -> dict[str, FileInfo]:
        if self._info_map is None:
            self._info_map = {f.path: f for f in self.files()}
        return self._info_map

    # -- facts -------------------------------------------------------------------------
    def _facts_cache_path(self, module: Module) -> Path:
        return self.cache_dir / "facts" / (hashlib.sha1(module.name.encode("utf-8", "surrogateescape")).hexdigest()[:20] + ".pkl")

    def facts(self, module: Module, data: dict[str, bytes]) -> dict[str, dict]:
        """Facts of every file of ``module``, re-extracting only files whose content changed."""
        cache_path = self._facts_cache_path(module)
        try:
            with open(cache_path, "rb") as handle:
                cached = pickle.load(handle)
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
                atomic_write_bytes(cache_path, pickle.dumps({"version": EXTRACTOR_VERSION, "files": fresh},
                                                            protocol=pickle.HIGHEST_PROTOCOL), durable=False, private=True)
            except OSError:
                pass
        return out

    # -- cards -------------------------------------------------------------------------
    def card_path(self, module_name: str) -> Path:
        return self.brain.dir / card_rel_path(module_name)

    def read_card(self, module_name: str) -> str | None:
        doc = self.read_card_doc(module_name)
        return doc.text if doc is not None else None

    def read_card_doc(self, module_name: str):
        """The card as a memory Document (text and hash), through the memory path rule; None if absent."""
        try:
            return self.brain.memory.read_or_none(card_rel_path(module_name))
        except BrainError:  # a card that is not UTF-8 text is rewritten whole
            return None

    def _read_pass(self, paths: list[str], plan, progress: Progress | None = None):
        """Read the files of the cards to rebuild and the files the code index lacks, each once, in worker
        processes (``reading.read_pass``): card facts kept for ``facts``, index rows yielded in path order."""
        workers = self.workers or (os.cpu_count() or 1)
        if workers < 2:
            return iter(())
        dotted = self.dotted()
        cards = set(paths)
        index = {}
        if plan is not None:
            for path in plan.reads():
                lang, _test, module = plan.describe(path)
                index[path] = (lang, module, path.endswith("__init__.py"))
        root = str(self.repo)
        jobs = [(root, p, dotted.get(p), self.max_file_bytes, p in cards, index.get(p)) for p in sorted(cards | set(index))]

        def store(path: str, sha: str, facts: dict) -> None:
            self._prefetched[path] = (sha, facts)

        return read_pass(root, jobs, workers, store, progress)

    def _card_hash(self, module_name: str) -> str | None:
        """The source hash in a card's head, without reading or parsing the whole card."""
        try:
            fd = os.open(self.card_path(module_name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            head = os.read(fd, 512).decode("utf-8", errors="replace")
        except OSError:
            return None
        finally:
            os.close(fd)
        if not head.startswith(BEGIN + "\n"):
            return None
        match = SOURCE_RE.search(head)
        return match.group(1) if match else None

    def render(self, module: Module, source_hash: str, data: dict[str, bytes]) -> str:
        from .render import RenderInput, render_generated

        facts = self.facts(module, data)
        contract, _raw = self.contract(module)
        node_declared = {}
        for path in module.files:
            pkg = (facts.get(path) or {}).get("package")
            if pkg:
                node_declared.update(pkg.get("declared") or {})
        # the languages behind the extractor interface: entry points from their own project root, a root's packages
        extras = {"entry_label": self.entry_label, "packages": self.packages_of(module)}
        inp = RenderInput(**extras, module=module, source_hash=source_hash, facts=facts, dotted=self.dotted(), resolve=self.resolve,
                          resolve_node=self.resolve_node, is_module=self.is_module, project=self.project(), contract=contract,
                          contract_path=".brain/" + contract_rel_path(module.name), exposes_budget=self.exposes_budget,
                          node_declared=node_declared, resolve_import=self.resolve_import, external=self.external,
                          context=self.context_title(module), reexported_by=self._reexported_by(module))
        return render_generated(inp)

    def packages_of(self, module: Module) -> tuple[str, ...]:
        """The package modules of a Go module or Maven/Gradle module root (not those of a nested one)."""
        from .discovery import UNIT_FOLDER_EXT, MANIFESTS

        def root_lang(mod: Module) -> str | None:
            return next((MANIFESTS[n] for p in mod.files if (n := p.rpartition("/")[2]) in ("go.mod", "pom.xml", "build.gradle",
                                                                                             "build.gradle.kts")
                         and p.rpartition("/")[0] == mod.folder), None)

        if root_lang(module) not in UNIT_FOLDER_EXT:
            return ()
        modules = self.modules()
        roots = {m.folder for m in modules if root_lang(m) in UNIT_FOLDER_EXT}
        found = []
        for mod in modules:
            if mod.name == module.name or not module.contains(mod.folder + "/x"):
                continue
            probe = mod.folder
            while probe and probe not in roots:
                probe = probe.rpartition("/")[0]
            if probe == module.folder:
                found.append(mod.name if not module.folder else mod.name[len(module.folder) + 1:])
        return tuple(found)

    def entry_label(self, label: str, path: str) -> str:
        """An entry point's command as run from its own project root (a nested go.mod), by the language's hook."""
        hook = getattr(self._lang_module(path), "entry_label", None)
        return hook(label, path, self) if hook is not None else label

    def existing_cards(self) -> list[str]:
        """Module names of the card files on disk."""
        names = []
        if not self.cards_dir.is_dir():
            return names
        if self.cards_dir.is_symlink():
            return names
        for folder, dirs, files in walk_tree(self.cards_dir):  # links are neither descended nor listed
            dirs[:] = [d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(folder, d))]
            for file in files:
                path = Path(folder, file)
                if not file.endswith(".md") or file.startswith(".") or path.is_symlink():
                    continue
                rel = path.relative_to(self.cards_dir).as_posix()[:-3]
                names.append("." if rel == "_root" else rel)
        return sorted(names)

    def write_card(self, module_name: str, generated: str) -> bool:
        """Write the generated sections under the card's current human section; True if written.

        The card is read (text and hash) right before the write, and written only over that
        version: a How to use edit accepted while the card was rendering makes the write
        conflict, and the card is read again and the edit re-applied (the human section
        always wins). Bounded: a card that keeps changing for CARD_WRITE_ATTEMPTS rounds
        is reported as an error of this map, never overwritten."""
        rel = card_rel_path(module_name)
        for _ in range(CARD_WRITE_ATTEMPTS):
            doc = self.read_card_doc(module_name)
            human = parse_card(doc.text).human if doc is not None else ""
            text = join_card(generated, human)
            if doc is not None and text == doc.text:
                return False
            try:  # a card without human text is derived from the code alone: `brain map` rebuilds it, no fsync needed
                self.brain.write(rel, text, expected_hash=doc.hash if doc is not None else "", durable=bool(human.strip()))
            except Conflict:
                continue
            return True
        raise Conflict(rel, "(the version read)", None)

    def build(self, module: str | None = None, *, check: bool = False, force: bool = False,
              progress: Progress | None = None) -> MapReport:
        started = time.perf_counter()
        report = MapReport(checked=check)
        modules = [self.module(module)] if module else self.modules()
        report.modules = [m.name for m in self.modules()] if not module else [modules[0].name]
        pending: list[tuple[Module, str, str | None, object]] = []
        for mod in modules:
            source_hash = self.module_hash(mod)
            if not force and self._card_hash(mod.name) == source_hash:
                report.unchanged.append(mod.name)
                continue
            old = self.read_card(mod.name)
            parsed = parse_card(old) if old is not None else None
            if parsed is not None and parsed.intact and parsed.source_hash == source_hash and not force:
                report.unchanged.append(mod.name)
                continue
            (report.missing if old is None else report.stale).append(mod.name)
            pending.append((mod, source_hash, old, parsed))
        if check:
            pending = []
        files = [p for mod, *_ in pending for p in mod.files]
        code_index = None if check or module else self._code_index()
        plan = None
        if code_index is not None:
            from ..search.build import plan_code

            plan = plan_code(code_index.db, self.repo)
        reads = plan.reads() if plan is not None else []
        rows = iter(())
        if (len(pending) > 1 and len(files) >= PARALLEL_MIN_FILES) or len(reads) >= PARALLEL_MIN_FILES:
            rows = self._read_pass(files if len(pending) > 1 and len(files) >= PARALLEL_MIN_FILES else [], plan, progress)
        if code_index is not None:
            report.index = self._refresh_index(code_index, plan, rows, progress)
        for _rest in rows:  # no index: the pass only reads for the cards
            pass
        total = len(pending)
        deferred = code_index.graph_deferred() if code_index is not None else contextlib.nullcontext()
        with deferred:
            self._write_cards(pending, report, progress)
            if progress:
                progress(total, total, "")
            self._orphans(module, check, report)
        report.unread = {name: items for name, items in sorted(self._unread_seen.items()) if items}
        if code_index is not None:
            self._finish_index(code_index, report)
        self.save_caches()
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _write_cards(self, pending: list, report: MapReport, progress: Progress | None) -> None:
        total = len(pending)
        for index, (mod, source_hash, old, parsed) in enumerate(pending):
            if progress:
                progress(index, total, mod.name)
            generated = self.render(mod, source_hash, {})
            try:
                self.write_card(mod.name, generated)
            except BrainError as exc:  # e.g. a How to use section holding NUL bytes: say so, go on
                report.errors[mod.name] = exc.message
                continue
            report.written.append(mod.name)

    def _orphans(self, module: str | None, check: bool, report: MapReport) -> None:
        """Cards whose module is gone: listed, and deleted when nobody wrote in them."""
        if not module:
            known = set(report.modules)
            for name in self.existing_cards():
                if name in known:
                    continue
                report.orphans.append(name)
                if check:
                    continue
                doc = self.read_card_doc(name)
                parsed = parse_card(doc.text if doc is not None else "")
                if doc is not None and not parsed.human_written and parsed.intact:
                    try:  # only the version read: a How to use written meanwhile keeps the card
                        self.brain.memory.delete(card_rel_path(name), expected_hash=doc.hash)
                    except (Conflict, NotFound):
                        continue
                    self.brain.commit_memory([card_rel_path(name)], writer=None, reason="module gone",
                                             action="delete")
                    report.removed.append(name)

    def save_caches(self) -> None:
        try:
            if self._stat_dirty and self._stat_cache is not None:
                keep = {f.path for f in self.files()} if self._files is not None else None
                cache = {k: v for k, v in self._stat_cache.items() if keep is None or k in keep}
                atomic_write_bytes(self.cache_dir / "files.json", json.dumps(cache, separators=(",", ":"), sort_keys=True)
                                   .encode("utf-8"), durable=False, private=True)
                self._stat_dirty = False
            if self._modules is not None and self._layout_dirty:
                self._save_layout()
                self._layout_dirty = False
        except OSError:
            pass

    # -- the code index, built in the same pass ----------------------------------------------
    def _code_index(self):
        """The search index whose code tables `brain map` keeps current (None when search is off)."""
        if not self.brain.settings.get("search.enabled"):
            return None
        return self.brain.index

    def _refresh_index(self, index, plan, rows, progress: Progress | None) -> dict:
        """The code and function tables brought up to date: from ``rows`` the read pass made, the rest read here."""
        started = time.perf_counter()
        stats = index.refresh_code(progress=progress, indexed=rows, plan=plan)
        return {"files": stats["files"], "changed": stats["changed"], "removed": stats["removed"],
                "functions": stats.get("functions", 0), "seconds": round(time.perf_counter() - started, 3)}

    def _finish_index(self, index, report: MapReport) -> None:
        """After the cards: the memory documents and the graph, so the first task boot finds nothing to do."""
        from ..search.graph import update_graph

        started = time.perf_counter()
        index.refresh_memory(quick=index.db.execute("SELECT 1 FROM docs LIMIT 1").fetchone() is not None)
        report.index["graph"] = update_graph(index).get("work", "")
        report.index["seconds"] = round(report.index["seconds"] + time.perf_counter() - started, 3)

    # -- the last layout, for fast staleness checks at boot --------------------------------
    def _save_layout(self) -> None:
        layout = {
            "version": EXTRACTOR_VERSION,
            "globs": self.globs,
            "split": list(self.split),
            "folders": self._folders,
            "modules": {m.name: {"kind": m.kind, "files": list(m.files), "other": list(m.other), "package": m.package}
                        for m in self._modules or []},
            "dotted": self.dotted(),
        }
        atomic_write_bytes(self.cache_dir / "layout.json", json.dumps(layout, separators=(",", ":"), sort_keys=True)
                           .encode("utf-8"), durable=False, private=True)

    def load_layout(self) -> bool:
        """Adopt the last saved layout when no folder changed since; False means discover again."""
        try:
            layout = json.loads((self.cache_dir / "layout.json").read_bytes())
        except (OSError, ValueError):
            return False
        if layout.get("version") != EXTRACTOR_VERSION or layout.get("globs") != self.globs or layout.get("split") != list(self.split):
            return False
        folders = layout.get("folders") or {}
        if not folders:
            return False
        repo = str(self.repo)
        for folder, mtime in folders.items():
            try:
                if os.stat(os.path.join(repo, folder) if folder else repo).st_mtime_ns != mtime:
                    return False
            except OSError:
                return False
        modules = []
        files: list[FileInfo] = []
        for name, item in sorted(layout.get("modules", {}).items()):
            modules.append(Module(name, item["kind"], tuple(item["files"]), tuple(item["other"]), item.get("package")))
            for path in item["files"]:
                try:
                    st = os.stat(os.path.join(repo, path))
                except OSError:
                    return False
                files.append(FileInfo(path, st.st_size, st.st_mtime_ns))
            files.extend(FileInfo(p, 0, 0) for p in item["other"])
        self._modules = modules
        self._files = sorted(files, key=lambda f: f.path)
        self._folders = folders
        self._layout_dirty = False
        if isinstance(layout.get("dotted"), dict):
            self._dotted = layout["dotted"]
        return True
