"""Project-level facts every card may use: declared dependencies and declared entry points.

Read from pyproject.toml (`[project]`), setup.cfg (`[options]`), requirements*.txt and
the root package.json. The bytes of these files are part of every card's source hash,
so a change to them refreshes the cards that show them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from ..errors import InputTooLarge
from ..inputs import loads_json, read_repository_file
from ..lazyre import lazy
from ..records import field, record

__all__ = ["ProjectInfo", "load_project", "PROJECT_FILES", "normalize_dist", "dist_for_import"]

PROJECT_FILES = ("pyproject.toml", "setup.cfg", "requirements.txt", "requirements-dev.txt", "package.json", "tsconfig.json")

# import name -> distribution name, for the well-known mismatches
_ALIASES = {
    "yaml": "pyyaml", "pil": "pillow", "sklearn": "scikit-learn", "bs4": "beautifulsoup4", "dateutil": "python-dateutil",
    "jwt": "pyjwt", "attr": "attrs", "cv2": "opencv-python", "google": "protobuf", "magic": "python-magic",
    "mysqldb": "mysqlclient", "dotenv": "python-dotenv", "git": "gitpython", "serial": "pyserial", "zmq": "pyzmq",
    "jose": "python-jose", "multipart": "python-multipart", "psycopg2": "psycopg2-binary", "markdown_it": "markdown-it-py",
    "tree_sitter_typescript": "tree-sitter-typescript", "tree_sitter": "tree-sitter", "argon2": "argon2-cffi",
    "memcache": "python-memcached", "pymemcache": "pymemcache", "docutils": "docutils", "geoip2": "geoip2",
    "backports": "backports.zoneinfo", "zoneinfo": "backports.zoneinfo", "oracledb": "oracledb", "cx_oracle": "cx-oracle",
}
_REQ_NAME = lazy(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_URL_LINE = lazy(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # http://…, git+https://…, file://… (not `httpcore`)


def normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@record
class ProjectInfo:
    declared: dict[str, str] = field(default_factory=dict)          # normalized dist -> requirement text
    entry_points: list[tuple[str, str, str]] = field(default_factory=list)  # (name, "pkg.mod:attr", group)
    top_packages: set[str] = field(default_factory=set)              # the project's own top-level import names

    def dist_for_import(self, top: str) -> tuple[str, str | None]:
        return dist_for_import(top, self.declared)


def dist_for_import(top: str, declared: dict[str, str]) -> tuple[str, str | None]:
    """(distribution name, declared requirement or None) for a top-level import name."""
    key = normalize_dist(top)
    candidates = [key, normalize_dist(_ALIASES.get(top.lower(), key)), "python-" + key, key + "-python", "py" + key]
    for cand in candidates:
        if cand in declared:
            return cand, declared[cand]
    return normalize_dist(_ALIASES.get(top.lower(), top)), None


def _requirements(lines: list[str], declared: dict[str, str]) -> None:
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-") or _URL_LINE.match(line):
            continue  # options (-r, -e, --index-url) and bare URLs name no distribution
        match = _REQ_NAME.match(line)
        if match:
            declared.setdefault(normalize_dist(match.group(1)), " ".join(line.split()))


def _text(path: Path) -> str | None:
    """A manifest's text, or None when it is absent, a link, not a regular file, or past the bound of
    files a clone ships (inputs.MAX_REPOSITORY_FILE): a card shows no dependency rather than hang."""
    try:
        data = read_repository_file(path)
    except InputTooLarge:
        return None
    return None if data is None else data.decode("utf-8", errors="replace")


def load_project(repo: Path) -> ProjectInfo:
    info = ProjectInfo()
    pyproject = _text(repo / "pyproject.toml")
    if pyproject is not None:
        try:
            import tomllib

            data = tomllib.loads(pyproject)
        except Exception:  # noqa: BLE001 - a broken pyproject shows as no declared dependency
            data = {}
        project = data.get("project") if isinstance(data.get("project"), dict) else {}
        deps = project.get("dependencies") or []
        if isinstance(deps, list):
            _requirements([d for d in deps if isinstance(d, str)], info.declared)
        optional = project.get("optional-dependencies") or {}
        if isinstance(optional, dict):
            for group in sorted(optional):
                if isinstance(optional[group], list):
                    _requirements([d for d in optional[group] if isinstance(d, str)], info.declared)
        for group_key, group in (("scripts", "console script"), ("gui-scripts", "gui script")):
            table = project.get(group_key) or {}
            if isinstance(table, dict):
                for name, target in sorted(table.items()):
                    if isinstance(target, str):
                        info.entry_points.append((name, target.strip(), group))
        eps = project.get("entry-points") or {}
        if isinstance(eps, dict):
            for group in sorted(eps):
                if isinstance(eps[group], dict):
                    for name, target in sorted(eps[group].items()):
                        if isinstance(target, str):
                            info.entry_points.append((name, target.strip(), f"entry point `{group}`"))
        poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        if isinstance(poetry, dict):
            for name in sorted((poetry.get("dependencies") or {})):
                if name.lower() != "python":
                    info.declared.setdefault(normalize_dist(name), name)
            for name, target in sorted((poetry.get("scripts") or {}).items()):
                if isinstance(target, str):
                    info.entry_points.append((name, target.strip(), "console script"))
    setup_cfg = _text(repo / "setup.cfg")
    if setup_cfg is not None:
        import configparser  # lazy: only a tree with a setup.cfg reads one

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg)
        except configparser.Error:
            parser = None
        if parser is not None:
            if parser.has_option("options", "install_requires"):
                _requirements(parser.get("options", "install_requires").splitlines(), info.declared)
            if parser.has_section("options.extras_require"):
                for _, value in sorted(parser.items("options.extras_require")):
                    _requirements(value.splitlines(), info.declared)
            if parser.has_section("options.entry_points"):
                for group, value in sorted(parser.items("options.entry_points")):
                    label = "console script" if group == "console_scripts" else f"entry point `{group}`"
                    for line in value.splitlines():
                        if "=" in line:
                            name, _, target = line.partition("=")
                            info.entry_points.append((name.strip(), target.strip(), label))
    for name in ("requirements.txt", "requirements-dev.txt"):
        text = _text(repo / name)
        if text is not None:
            _requirements(text.splitlines(), info.declared)
    package_json = _text(repo / "package.json")
    if package_json is not None:
        try:
            pkg = loads_json(package_json)
        except (json.JSONDecodeError, ValueError):
            pkg = {}
        if isinstance(pkg, dict):
            for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
                deps = pkg.get(key)
                if isinstance(deps, dict):
                    for name, version in sorted(deps.items()):
                        info.declared.setdefault("npm:" + name, f"{name}@{version}")
    return info


STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "_typeshed"}  # _typeshed: type-checking only
