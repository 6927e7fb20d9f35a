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
import json
import os
import time
from pathlib import Path
from collections.abc import Callable

from ..errors import BrainError, Conflict, NotFound
from ..memory.files import atomic_write_bytes
from ..records import field, record
from ..trees import walk as walk_tree
from .contracts import contract_rel_path
from .discovery import FileInfo, Module, card_rel_path, scan
from .grouping import discover
from .markers import BEGIN, SOURCE_RE, join_card, parse_card
from .project import ProjectInfo
from .hashing import EXTRACTOR_VERSION, Hashing
from .reading import read_pass
from .resolution import Resolution

__all__ = ["Mapper", "MapReport", "EXTRACTOR_VERSION", "Progress"]


Progress = Callable[[int, int, str], None]


@record
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
MAX_GIT_PATHS = 2000  # a layout notes git's answer only when it lists at most this many paths
PARALLEL_MIN_FILES = 150  # below this, worker processes cost more than they save


class Mapper(Resolution, Hashing):
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
        self._git: dict | None = None  # HEAD and git status paths when the layout was discovered
        self._git_state = None  # the git status this run read before discovering the layout (None: none read)
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
        self._discover()

    def _discover(self) -> None:
        from ..search.gitstamp import git_state

        self._info_map = None  # built from the layout being replaced
        self._git_state = git_state(self.repo)  # before the scan: a file added meanwhile makes the next check differ
        self._git = self._git_note(self._git_state)
        folders: dict[str, int] = {}
        self._files = scan(self.repo, prune=not self.globs, folders=folders)
        self._folders = folders
        self._modules = discover(self._files, self.globs, split_bytes=self.split[0], split_min_bytes=self.split[1])
        self._layout_dirty = True

    def files(self) -> list[FileInfo]:
        self._ensure_layout()
        if self._files is None:
            self._stat_layout_files()
        return self._files

    def _stat_layout_files(self) -> None:
        """The saved layout's files with their current size and mtime, stat-ed only when asked for: a
        boot that only asks which module owns a path never stats the mapped files. A file gone since
        (its folder's mtime would normally have said so) means the layout is discovered again."""
        repo = str(self.repo)
        files: list[FileInfo] = []
        for module in self._modules:
            for path in module.files:
                try:
                    st = os.stat(os.path.join(repo, path))
                except OSError:
                    self._discover()
                    return
                files.append(FileInfo(path, st.st_size, st.st_mtime_ns))
            files.extend(FileInfo(p, 0, 0) for p in module.other)
        self._files = sorted(files, key=lambda f: f.path)

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
        processes (``reading.read_pass``): card facts kept for ``facts``, index rows yielded in path order
        (None when there are no worker processes to run it in)."""
        workers = self.workers or (os.cpu_count() or 1)
        if workers < 2:
            return None  # no worker processes: the cards and the index read their files themselves
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

            plan = self._guarded(report, lambda: plan_code(code_index.db, self.repo))
            code_index = code_index if plan is not None else None
        reads = plan.reads() if plan is not None else []
        rows = None
        if (len(pending) > 1 and len(files) >= PARALLEL_MIN_FILES) or len(reads) >= PARALLEL_MIN_FILES:
            rows = self._read_pass(files if len(pending) > 1 and len(files) >= PARALLEL_MIN_FILES else [], plan, progress)
        if code_index is not None:  # the read pass draws the bar when it runs; else the index build does
            report.index = self._guarded(report, lambda: self._refresh_index(code_index, plan, rows or iter(()),
                                                                            None if rows else progress))
            code_index = code_index if report.index is not None and "error" not in report.index else None
        rows = rows or iter(())
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
            self._guarded(report, lambda: self._finish_index(code_index, report))
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

    @staticmethod
    def _guarded(report: MapReport, step):
        """``step()``, or None with the reason in ``report.index`` when index.db cannot be used (damaged, or
        held by another writer past its busy timeout): the index is derived, the cards are what a map is
        for, and the next search or boot heals or refreshes the index itself."""
        import sqlite3

        from ..search.index import is_corruption

        try:
            return step()
        except sqlite3.Error as exc:
            why = "damaged" if is_corruption(exc) else "busy"
            import logging  # lazy: a boot that reads cards never logs

            logging.getLogger("brain.cards").warning("the code index was not built (%s: %s)", why, exc)
            report.index = {"error": f"the search index is {why} ({exc}); the next search or task boot "
                                     "brings it up to date"}
            return None

    def _refresh_index(self, index, plan, rows, progress: Progress | None) -> dict:
        """The code and function tables brought up to date: from ``rows`` the read pass made, the rest read here."""
        started = time.perf_counter()
        # the git status read for the layout, before the index's walk: its "before" (not one more git status)
        stats = index.refresh_code(progress=progress, indexed=rows, plan=plan, git_before=self._git_state)
        return {"files": stats["files"], "changed": stats["changed"], "removed": stats["removed"],
                "read": stats.get("read", 0), "functions": stats.get("functions", 0),
                "seconds": round(time.perf_counter() - started, 3)}

    def _finish_index(self, index, report: MapReport) -> None:
        """After the cards: the memory documents and the graph, so the first task boot finds nothing to do."""
        from ..search.graph import update_graph

        started = time.perf_counter()
        index.refresh_memory(quick=index.db.execute("SELECT 1 FROM docs LIMIT 1").fetchone() is not None)
        report.index["graph"] = update_graph(index).get("work", "")
        index.merge_segments()  # the rows written in many small transactions, read by each task boot: one segment
        report.index["seconds"] = round(report.index["seconds"] + time.perf_counter() - started, 3)

    # -- the last layout, for fast staleness checks at boot --------------------------------
    def _save_layout(self) -> None:
        layout = {
            "version": EXTRACTOR_VERSION,
            "globs": self.globs,
            "split": list(self.split),
            "folders": self._folders,
            "git": self._git,
            "modules": {m.name: {"kind": m.kind, "files": list(m.files), "other": list(m.other), "package": m.package}
                        for m in self._modules or []},
            "dotted": self.dotted(),
        }
        atomic_write_bytes(self.cache_dir / "layout.json", json.dumps(layout, separators=(",", ":"), sort_keys=True)
                           .encode("utf-8"), durable=False, private=True)

    @staticmethod
    def _git_note(state) -> dict | None:
        """What a layout keeps of a ``git status`` (HEAD, each listed path's letters), or None."""
        if state is None or not state.head or len(state.paths) > MAX_GIT_PATHS:
            return None
        return {"head": state.head, "paths": sorted(map(list, state.paths.items()))}

    def _same_git_listing(self, noted) -> bool:
        """Whether the ``git status`` this boot already read (never one more) shows the tree the layout
        was discovered from: the same HEAD and the same changed, staged and untracked paths with the same
        status letters. In a git work tree the layout lists git's tracked and untracked-not-ignored files,
        so no file was added or removed since, and no folder needs a stat."""
        if not isinstance(noted, dict) or not noted.get("head"):
            return False
        from ..search.gitstamp import known_git_state

        state = known_git_state(self.repo)
        return (state is not None and state.head == noted["head"]
                and state.paths == {path: letters for path, letters in noted.get("paths") or ()})

    def load_layout(self) -> bool:
        """Adopt the last saved layout when git's answer of this boot matches the one noted with it, or
        else no folder changed since; False means discover again."""
        from ..search.gitstamp import known_git_state

        try:
            layout = json.loads((self.cache_dir / "layout.json").read_bytes())
        except (OSError, ValueError):
            return False
        if layout.get("version") != EXTRACTOR_VERSION or layout.get("globs") != self.globs or layout.get("split") != list(self.split):
            return False
        folders = layout.get("folders") or {}
        if not folders:
            return False
        self._git = layout.get("git")
        self._layout_dirty = False
        if not self._same_git_listing(self._git):
            repo = str(self.repo)
            for folder, mtime in folders.items():
                try:
                    if os.stat(os.path.join(repo, folder) if folder else repo).st_mtime_ns != mtime:
                        return False
                except OSError:
                    return False
            # no file was added or removed since the layout was discovered: git's answer of this boot
            # (read before these stats) describes the same tree, and the next boot can compare with it
            self._git = self._git_note(known_git_state(self.repo))
            self._layout_dirty = self._git is not None
        modules = [Module(name, item["kind"], tuple(item["files"]), tuple(item["other"]), item.get("package"))
                   for name, item in sorted(layout.get("modules", {}).items())]
        self._modules = modules
        self._files = None  # stat-ed on first use (files()); a file removed changed git's answer or its folder's mtime
        self._folders = folders
        if isinstance(layout.get("dotted"), dict):
            self._dotted = layout["dotted"]
        return True
