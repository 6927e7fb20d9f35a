"""C and C++ build manifests: what a project's build files say it is, read as text and never run.

Kept apart from the C extractor (c.py) because it is another concept with another input: c.py reads one
source file with a grammar; this module reads build files with a few linear patterns. ``CMakeLists.txt``
gives the project, its libraries and executables and the packages it finds; ``configure.ac``,
``Makefile.am`` and ``meson.build`` the same for Autotools and Meson projects; ``vcpkg.json`` and
``conanfile.txt`` the packages it requires. c.py exposes ``MANIFEST_PARSERS`` from here (the language
registry looks them up on the language's module).
"""

from __future__ import annotations

import json
import posixpath
import re

__all__ = ["MANIFEST_PARSERS", "parse_cmake", "parse_vcpkg", "parse_conan", "parse_configure_ac",
           "parse_makefile_am", "parse_meson"]


_CMAKE_COMMENT = re.compile(r"#[^\n]*")
_CMAKE_CALL = re.compile(r"\b(project|add_library|add_executable|find_package|pkg_check_modules|FetchContent_Declare|"
                         r"CPMAddPackage|add_subdirectory)\s*\(\s*([^)\s]*)([^)]*)\)", re.I)


def parse_cmake(raw: bytes, path: str) -> dict:
    """Manifest facts of a CMakeLists.txt: project, libraries, executables, packages found (never run)."""
    text = _CMAKE_COMMENT.sub("", raw.decode("utf-8", errors="replace"))
    project = ""
    version = ""
    declared: dict[str, str] = {}
    entry_points: list[list[str]] = []
    internal: list[str] = []
    members: list[str] = []
    for command, first, rest in _CMAKE_CALL.findall(text):
        command = command.lower()
        first = first.strip('"')
        if not first or first.startswith("${"):
            continue
        if command == "project" and not project:
            project = first
            m = re.search(r"\bVERSION\s+([\w.]+)", rest)
            version = m.group(1) if m else ""
        elif command == "add_library":
            kind = "interface library" if "INTERFACE" in rest.split() else "library"
            if "ALIAS" not in rest.split() and "IMPORTED" not in rest.split():
                internal.append(f"{kind} `{first}` (CMake target)")
        elif command == "add_executable":
            if "IMPORTED" not in rest.split():
                entry_points.append([first, "", "CMake executable"])
        elif command in ("find_package", "pkg_check_modules"):
            declared.setdefault(first, f"{first} (find_package)" if command == "find_package" else f"{first} (pkg-config)")
        elif command in ("fetchcontent_declare", "cpmaddpackage"):
            declared.setdefault(first, f"{first} (fetched)")
        elif command == "add_subdirectory":
            members.append(first)
    title = f"CMake project `{project}`" + (f" {version}" if version else "") if project else "CMake directory"
    return {"status": "ok", "manifest": {"language": "c", "title": title, "name": project, "declared": declared,
                                         "entry_points": entry_points, "members": members, "internal": internal}}


def parse_vcpkg(raw: bytes, path: str) -> dict:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return {"status": "unread", "reason": f"not valid JSON ({type(exc).__name__})"}
    declared = {}
    deps = data.get("dependencies") if isinstance(data, dict) else None
    for dep in deps if isinstance(deps, list) else []:
        name = dep if isinstance(dep, str) else dep.get("name") if isinstance(dep, dict) else None
        if isinstance(name, str):
            declared[name] = f"{name} (vcpkg)"
    name = data.get("name", "") if isinstance(data, dict) and isinstance(data.get("name"), str) else ""
    return {"status": "ok", "manifest": {"language": "c", "title": f"vcpkg manifest `{name}`" if name else "vcpkg manifest",
                                         "name": name, "declared": declared, "entry_points": [], "members": []}}


def parse_conan(raw: bytes, path: str) -> dict:
    declared = {}
    section = ""
    for line in raw.decode("utf-8", errors="replace").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and section in ("requires", "tool_requires", "build_requires"):
            name = line.split("/", 1)[0]
            declared[name] = f"{line} (conan)"
    return {"status": "ok", "manifest": {"language": "c", "title": "Conan requirements", "name": "", "declared": declared,
                                         "entry_points": [], "members": []}}


_AC_INIT = re.compile(r"\bAC_INIT\(\s*\[?([^\],)\n]*)\]?\s*(?:,\s*\[?([^\],)\n]*)\]?)?")
_AC_PKG = re.compile(r"\bPKG_CHECK_MODULES\(\s*\[?\w+\]?\s*,\s*\[?([^\],)\n]*)")
_AC_LIB = re.compile(r"\bAC_(?:CHECK|SEARCH)_LIBS?\(\s*\[?([\w.+-]+)")
_AC_WITH = re.compile(r"\bAC_ARG_WITH\(\s*\[?([\w.+-]+)")
_VERSION_LIKE = re.compile(r"^v?\d[\w.+-]*$")


def _m4_comments_out(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("dnl", "#")))


