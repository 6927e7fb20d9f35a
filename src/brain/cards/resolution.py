"""How `brain map` resolves names to modules: file owners, Python dotted names, npm packages and tsconfig
paths, and the manifests and import resolvers of the languages behind the extractor interface.

A mixin of ``Mapper`` (``brain.cards.mapper``): it reads the run's layout (``files``, ``modules``)
and caches its tables on the mapper, built once per run.
"""

from __future__ import annotations

import posixpath

from ..inputs import loads_json
from .discovery import Module
from .grouping import python_names
from .project import ProjectInfo, load_project
from .reading import read_capped

__all__ = ["Resolution"]


def _strip_jsonc(text: str) -> str:
    """tsconfig.json allows comments and trailing commas."""
    import re

    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return re.sub(r",(\s*[}\]])", r"\1", text)


class Resolution:
    """Name and import resolution of one map run (mixed into ``Mapper``)."""

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
