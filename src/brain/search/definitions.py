"""Definitions and imports of non-Python source files, one small table per language.

The code index needs, for every language, what a reader would grep for: the names a file
defines (functions, types, methods with their owner, macros, constants) and what it imports.
A full parser per language is the cards' business (tree-sitter, optional); here a line
scanner is enough and costs nothing to install: every pattern is anchored at the start of a
stripped line and has no nested quantifier, so a line is matched in linear time, and lines
longer than ``MAX_LINE`` are skipped (minified code is not what a task is about).

Owners (class, struct, impl, interface) are tracked by indentation: a container opened at
indent *i* holds the members below it until a line at indent <= *i* starts with ``}``. That
is how formatted code looks in every one of these languages (gofmt, rustfmt, clang-format,
prettier), and a misformatted file only loses owners, never definitions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["LANGUAGES", "LanguageTable", "scan_definitions", "MAX_LINE"]

MAX_LINE = 400
MAX_HEADER_LINES = 4  # a class header may run this many lines before its `{` (outside its parentheses)
MAX_PARAMETER_LINES = 200  # and its constructor's parameters (Kotlin, Java record, C# primary constructor) this many

# words that look like a call's or declaration's name but are the language's own
_KEYWORDS = frozenset(
    "if for while switch return new throw else case catch do sizeof typeof delete await yield "
    "match loop in of instanceof void goto defined alignof decltype static_assert assert "
    "synchronized try finally elif with and or not function fn func using namespace template "
    "operator co_return co_await co_yield let var const where unsafe super this self".split())
# words before a name that make the line a statement, not a declaration
_STATEMENT_WORDS = frozenset(
    "return new throw else case goto await yield typeof delete sizeof co_return co_await co_yield in of "
    "instanceof do if for while switch catch using namespace operator".split())
# words that may precede a definition's name in C/C++/Java (types and modifiers are free-form)
_SIG_PREFIX = re.compile(r"[\w\s*&:<>,\[\].~?@]*")
_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
_TYPEDEF_END = re.compile(r"\}\s*(\w+)\s*;")
_TEST_MODULE = "\0test"
_BASES = re.compile(r"\b(?:extends|implements)\s")
_BLOCK_END = re.compile(r"end\b(?![?!=:])")  # a Ruby `end` (not `end_time`, `end?`, `end:`)
_ONE_LINER = re.compile(r";\s*end\b|\bend\s*$")  # `class Error < StandardError; end`


def _without_generics(text: str) -> str:
    """``text`` without its ``<...>`` parts, nested ones included, in one pass (linear, no pattern)."""
    depth, out = 0, []
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def base_types(header: str) -> list[str]:
    """The type names after ``extends`` / ``implements`` on a class header line (generics and
    package qualifiers dropped): ``class A<T> extends b.B<T> implements C, D<E> {`` -> B, C, D."""
    if "extends" not in header and "implements" not in header:
        return []
    flat = _without_generics(header.split("{", 1)[0])
    match = _BASES.search(flat)
    if not match:
        return []
    words = re.findall(r"[A-Za-z_$][\w$.]*", flat[match.start():])
    return [w.rsplit(".", 1)[-1] for w in words if w not in ("extends", "implements")]


@dataclass(frozen=True)
class LanguageTable:
    """What one language's definitions look like: (pattern, kind) per line shape, and its imports.

    ``kind`` is one of class / function / var / macro; a function inside a container
    becomes a method of it. ``containers`` open an owner for the lines below them.
    ``c_like`` turns on the signature reading of C, C++ and Java (a name followed by ``(``
    after a type), which no single pattern can do in linear time.
    """

    defs: tuple[tuple[re.Pattern, str], ...]
    containers: tuple[re.Pattern, ...] = ()
    imports: tuple[re.Pattern, ...] = ()
    members: tuple[re.Pattern, ...] = ()  # method shapes that count only inside a container
    c_like: bool = False
    container_defines: bool = False  # a container line also defines its name (C/C++ struct, class, enum)
    test_block: re.Pattern | None = None  # a block of test code inside a source file (Rust `mod tests {`)
    import_block: tuple[str, re.Pattern] | None = None  # (opening line, one import inside): Go `import (`
    nested_are_local: bool = False  # an indented definition outside a class is a closure or a local (JS)
    bare_definitions: bool = False  # `name(...)` alone at column 0 defines (C, GNU style type on the line above)
    caps_are_macros: bool = True  # an ALL-CAPS `NAME(` is a macro call, not a definition
    header_bases: object = None  # (header line) -> the base types it names (Java `extends A implements B`, C# `: B`)
    inline_imports: re.Pattern | None = None  # an import anywhere on a line, comments too (JSDoc `import("./types")`)
    closing_imports: bool = False  # a line opening with `}` may end a multi-line import (JS `} from "./x"`)
    rust_uses: bool = False  # `use a::{b, c::d};` statements, over several lines too
    keyword_blocks: bool = False  # containers open at their header and close at the `end` at their indent (Ruby)
    signature_line: object = None  # (line) -> the line a signature is read from (C# drops generics: `Run<T>(`)
    bodiless_types: bool = False  # a class may have no body (Kotlin `data class P(val a: Int)`): its header ends
    # at the first line that does not continue it (`:` bases, `where`, `{`), never at a later `fun ... {`
    attrs: tuple[re.Pattern, ...] = ()  # property shapes that count only inside a container (C# `Type Name {`)


def _p(pattern: str) -> re.Pattern:
    return re.compile(pattern)


_RUST_VIS = r"(?:pub(?:\s*\([\w\s:]*\))?\s+)?"
_JAVA_MODS = r"(?:(?:public|protected|private|abstract|static|final|sealed|non-sealed|strictfp|default|synchronized|native|transient|volatile|open|internal|data|inline|override)\s+)*"

LANGUAGES: dict[str, LanguageTable] = {
    "go": LanguageTable(
        defs=(
            (_p(r"func\s+\(\s*(?:\w+\s+)?\*?\s*(?P<owner>\w+)(?:\[[\w\s,]*\])?\s*\)\s*(?P<name>\w+)"), "function"),
            (_p(r"func\s+(?P<name>\w+)"), "function"),
            (_p(r"type\s+(?P<name>\w+)"), "class"),
            (_p(r"(?:var|const)\s+(?P<name>\w+)"), "var"),
        ),
        containers=(_p(r"type\s+(?P<name>\w+)\s+(?:struct|interface)\s*\{\s*$"),),
        members=(_p(r"(?P<name>[A-Z]\w*)\s*\("),),  # interface methods
        imports=(_p(r'import\s+(?:[\w.]+\s+)?"(?P<target>[^"\s]+)"'),),
        import_block=("import (", _p(r'(?:[\w.]+\s+)?"(?P<target>[\w.\-~/]+)"\s*$')),
    ),
    "rust": LanguageTable(
        defs=(
            (_p(_RUST_VIS + r"(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"\w+\"\s+)?fn\s+(?P<name>\w+)"), "function"),
            (_p(_RUST_VIS + r"(?:unsafe\s+)?(?:struct|enum|union|trait|type)\s+(?P<name>\w+)"), "class"),
            (_p(r"macro_rules!\s*(?P<name>\w+)"), "macro"),
            (_p(_RUST_VIS + r"(?:const|static)\s+(?:mut\s+)?(?P<name>\w+)\s*:"), "var"),
        ),
        containers=(_p(r"(?:unsafe\s+)?impl\b(?P<head>[^{;]*)\{\s*$"),
                    _p(_RUST_VIS + r"(?:unsafe\s+)?trait\s+(?P<name>\w+)[^;]*\{\s*$")),
        test_block=_p(r"(?:pub(?:\([\w\s:]*\))?\s+)?mod\s+tests?\s*\{"),
        rust_uses=True,
    ),
    "java": LanguageTable(
        defs=((_p(_JAVA_MODS + r"(?:class|interface|enum|record|@interface|object)\s+(?P<name>\w+)"), "class"),),
        containers=(_p(r"(?:@\w+\s+)*" + _JAVA_MODS + r"(?:class|interface|enum|record|@interface|object)\s+(?P<name>\w+)"),),
        imports=(_p(r"import\s+(?:static\s+)?(?P<target>[\w.]+)"),),
        c_like=True, caps_are_macros=False, header_bases=base_types,
    ),
    "js": LanguageTable(
        defs=(
            (_p(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)"), "function"),
            (_p(r"(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)"), "class"),
            (_p(r"(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+(?P<name>[\w$]+)"), "class"),
            (_p(r"(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)"), "function"),
            (_p(r"(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*="), "var"),
            (_p(r"(?:module\.)?exports\.(?P<name>[\w$]+)\s*="), "function"),
            (_p(r"(?P<owner>[\w$]+)(?:\.prototype)?\.(?P<name>[\w$]+)\s*=\s*(?:async\s+)?function\b"), "function"),
            (_p(r"(?P<name>[\w$]+)\s*:\s*(?:async\s+)?function\b"), "function"),
        ),
        containers=(_p(r"(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)[^{]*\{\s*$"),),
        # class members: `render() {`, `static async load(id) {`, TypeScript `private get(key: string): T {`
        members=(_p(r"(?:(?:public|private|protected|readonly|override|abstract|static|async|get|set)\s+|\*\s*)*"
                    r"(?P<name>[\w$]+)\s*(?:<[^<>()]*>)?\s*\([^()]*\)\s*(?::\s*[^{;=]+)?\{\s*\}?\s*$"),),
        imports=(_p(r"""(?:import|export)\b[^'"]*?from\s*['"](?P<target>[^'"]+)['"]"""),
                 _p(r"""import\s*['"](?P<target>[^'"]+)['"]"""),
                 _p(r"""\}\s*from\s*['"](?P<target>[^'"]+)['"]"""),  # the end of a multi-line import
                 _p(r"""(?:const|let|var)?[^'"]*?require\(\s*['"](?P<target>[^'"]+)['"]""")),
        nested_are_local=True, closing_imports=True,
        # `import("./x")`: a dynamic import, or a type the file takes from another (TypeScript, JSDoc comments)
        inline_imports=_p(r"""\bimport\(\s*['"](?P<target>[^'"]{1,200})['"]\s*\)"""),
    ),
    "c": LanguageTable(
        defs=((_p(r"#\s*define\s+(?P<name>\w+)"), "macro"),),
        containers=(_p(r"(?:typedef\s+)?(?:struct|union|enum)\b(?P<head>[\w\s]*)\{?\s*$"),),
        imports=(_p(r'#\s*include\s*[<"](?P<target>[^>"]+)[>"]'),),
        c_like=True, container_defines=True, bare_definitions=True,
    ),
    "cpp": LanguageTable(
        defs=(
            (_p(r"#\s*define\s+(?P<name>\w+)"), "macro"),
            (_p(r"(?:template\s*<[^>]*>\s*)?using\s+(?P<name>\w+)\s*="), "class"),
        ),
        containers=(_p(r"(?:template\s*<[^>]*>\s*)?(?:typedef\s+)?(?:class|struct|union|enum)\b(?P<head>[\w\s:<>,]*)\{?\s*$"),),
        imports=(_p(r'#\s*include\s*[<"](?P<target>[^>"]+)[>"]'),),
        c_like=True, container_defines=True, bare_definitions=True,
    ),
}
LANGUAGES["ts"] = LANGUAGES["js"]
# grammars (Bison/yacc, flex/lex): their C prologue and actions read as C; the rules are grammar, not names
LANGUAGES["yacc"] = LANGUAGES["lex"] = LANGUAGES["c"]
# languages a project writes beside its main one (a query language's builtins, embedded scripts, build and
# install scripts): their definition shapes, one keyword at the start of a line
LANGUAGES["jq"] = LanguageTable(
    defs=((_p(r"def\s+(?P<name>[A-Za-z_]\w*)"), "function"),),
    imports=(_p(r'(?:import|include)\s+"(?P<target>[^"]+)"'),),
)
LANGUAGES["lua"] = LanguageTable(
    defs=((_p(r"(?:local\s+)?function\s+(?:(?P<owner>[A-Za-z_]\w*)(?:\.\w+)*[.:])?(?P<name>[A-Za-z_]\w*)"), "function"),
          (_p(r"(?:local\s+)?(?:(?P<owner>[A-Za-z_]\w*)\.)?(?P<name>[A-Za-z_]\w*)\s*=\s*function\b"), "function")),
    imports=(_p(r"""(?:local\s+[\w,\s]*=\s*)?require\s*\(?\s*['"](?P<target>[^'"]+)['"]"""),),
)
LANGUAGES["perl"] = LanguageTable(
    defs=((_p(r"sub\s+(?P<name>[A-Za-z_]\w*)"), "function"), (_p(r"package\s+(?P<name>[\w:]+)"), "class")),
    imports=(_p(r"(?:use|require)\s+(?P<target>[A-Za-z_][\w:]*)"),),
)
LANGUAGES["shell"] = LanguageTable(
    defs=((_p(r"function\s+(?P<name>[A-Za-z_][\w\-.:]*)"), "function"),
          (_p(r"(?P<name>[A-Za-z_][\w\-.:]*)\s*\(\s*\)"), "function")),
    imports=(_p(r"(?:source|\.)\s+['\"]?(?P<target>[\w\-./$]+)"),),
)
LANGUAGES["tcl"] = LanguageTable(defs=((_p(r"proc\s+(?P<name>[\w:]+)"), "function"),))
LANGUAGES["awk"] = LanguageTable(defs=((_p(r"func(?:tion)?\s+(?P<name>[A-Za-z_]\w*)"), "function"),))
LANGUAGES["vim"] = LanguageTable(defs=((_p(r"fu(?:nction)?!?\s+(?P<name>[\w:#.]+)"), "function"),))
LANGUAGES["elisp"] = LanguageTable(
    defs=((_p(r"\(def(?:un|macro|subst|generic|method)\s+(?P<name>[^\s()]+)"), "function"),
          (_p(r"\(def(?:var|const|custom)\s+(?P<name>[^\s()]+)"), "var")),
    imports=(_p(r"\(require\s+'(?P<target>[^\s()]+)"),),
)
# Kotlin's own modifiers: without them `enum class Color` read as a class named `class`, `private inner class X`
# opened no owner (its methods went to the file), `const val` and `lateinit var` were not read at all
_KOTLIN_MODS = (r"(?:(?:public|protected|private|internal|abstract|final|sealed|open|data|inline|value|override|enum|"
                r"annotation|inner|companion|const|lateinit|expect|actual|external|tailrec|operator|infix|suspend)\s+)*")