def parse_configure_ac(raw: bytes, path: str) -> dict:
    """Manifest facts of an autoconf configure.ac: the package name and version (AC_INIT), the libraries it
    checks for (PKG_CHECK_MODULES, AC_CHECK_LIB, AC_SEARCH_LIBS) and its --with options (never run)."""
    text = _m4_comments_out(raw.decode("utf-8", errors="replace"))
    init = _AC_INIT.search(text)
    name = init.group(1).strip() if init else ""
    version = (init.group(2) or "").strip() if init else ""
    declared: dict[str, str] = {}
    for spec in _AC_PKG.findall(text):
        for word in spec.split():
            if re.match(r"^[A-Za-z][\w.+-]*$", word) and not _VERSION_LIKE.match(word):
                declared.setdefault(word, f"{word} (pkg-config)")
    for lib in _AC_LIB.findall(text):
        declared.setdefault(lib, f"{lib} (library check)")
    for opt in _AC_WITH.findall(text):
        declared.setdefault(opt, f"{opt} (--with-{opt})")
    title = (f"Autotools project `{name}`" + (f" {version}" if _VERSION_LIKE.match(version) else "")) if name else "Autotools project"
    return {"status": "ok", "manifest": {"language": "c", "title": title, "name": name, "declared": declared,
                                         "entry_points": [], "members": []}}


_AM_ASSIGN = re.compile(r"^([A-Za-z_][\w@]*)[ \t]*\+?=[ \t]*(.*)$", re.M)


def parse_makefile_am(raw: bytes, path: str) -> dict:
    """Manifest facts of an automake Makefile.am: libraries, programs (entry points, with their first source)
    and installed headers, which are the project's public headers (never run)."""
    text = raw.decode("utf-8", errors="replace").replace("\\\n", " ")
    values: dict[str, list[str]] = {}
    for var, value in _AM_ASSIGN.findall(text):
        values.setdefault(var, []).extend(w for w in value.split("#", 1)[0].split() if not w.startswith("$"))
    internal = [f"library `{lib}` (Automake target)" for var in ("lib_LTLIBRARIES", "lib_LIBRARIES") for lib in values.get(var, [])]
    entry_points = []
    for var in ("bin_PROGRAMS", "sbin_PROGRAMS"):
        for prog in values.get(var, []):
            sources = [s for s in values.get(re.sub(r"[^\w@]", "_", prog) + "_SOURCES", []) if s.endswith((".c", ".cc", ".cpp"))]
            entry_points.append([prog, sources[0] if sources else "", "Automake program"])
    folder = path.rpartition("/")[0]
    headers = [posixpath.normpath(posixpath.join(folder, h)) for var, words in values.items()
               if var.endswith("include_HEADERS") and not var.startswith("noinst") for h in words]
    return {"status": "ok", "manifest": {"language": "c", "title": "", "name": "", "declared": {},
                                         "entry_points": entry_points, "members": [], "internal": internal,
                                         "public_files": headers}}


_MESON_CALL = re.compile(r"\b(project|library|shared_library|static_library|both_libraries|executable|dependency|install_headers)"
                         r"\s*\(\s*'([^'\n]*)'([^)]*)")


def parse_meson(raw: bytes, path: str) -> dict:
    """Manifest facts of a meson.build: project name and version, libraries, executables, dependencies and
    installed headers (never run)."""
    text = "\n".join(line.split("#", 1)[0] for line in raw.decode("utf-8", errors="replace").splitlines())
    name = version = ""
    declared: dict[str, str] = {}
    entry_points: list[list[str]] = []
    internal: list[str] = []
    headers: list[str] = []
    folder = path.rpartition("/")[0]
    for call, first, rest in _MESON_CALL.findall(text):
        if call == "project" and not name:
            name = first
            m = re.search(r"version\s*:\s*'([^'\n]*)'", rest)
            version = m.group(1) if m else ""
        elif call.endswith("library") or call == "both_libraries":
            internal.append(f"library `{first}` (meson target)")
        elif call == "executable":
            entry_points.append([first, "", "meson executable"])
        elif call == "dependency":
            declared.setdefault(first, f"{first} (meson dependency)")
        elif call == "install_headers":
            headers.extend(posixpath.normpath(posixpath.join(folder, h)) for h in [first, *re.findall(r"'([^'\n]+\.h\w*)'", rest)])
    title = (f"Meson project `{name}`" + (f" {version}" if version else "")) if name else ""
    return {"status": "ok", "manifest": {"language": "c", "title": title, "name": name, "declared": declared,
                                         "entry_points": entry_points, "members": [], "internal": internal,
                                         "public_files": headers}}


MANIFEST_PARSERS = {"CMakeLists.txt": parse_cmake, "vcpkg.json": parse_vcpkg, "conanfile.txt": parse_conan,
                    "configure.ac": parse_configure_ac, "Makefile.am": parse_makefile_am, "meson.build": parse_meson}
