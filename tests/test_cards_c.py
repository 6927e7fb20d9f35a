"""C and C++ cards on small libraries the test builds: a CMake C library with public headers in
include/, and a header-only C++ library with a class that has private members."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("tree_sitter_c")
pytest.importorskip("tree_sitter_cpp")

from card_helpers import card, write  # noqa: E402

from brain.cards.extract import extract_file  # noqa: E402
from brain.cards.languages.base import Symbol  # noqa: E402

CMAKE = '''cmake_minimum_required(VERSION 3.16)
project(calc VERSION 1.2.0 LANGUAGES C)
find_package(ZLIB REQUIRED)
add_library(calc src/calc.c)
target_include_directories(calc PUBLIC include)
add_executable(calc-cli tools/cli.c)
# add_executable(commented-out x.c)
'''

CALC_H = '''#ifndef CALC_CALC_H
#define CALC_CALC_H

#include <stddef.h>

/* The library version. */
#define CALC_VERSION 120

/* Clamp x to [lo, hi]. */
#define CALC_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

/* A running total. */
typedef struct calc_acc {
    double sum;
    size_t count;
} calc_acc;

/* How a value is rounded. */
enum calc_mode { CALC_FLOOR, CALC_CEIL };

/* Adds a value to the total. */
CALC_API void calc_add(calc_acc *acc, double value);

/* The mean of what was added, or 0. */
double calc_mean(const calc_acc *acc);

extern int calc_debug;

#endif
'''

CALC_C = '''#include "calc/calc.h"
#include "internal.h"

int calc_debug = 0;

static double square(double x) { return x * x; }

void calc_add(calc_acc *acc, double value) {
    acc->sum += value;
    acc->count++;
}

double calc_mean(const calc_acc *acc) {
    return acc->count ? acc->sum / acc->count : 0;
}
'''

INTERNAL_H = '''#ifndef INTERNAL_H
#define INTERNAL_H
int internal_helper(void);
#endif
'''

CLI_C = '''#include <stdio.h>
#include "calc/calc.h"

int main(int argc, char **argv) {
    calc_acc acc = {0};
    calc_add(&acc, 1.0);
    printf("%f\\n", calc_mean(&acc));
    return 0;
}
'''

SHAPE_HPP = '''#pragma once
#include <string>

namespace geo {

/// A closed figure.
class Shape {
 public:
  /// Builds a named shape.
  explicit Shape(std::string name);
  virtual ~Shape() = default;
  /// Its area in square units.
  virtual double area() const = 0;
  const std::string& name() const { return name_; }

 protected:
  void rename(std::string name);

 private:
  std::string name_;
  int cache_ = 0;
};

/// A point in the plane.
struct Point {
  double x;
  double y;
};

/// The larger of two values.
template <typename T>
T larger(T a, T b) {
  return a < b ? b : a;
}

namespace detail {
inline int hidden_helper() { return 1; }
}  // namespace detail

}  // namespace geo
'''


def test_cmake_c_library_card(brain):
    repo = brain.repo
    write(repo, "CMakeLists.txt", CMAKE)
    write(repo, "include/calc/calc.h", CALC_H)
    write(repo, "src/calc.c", CALC_C)
    write(repo, "src/internal.h", INTERNAL_H)
    write(repo, "tools/cli.c", CLI_C)
    write(repo, "vcpkg.json", '{"name": "calc", "dependencies": ["zlib", {"name": "cjson"}]}')
    report = brain.map()
    assert report.modules == ["."]
    root = card(brain, ".")
    assert "CMake project `calc` 1.2.0 in `./`." in root
    assert "### `include/calc/calc.h`" in root
    assert "- `typedef struct calc_acc {…} calc_acc` — A running total." in root
    assert "  - `double sum`" in root and "  - `size_t count`" in root
    assert "- `enum calc_mode` — How a value is rounded." in root and "  - `CALC_FLOOR`" in root
    assert "- `void calc_add(calc_acc *acc, double value)` — Adds a value to the total." in root
    assert "- `double calc_mean(const calc_acc *acc)` — The mean of what was added, or 0." in root
    assert "- `extern int calc_debug`" in root
    assert "- `#define CALC_VERSION 120` — The library version." in root
    assert "- `#define CALC_CLAMP(x, lo, hi)` — Clamp x to [lo, hi]." in root
    exposes = root.split("## Exposes")[1].split("## Entry points")[0]
    for private in ("square", "internal_helper", "CALC_CALC_H", "INTERNAL_H", "src/calc.c"):
        assert private not in exposes
    assert "- `calc-cli` (CMake executable)" in root and "- `main()` (`tools/cli.c`)" in root
    assert "- library `calc` (CMake target)" in root
    assert "- declared in `CMakeLists.txt`: `ZLIB (find_package)`" in root
    assert "- declared in `vcpkg.json`: `zlib (vcpkg)`, `cjson (vcpkg)`" in root
    assert "commented-out" not in root


def test_c_symbols_have_line_ranges():
    facts = extract_file("src/calc.c", CALC_C.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["square"] == Symbol("square", "function", 6, 6, False, "static double square(double x)")
    assert by["calc_add"] == Symbol("calc_add", "function", 8, 11, False, "void calc_add(calc_acc *acc, double value)")
    assert facts["exports"] == [] and facts["public"] is False
    assert facts["imports"] == ["calc/calc.h", "internal.h"]
    header = extract_file("include/calc/calc.h", CALC_H.encode(), dotted=None, max_bytes=10**6)
    hs = {s.qualname: s for s in header["symbols"]}
    assert hs["calc_acc"].kind == "struct" and (hs["calc_acc"].start, hs["calc_acc"].end) == (13, 16)
    assert hs["calc_add"].exported is True and hs["CALC_CLAMP"].kind == "macro" and header["public"] is True


def test_header_only_cpp_library_card(brain):
    repo = brain.repo
    write(repo, "CMakeLists.txt", "project(geo CXX)\nadd_library(geo INTERFACE)\n")
    write(repo, "include/geo/shape.h", SHAPE_HPP)  # a .h written in C++: read with the C++ grammar
    brain.map()
    root = card(brain, ".")
    assert "### `include/geo/shape.h`" in root
    assert "- `class Shape` — A closed figure." in root
    assert "  - `explicit Shape(std::string name)` — Builds a named shape." in root
    assert "  - `virtual double area() const = 0` — Its area in square units." in root
    assert "  - `const std::string& name() const`" in root
    assert "- `struct Point` — A point in the plane." in root and "  - `double x`" in root
    assert "- `template <typename T> T larger(T a, T b)` — The larger of two values." in root
    exposes = root.split("## Exposes")[1].split("## Dependencies")[0]
    for private in ("name_", "cache_", "rename", "hidden_helper"):
        assert private not in exposes
    assert "- interface library `geo` (CMake target)" in root


def test_cpp_symbols_have_line_ranges():
    facts = extract_file("include/geo/shape.hpp", SHAPE_HPP.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname: s for s in facts["symbols"]}
    assert by["geo.Shape"].kind == "class" and (by["geo.Shape"].start, by["geo.Shape"].end) == (7, 22)
    assert by["geo.Shape.area"] == Symbol("geo.Shape.area", "method", 13, 13, True, "virtual double area() const = 0")
    assert by["geo.Shape.name_"].exported is False and by["geo.Shape.rename"].exported is False
    assert by["geo.larger"] == Symbol("geo.larger", "function", 31, 34, True, "template <typename T> T larger(T a, T b)")
    assert by["geo.detail.hidden_helper"].exported is False
    assert [e["name"] for e in facts["exports"]] == ["geo::Shape", "geo::Point", "geo::larger"]


FMTLIKE_H = r'''#ifndef FMTLIKE_FORMAT_H_
#define FMTLIKE_FORMAT_H_

#include <string>
#if FMTLIKE_HAS_INCLUDE(<string_view>) && \
    (FMTLIKE_CPLUSPLUS >= 201703L || defined(_LIBCPP_VERSION))
#  include <string_view>
#endif

FMTLIKE_BEGIN_NAMESPACE
namespace detail {
template <typename To, typename From, FMTLIKE_ENABLE_IF(sizeof(To) == sizeof(From))>
FMTLIKE_CONSTEXPR20 auto bit_cast(const From& from) -> To {
  auto to = To();
  std::memcpy(static_cast<void*>(&to), &from, sizeof(to));
  return to;
}
inline auto count_digits(unsigned n) -> int { return n < 10 ? 1 : 1 + count_digits(n / 10); }
struct styled_arg { int value; };
}  // namespace detail

namespace _impl_v2 { inline int tucked_away() { return 0; } }
namespace { int file_local = 1; }

/// Formats the arguments into a string.
template <typename... T>
FMTLIKE_NODISCARD auto format(const char* fmt, T&&... args) -> std::string {
  return std::string(fmt);
}

template <typename Char> struct formatter {};
template <typename Char> struct formatter<detail::styled_arg, Char> {};

/// The digits of a number.
class digits {
 public:
  auto size() const -> int;
};
FMTLIKE_END_NAMESPACE
#endif  // FMTLIKE_FORMAT_H_
'''


def test_internal_namespaces_are_not_exposed_even_where_macros_break_the_parse(brain):
    """fmt-style headers: `detail`, `_`-prefixed and anonymous namespaces are no public API, parse errors or not."""
    write(brain.repo, "CMakeLists.txt", "project(fmtlike CXX)\nadd_library(fmtlike INTERFACE)\n")
    write(brain.repo, "include/fmtlike/format.h", FMTLIKE_H)
    brain.map()
    exposes = card(brain, ".").split("## Exposes")[1].split("## Dependencies")[0]
    assert "format(const char* fmt, T&&... args)" in exposes and "class digits" in exposes and "struct formatter" in exposes
    for private in ("bit_cast", "count_digits", "styled_arg", "tucked_away", "file_local"):
        assert private not in exposes
    facts = extract_file("include/fmtlike/format.h", FMTLIKE_H.encode(), dotted=None, max_bytes=10**6)
    by = {s.qualname.rpartition(".")[2]: s for s in facts["symbols"]}
    assert by["count_digits"].exported is False and by["digits"].exported is True


def test_hidden_ranges_follow_braces_not_comments_or_strings():
    from brain.cards.languages.c import hidden_ranges

    src = (b'namespace fmt {\nnamespace detail { int a = "}"[0]; /* } */ // }\n struct s { int b; };\n}\n'
           b'int visible;\nnamespace {\nint local;\n}\nnamespace fmt::internal::x { int c; }\n}\n')
    ranges = hidden_ranges(src)
    texts = [src[a:b] for a, b in ranges]
    assert texts[0].startswith(b"namespace detail {") and texts[0].endswith(b"struct s { int b; };\n}")
    assert texts[1] == b"namespace {\nint local;\n}" and texts[2] == b"namespace fmt::internal::x { int c; }"
    assert b"visible" not in b"".join(texts)
    # the braces of a macro definition are not the file's: a macro that opens a namespace hides nothing by itself
    macro = b"#define LIB_BEGIN_DETAIL namespace detail {\n#define LIB_END_DETAIL }\nint api_call(void);\n"
    assert hidden_ranges(macro) == []


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400) | st.text(alphabet="namespace detail{}/*\"'\n x_:", max_size=300).map(str.encode))
def test_hidden_ranges_never_fail_and_stay_in_bounds(src):
    from brain.cards.languages.c import hidden_ranges

    ranges = hidden_ranges(src)
    assert all(0 <= a < b <= len(src) for a, b in ranges)
    assert all(ranges[i][1] <= ranges[i + 1][0] for i in range(len(ranges) - 1))


def test_preprocessor_lines_keep_their_macro_names():
    """Attribute-like macros are blanked in declarations, never in the `#define`/`#ifdef` that names them."""
    src = b"#ifndef LIB_DEPRECATED\n#  define LIB_DEPRECATED [[deprecated]]\n#endif\nLIB_DEPRECATED LIB_API int old_call(void);\n"
    facts = extract_file("include/lib/lib.h", src, dotted=None, max_bytes=10**6)
    assert {s.qualname for s in facts["symbols"]} >= {"LIB_DEPRECATED", "old_call"}
    assert not facts.get("partial")


CONFIGURE_AC = '''dnl the package, its version and where to report bugs
AC_INIT([mini],[0.3.1],[https://example.invalid/issues])
AM_INIT_AUTOMAKE([foreign])
AC_PROG_CC
AC_CHECK_LIB([m], [floor])
AC_ARG_WITH([oniguruma], [AS_HELP_STRING([--with-oniguruma], [regex support])])
PKG_CHECK_MODULES([ZLIB], [zlib >= 1.2])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
'''

MAKEFILE_AM = '''lib_LTLIBRARIES = libmini.la
libmini_la_SOURCES = src/mini.c src/util.c \\
        src/util.h
include_HEADERS = src/mini.h
bin_PROGRAMS = mini
mini_SOURCES = src/main.c
'''


def test_autotools_project_card(brain):
    """A C project built by autotools (no CMake): its name, version, libraries, programs and installed headers."""
    write(brain.repo, "configure.ac", CONFIGURE_AC)
    write(brain.repo, "Makefile.am", MAKEFILE_AM)
    write(brain.repo, "src/mini.h", "/* Adds two numbers. */\nint mini_add(int a, int b);\n")
    write(brain.repo, "src/util.h", "int util_helper(void);\n")
    write(brain.repo, "src/mini.c", '#include "mini.h"\n#include "util.h"\nint mini_add(int a, int b) { return a + b; }\n')
    write(brain.repo, "src/util.c", '#include "util.h"\nint util_helper(void) { return 0; }\n')
    write(brain.repo, "src/main.c", '#include "mini.h"\nint main(void) { return mini_add(1, 2); }\n')
    report = brain.map()
    assert report.modules == ["."]
    root = card(brain, ".")
    assert "Autotools project `mini` 0.3.1 in `./`." in root
    assert "- `int mini_add(int a, int b)` — Adds two numbers." in root
    assert "util_helper" not in root.split("## Exposes")[1].split("## ")[0]  # not an installed header
    assert "- `mini` → `src/main.c` (Automake program)" in root
    assert "- library `libmini.la` (Automake target)" in root
    assert "`m (library check)`" in root and "`zlib (pkg-config)`" in root and "`oniguruma (--with-oniguruma)`" in root


def test_meson_project_title_and_targets():
    from brain.cards.languages.c_manifests import parse_meson

    facts = parse_meson(b"project('tiny', 'c', version : '2.1.0')\nzdep = dependency('zlib')\n"
                        b"lib = library('tiny', 'tiny.c')  # the library\nexecutable('tiny-cli', 'cli.c')\n"
                        b"install_headers('tiny.h', 'tiny_ext.h')\n", "lib/meson.build")
    manifest = facts["manifest"]
    assert manifest["title"] == "Meson project `tiny` 2.1.0"
    assert manifest["declared"] == {"zlib": "zlib (meson dependency)"}
    assert manifest["internal"] == ["library `tiny` (meson target)"]
    assert manifest["entry_points"] == [["tiny-cli", "", "meson executable"]]
    assert manifest["public_files"] == ["lib/tiny.h", "lib/tiny_ext.h"]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="AC_INIT([,]) PKG_CHECK_MODULES lib_LTLIBRARIES=+\\\n#dnl'project(library)x.h", max_size=300))
def test_build_manifest_parsers_never_fail(text):
    """configure.ac, Makefile.am and meson.build are read, never run: any text gives facts, never an exception."""
    from brain.cards.languages.c_manifests import parse_configure_ac, parse_makefile_am, parse_meson

    for parser, path in ((parse_configure_ac, "configure.ac"), (parse_makefile_am, "lib/Makefile.am"), (parse_meson, "meson.build")):
        facts = parser(text.encode(), path)
        assert facts["status"] == "ok" and isinstance(facts["manifest"]["declared"], dict)


def test_build_manifest_parsers_are_linear_on_long_lines():
    import time

    from brain.cards.languages.c_manifests import parse_configure_ac, parse_makefile_am, parse_meson

    for parser, text in ((parse_configure_ac, "AC_INIT([" + "a" * 200_000), (parse_makefile_am, "x = " + "a \\\n" * 50_000),
                         (parse_meson, "project('" + "a" * 200_000)):
        started = time.perf_counter()
        parser(text.encode(), "x")
        assert time.perf_counter() - started < 2.0
