"""Line-scanner tables of C#, PHP and Ruby (see ``definitions``): the names each file defines.

Before these tables the three languages fell back to one generic pattern: a C# file recorded its
local `var x = ...` lines and none of its classes or methods (`public sealed class X` does not start
with `class`), a PHP file its classes but no methods (`public function f`), a Ruby file its methods
without their class. The shapes, one line each:

* C#: `[modifiers] class|interface|struct|enum|record Name`, methods by the C-family signature
  reading with generic arguments removed first (`Task<T> RunAsync<T>(...)`), properties
  `Type Name { get ...` / `Type Name => ...` as attributes of their class;
* PHP: `[abstract|final] class|interface|trait|enum Name`, `[modifiers] function name`;
* Ruby: `class A::B < C`, `module M`, `def name` / `def self.name`, owned by the innermost open class or
  module and closed by the `end` at its indent.

No imports: `using`, `use` and `require` lines (and the base types of class headers) were read and
resolved to files too, and the import-neighbour shares they opened cost corpus tasks in these three
languages (decision 0045), so they are left out.

Every pattern is anchored at the start of a stripped line and has no nested quantifier (linear, as the
rest of ``definitions``).
"""

from __future__ import annotations

import re

from .definitions import LANGUAGES, LanguageTable, _p

__all__ = ["without_generics"]

_CS_MODS = (r"(?:(?:public|private|protected|internal|static|sealed|abstract|partial|readonly|unsafe|new|virtual|"
            r"override|async|extern|file|ref|required|volatile)\s+)*")
_CS_TYPE = _CS_MODS + r"(?:class|interface|struct|enum|record(?:\s+class|\s+struct)?)\s+(?P<name>\w+)"
_ANGLES = re.compile(r"<[^<>]*>")


def without_generics(line: str) -> str:
    """A C# line without its generic arguments (innermost first, 8 levels at most, each pass one linear
    substitution), so `Task<T> RunAsync<T>(` reads as a signature."""
    for _ in range(8):
        if "<" not in line:
            break
        shorter = _ANGLES.sub("", line)
        if shorter == line:
            break
        line = shorter
    return line


LANGUAGES["csharp"] = LanguageTable(
    defs=((_p(_CS_TYPE), "class"),
          (_p(_CS_MODS + r"delegate\s+[\w.<>\[\],?]+\s+(?P<name>\w+)"), "class")),
    containers=(_p(_CS_TYPE),),
    attrs=(_p(_CS_MODS + r"[\w.<>\[\]?]+\s+(?P<name>[A-Z]\w*)\s*(?:\{\s*(?:get|set|init|private|protected|internal)\b|=>)"),),
    c_like=True, caps_are_macros=False, signature_line=without_generics,
)
LANGUAGES["php"] = LanguageTable(
    defs=((_p(r"(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(?P<name>\w+)"), "class"),
          (_p(r"(?:(?:public|protected|private|static|abstract|final)\s+)*function\s+&?\s*(?P<name>\w+)"), "function")),
    containers=(_p(r"(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(?P<name>\w+)"),),
)
LANGUAGES["ruby"] = LanguageTable(
    defs=((_p(r"(?:class|module)\s+(?:[A-Z]\w*::)*(?P<name>[A-Z]\w*)"), "class"),
          (_p(r"def\s+(?:self\.)?(?P<name>[A-Za-z_]\w*)"), "function")),
    containers=(_p(r"(?:class|module)\s+(?:[A-Z]\w*::)*(?P<name>[A-Z]\w*)"),),
    keyword_blocks=True,
)