_KOTLIN_TYPE = _KOTLIN_MODS + r"(?:class|interface|object)\s+(?P<name>\w+)"
LANGUAGES["kotlin"] = LanguageTable(
    defs=((_p(_KOTLIN_TYPE), "class"),
          (_p(_KOTLIN_MODS + r"fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(?P<name>\w+)"), "function"),
          (_p(_KOTLIN_MODS + r"(?:val|var)\s+(?P<name>\w+)"), "var")),
    containers=(_p(r"(?:@\w+\s+)*" + _KOTLIN_TYPE),), imports=LANGUAGES["java"].imports, caps_are_macros=False,
    bodiless_types=True,
)
from . import definitions_langs  # noqa: E402,F401  C#, PHP and Ruby, and Kotlin's `:` bases (it registers them)


# Rust imports: `use crate::a::{b, c::D};`, possibly over several lines (read up to its `;`)
_RUST_USE = _p(r"(?:pub(?:\s*\([\w\s:]*\))?\s+)?use\s+(?P<rest>.*)")
_RUST_USE_LINES = 40  # a `use` statement longer than this many lines is not read to its end
_RUST_USE_PATHS = 64  # most paths one `use` statement expands to
_RUST_ALIAS = re.compile(r"\s+as\s+\w+")


def rust_use_paths(statement: str) -> list[str]:
    """The paths one Rust `use` tree names: ``crate::io::{self, AsyncRead, util::{a, b as c}}`` ->
    ``crate::io``, ``crate::io::AsyncRead``, ``crate::io::util::a``, ``crate::io::util::b`` (pure, bounded)."""
    text = _RUST_ALIAS.sub("", statement.split(";", 1)[0]).replace("$crate", "crate")  # (`$crate` in macros)
    text = "".join(text.split())
    out: list[str] = []

    def expand(prefix: str, tree: str, depth: int) -> None:
        if len(out) >= _RUST_USE_PATHS or depth > 6:
            return
        brace = tree.find("{")
        if brace < 0:
            if tree:  # (a trailing comma leaves an empty tree)
                path = prefix.rstrip(":") if tree in ("self", "*") else prefix + tree
                if path:
                    out.append(path)
            return
        head = prefix + tree[:brace]
        inner = tree[brace + 1: tree.rfind("}")] if "}" in tree else tree[brace + 1:]
        level, start = 0, 0
        for i, ch in enumerate(inner):
            if ch == "{":
                level += 1
            elif ch == "}":
                level -= 1
            elif ch == "," and level == 0:
                expand(head, inner[start:i], depth + 1)
                start = i + 1
        expand(head, inner[start:], depth + 1)

    expand("", text, 0)
    return [p.lstrip(":") for p in dict.fromkeys(out) if re.fullmatch(r"[\w:]+", p)]


