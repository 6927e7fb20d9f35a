"""Fields, constants and enum constants of Java, C# and Kotlin classes for the code index (see ``definitions``).

The line scanner recorded the methods and types of these languages but not the data they hold: a Java
file's ``public static final int MAX_ITEMS = 100;`` or ``private final Cache cache;``, a C# constant or a
property written the usual way (its ``{`` on the next line), an enum's constants, a Kotlin ``const val``.
The cards (tree-sitter) had them; the index's symbol rows did not, so a task naming ``MAX_ITEMS`` could not
reach the class that declares it by name. Here each is read from one line, without a pattern:

* a field: ``[annotations] modifiers Type name [= ...|, other|;]`` inside a class body. A local variable
  has the same shape, so a field must carry a modifier a local cannot have (``public``, ``protected``,
  ``private``, ``static``, ``volatile``; Java ``transient``; C# ``internal``, ``readonly``, ``event``),
  or be a Java constant spelled in capitals with a value (an interface's ``int MAX = 5;``);
* a C# property whose accessors open on the next line: ``public Type Name`` alone on its line;
* an enum constant: ``NAME,``, ``NAME(args)``, ``NAME {``, C# ``Name = 1,``, read at the enum body's own
  level (parentheses and braces counted outside string literals) until the ``;`` that ends the list.

Each reader walks its line once (generic arguments removed by ``definitions._without_generics``, brackets
matched by counting), so the scan stays linear in the line's length.
"""

from __future__ import annotations

__all__ = ["declared_fields", "enum_constants", "nesting", "JAVA_FIELDS", "CSHARP_FIELDS"]

_KEYWORDS = frozenset(
    "return new throw else case goto await yield typeof delete sizeof in of instanceof do if for while switch "
    "catch using namespace operator var let const assert break continue this super class enum interface "
    "import package true false null default void".split())
# names that every class of a kind declares and no task is about
_NOISE = frozenset({"serialVersionUID"})


class FieldShape:
    """One language's field line: the modifiers it may carry and those only a field (not a local) carries."""

    def __init__(self, modifiers: str, marks: str, *, bare: bool = False, caps: bool = False,
                 bare_marks: str = "") -> None:
        self.modifiers = frozenset(modifiers.split())
        self.marks = frozenset(marks.split())
        self.bare = bare  # a declaration without `=` or `;` is a property (C#, its `{` below)
        self.bare_marks = frozenset(bare_marks.split()) or self.marks
        self.caps = caps  # an ALL_CAPS name with a value is a constant without modifiers (Java interfaces)


JAVA_FIELDS = FieldShape("public protected private static final transient volatile",
                         "public protected private static transient volatile", caps=True)
CSHARP_FIELDS = FieldShape("public private protected internal static readonly const volatile new unsafe required "
                           "event virtual override abstract sealed extern fixed",
                           "public private protected internal static readonly volatile event", bare=True,
                           bare_marks="public private protected internal")


def _close(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``start`` (strings skipped), or -1 when the line ends first."""
    depth, quote, i, n = 0, "", start, len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _without_annotations(line: str) -> str:
    """``line`` without the annotations it opens with: Java ``@Nullable``, ``@SerializedName("x")``, C#
    ``[JsonProperty("x")]``; "" when one runs past the line's end."""
    i, n = 0, len(line)
    while i < n and line[i] in "@[":
        if line[i] == "@":
            j = i + 1
            while j < n and (line[j].isalnum() or line[j] in "_."):
                j += 1
            if j == i + 1:
                return line[i:]
            k = j
            while k < n and line[k] == " ":
                k += 1
            if k < n and line[k] == "(":
                j = _close(line, k, "(", ")")
                if j < 0:
                    return ""
                j += 1
            i = j
        else:
            j = _close(line, i, "[", "]")
            if j < 0:
                return ""
            i = j + 1
        while i < n and line[i] in " \t":
            i += 1
    return line[i:]


def _ident(word: str) -> bool:
    return bool(word) and (word[0].isalpha() or word[0] in "_$") and all(c.isalnum() or c in "_$" for c in word)


def _type_word(word: str) -> bool:
    """``String``, ``java.util.List``, ``int[]``, ``int?``, ``List[]`` (generic arguments already removed)."""
    core = word.rstrip("?")
    while core.endswith("[]"):
        core = core[:-2]
    return all(_ident(part) for part in core.split(".")) and core not in _KEYWORDS


def _constant_name(name: str) -> bool:
    return len(name) > 1 and name.upper() == name and any(c.isalpha() for c in name)


def declared_fields(line: str, shape: FieldShape) -> list[str]:
    """The names a field declaration line declares (see the module docstring), else []."""
    from .definitions import _without_generics

    text = _without_annotations(line)
    if not text:
        return []
    eq = text.find("=")
    if eq >= 0:
        if text[eq + 1: eq + 2] in ("=", ">") or (eq and text[eq - 1] in "!<>+-*/%&|^"):
            return []  # a comparison, a compound assignment, an expression body
        decl = text[:eq]
    elif text.endswith(";"):
        decl = text[:-1]
    elif shape.bare:
        decl = text
    else:
        return []
    if any(ch in decl for ch in "(){}:;\"'"):
        return []
    parts = _without_generics(decl).split(",")
    words = parts[0].split()
    if len(words) < 2:
        return []
    *mods, type_word, name = words
    if name.endswith("[]"):  # Java's `int counts[]`
        name = name[:-2].rstrip()
    if not all(m in shape.modifiers for m in mods) or type_word in shape.modifiers or not _type_word(type_word) \
            or not _ident(name) or name in _KEYWORDS or name in _NOISE:
        return []
    marks = shape.marks if eq >= 0 or text.endswith(";") else shape.bare_marks
    if not (set(mods) & marks) and not (shape.caps and eq >= 0 and _constant_name(name)):
        return []
    names = [name]
    for part in parts[1:]:  # `private int a, b;` (only the names before the first value)
        extra = part.strip()
        if _ident(extra) and extra not in _KEYWORDS:
            names.append(extra)
    return names


def enum_constants(line: str) -> list[str]:
    """The constants an enum body's line declares: ``RED,``, ``RED, GREEN;``, ``PLUS("+") {``, C#
    ``Red = 1,``, annotations before them dropped; [] for anything else."""
    text = _without_annotations(line)
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return []
    i, n = 0, len(text)
    while i < n and (text[i].isalnum() or text[i] == "_"):
        i += 1
    first = text[:i]
    rest = text[i:].lstrip()
    if first in _KEYWORDS:
        return []
    if not rest or rest[0] in "({=":
        return [first]
    if rest[0] in ",;":
        # `RED, GREEN, BLUE;`: a list of bare names, or just the one before its comma
        names = [w.strip() for w in text.rstrip(";,").split(",")]
        if all(_ident(w) and w not in _KEYWORDS for w in names):
            return names
        return [first]
    return []


def nesting(line: str) -> tuple[int, int]:
    """(parentheses, braces) a line opens minus those it closes, string and char literals skipped."""
    paren = brace = 0
    quote, i, n = "", 0, len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        elif ch == "{":
            brace += 1
        elif ch == "}":
            brace -= 1
        elif ch == "/" and line[i + 1: i + 2] == "/":
            break
        i += 1
    return paren, brace