@dataclass
class _Scan:
    symbols: list[tuple[str, str, str, int]] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)


def _paren_depth(line: str, depth: int) -> int:
    """``depth`` after the parentheses of ``line`` (one pass; those in string and char literals and after a
    `//` comment do not count; never below 0)."""
    quote = ""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "/" and line.startswith("//", i):
            break
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        i += 1
    return depth


# a Kotlin header continued by its primary constructor on the lines below: `class A\n  @Inject\n  constructor(`
# (each repetition starts at its own `@`: linear)
_KOTLIN_CTOR = re.compile(r"(?:@[\w.:]+(?:\([^()]*\))?\s*)*(?:(?:private|internal|protected|public)\s+)?(?:constructor\b|$)")


def _code_end(line: str) -> str:
    """``line`` without a trailing `//` comment (`record P(int a) {} // note`), when it holds no string."""
    cut = line.find("//")
    if cut < 0 or '"' in line[:cut] or "'" in line[:cut]:
        return line
    return line[:cut].rstrip()


def _owner_from_head(head: str) -> str | None:
    """The type an ``impl ... {`` or ``struct X : Base {`` head is about (generics dropped)."""
    text = _without_generics(head)
    if " for " in f" {text} ":
        text = text.split(" for ", 1)[1]
    text = re.split(r"(?<!:):(?!:)", text, maxsplit=1)[0]  # `X : Base` -> X; `a::X` stays
    text = text.split(" where ", 1)[0]
    words = re.findall(r"[A-Za-z_]\w*", text)
    words = [w for w in words if w not in ("dyn", "mut", "const", "final", "where", "pub", "crate", "class", "struct",
                                          "union", "enum", "typedef")]
    return words[-1] if words else None


def _signature(line: str, indent: int, table: LanguageTable) -> tuple[str, str | None, bool] | None:
    """(name, owner, is_prototype) when a C/C++/Java line declares a function, else None."""
    match = _CALL.search(line)
    if not match:
        return None
    name = match.group(1)
    if name in _KEYWORDS or name.isupper() and len(name) > 2 and table.caps_are_macros:
        return None  # control flow, or an all-caps macro call such as FMT_BEGIN_NAMESPACE(...)
    prefix = line[: match.start()]
    if _SIG_PREFIX.fullmatch(prefix) is None or "=" in prefix:
        return None
    if prefix and not prefix.endswith("::") and prefix[-1] not in " \t*&>]":
        return None  # `obj.method(`, `a->b(`: a call, not a definition
    owner = None
    if prefix.endswith("::"):
        qualified = prefix[:-2].rstrip().rsplit(None, 1)
        owner_part = qualified[-1] if qualified else ""
        owner = owner_part.rsplit("::", 1)[-1].split("<", 1)[0] or None
        prefix = qualified[0] if len(qualified) > 1 else ""
    words = re.findall(r"[A-Za-z_]\w*", prefix)
    if any(w in _STATEMENT_WORDS for w in words):
        return None
    rest = line[match.end():]
    prototype = rest.rstrip().endswith(";")
    if not words:
        # no return type on this line: a C definition whose type sits on the line above (GNU
        # style), a C++ constructor `Owner::Owner(`, or a Java/C++ constructor in its class
        if not ((indent == 0 and not prototype and table.bare_definitions) or (owner and owner == name)):
            return None
    return name, owner, prototype


def scan_definitions(text: str, lang: str) -> _Scan:
    """Symbols (name, kind, qualname, line) and import targets of one file (pure, linear)."""
    table = LANGUAGES.get(lang)
    out = _Scan()
    if table is None:
        return out
    stack: list[tuple[int, str]] = []  # (indent, owner) of open containers
    in_block_comment = False
    in_import_block = False
    # (indent, owner, lines left, parenthesis depth, header continues) of a container whose `{` is below
    pending: tuple[int, str, int, int, bool] | None = None
    use_lines: list[str] = []  # a Rust `use` statement read so far (it ends at `;`)
    for number, raw in enumerate(text.split("\n"), 1):
        if len(raw) > MAX_LINE:
            continue
        line = raw.strip()
        if not line:
            continue
        if table.inline_imports is not None and "import(" in line:
            out.imports.extend(m.group("target") for m in table.inline_imports.finditer(line))
        if in_block_comment:
            if "*/" in line:
                in_block_comment = False
            continue
        if line.startswith(("//", "*", "#!")):
            continue
        if line.startswith("/*"):
            in_block_comment = "*/" not in line
            continue
        if use_lines:  # the rest of a Rust `use` statement over several lines
            use_lines.append(line)
            if ";" in line or len(use_lines) >= _RUST_USE_LINES:
                out.imports.extend(rust_use_paths(" ".join(use_lines)))
                use_lines = []
            continue
        indent = len(raw) - len(raw.lstrip())
        param_owner = None  # the class whose constructor parameters this line is in (its `val`s are the class's)
        if pending is not None:
            # a class header whose brace opens on a later line (Allman style, `implements ...` below, or a
            # constructor over several lines: its parentheses are counted, a `{` inside them is a default lambda)
            head_indent, head_owner, left, depth, continued = pending
            code = _code_end(line)
            if (table.bodiless_types and depth == 0 and not continued
                    and not code.startswith((":", ",", "{", "where ", "by ")) and not _KOTLIN_CTOR.match(code)):
                pending = None  # a class without a body: this line is the next declaration
            else:
                param_owner = head_owner if depth > 0 else None
                if table.header_bases is not None:
                    out.imports.extend(table.header_bases(line))
                depth = _paren_depth(code, depth)
                if depth > 0:
                    pending = (head_indent, head_owner, left - 1, depth, True) if left > 1 else None
                elif code.startswith("{") or code.endswith("{"):
                    stack.append((head_indent, head_owner))
                    pending = None
                    if code.startswith("{"):
                        continue
                elif code.endswith((";", "}")) or left <= 1:
                    pending = None
                else:
                    left = MAX_HEADER_LINES if param_owner else left - 1
                    pending = (head_indent, head_owner, left, 0, code.endswith((",", ":", "(", "<")))
        if param_owner is not None:
            # a constructor parameter (`val a: Int,`, `@Json(name = "a") int a,`): only a Kotlin property is read
            for pattern, kind in table.defs:
                m = pattern.match(line) if kind == "var" else None
                if m and m.group("name") not in _KEYWORDS:
                    out.symbols.append((m.group("name"), "attr", f"{param_owner}.{m.group('name')}", number))
                    break
            continue
        if table.keyword_blocks and _BLOCK_END.match(line):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            continue
        if line.startswith("}"):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            typedef = _TYPEDEF_END.match(line) if table.container_defines else None
            if typedef:
                out.symbols.append((typedef.group(1), "class", typedef.group(1), number))
            elif table.closing_imports:
                # the last line of a multi-line import: `} from "./x";`, `} = require("../x");`
                for pattern in table.imports:
                    m = pattern.match(line)
                    if m:
                        out.imports.append(m.group("target"))
                        break
            continue
        if stack and stack[-1][1] == _TEST_MODULE:
            if line.endswith("{"):
                stack.append((indent, _TEST_MODULE))  # anything opened inside a test module is test code too
            continue
        if table.test_block is not None and table.test_block.match(line):
            stack.append((indent, _TEST_MODULE))
            continue
        if table.rust_uses:
            start = _RUST_USE.match(line)
            if start:
                use_lines = [start.group("rest")]
                if ";" not in line:
                    continue
                out.imports.extend(rust_use_paths(" ".join(use_lines)))
                use_lines = []
                continue
        if table.import_block is not None:
            if line.startswith(table.import_block[0]):
                in_import_block = True
                continue
            if in_import_block:
                if line.startswith(")"):
                    in_import_block = False
                else:
                    m = table.import_block[1].match(line)
                    if m:
                        out.imports.append(m.group("target"))
                continue
        for pattern in table.imports:
            m = pattern.match(line)
            if m:
                out.imports.append(m.group("target"))
                break
        owner = stack[-1][1] if stack else None
        found = False
        for pattern, kind in table.defs:
            m = pattern.match(line)
            if not m:
                continue
            name = m.group("name")
            if name in _KEYWORDS:
                continue
            explicit = m.groupdict().get("owner")
            who = explicit or (owner if kind == "function" else None)
            if explicit in ("module", "exports", "window", "global", "this", "self"):
                who = None
            if kind == "function" and who:
                out.symbols.append((name, "method", f"{who}.{name}", number))
            elif kind == "function" and table.nested_are_local and indent > 0 and not owner:
                out.symbols.append((name, "inner", name, number))
            elif kind == "var" and indent > 0 and table.nested_are_local:
                pass  # a local variable, not the file's vocabulary
            else:
                qual = f"{owner}.{name}" if owner and kind in ("class", "var") else name
                out.symbols.append((name, "attr" if kind == "var" and owner else kind, qual, number))
            found = True
            break
        if not found and owner is not None:
            for pattern in table.members:
                m = pattern.match(line)
                if m and m.group("name") not in _KEYWORDS:
                    out.symbols.append((m.group("name"), "method", f"{owner}.{m.group('name')}", number))
                    found = True
                    break
        if not found and owner is not None:
            for pattern in table.attrs:
                m = pattern.match(line)
                if m and m.group("name") not in _KEYWORDS:
                    out.symbols.append((m.group("name"), "attr", f"{owner}.{m.group('name')}", number))
                    found = True
                    break
        if not found and table.c_like and "(" in line and not line.startswith("#"):
            sig = _signature(line if table.signature_line is None else table.signature_line(line), indent, table)
            if sig:
                name, explicit_owner, prototype = sig
                who = explicit_owner or owner
                if who and name != who:
                    out.symbols.append((name, "method", f"{who}.{name}", number))
                elif not who:
                    out.symbols.append((name, "decl" if prototype else "function", name, number))
        for pattern in table.containers:
            m = pattern.match(line)
            if m:
                name = m.groupdict().get("name") or _owner_from_head(m.groupdict().get("head") or "")
                if name:
                    if table.header_bases is not None:
                        out.imports.extend(table.header_bases(line))
                    if table.container_defines and name not in _KEYWORDS:
                        out.symbols.append((name, "class", f"{owner}.{name}" if owner else name, number))
                    if table.keyword_blocks:
                        if not _ONE_LINER.search(line):
                            stack.append((indent, name))
                    elif table.container_defines:
                        stack.append((indent, name))
                    else:
                        code = _code_end(line)
                        depth = _paren_depth(code, 0)
                        if depth > 0:  # `class P(` or `record P(`: the parameters run below
                            pending = (indent, name, MAX_PARAMETER_LINES, depth, True)
                        elif code.endswith("{"):
                            stack.append((indent, name))
                        elif not code.endswith((";", "}")):
                            pending = (indent, name, MAX_HEADER_LINES, 0, code.endswith((",", ":", "<")))
                break
    return out
