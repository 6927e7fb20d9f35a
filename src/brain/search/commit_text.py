"""What the shape of a commit message (or a title written like one) says, before any repository is read (pure).

Commit messages carry text no code is named by: trailers (`Signed-off-by:`, `Co-authored-by:`,
`PiperOrigin-RevId:`, `RELNOTES=`), the `Merge pull request #12 from user/branch` line and the `-----`
rules squash merges write. Their words (`merge`, `pull`, `request`, `signed`) match files that have
nothing to do with the change, so ``strip_boilerplate`` drops them before the signals are read. The
`(#1234)` number of the pull request stays: dropping it too lost two held-out corpus tasks and gained
none (decision 0034).

They also carry what a report rarely does: the area the change is in, written as a prefix of
the title: a conventional-commit scope (`fix(router): ...`, `feat(vue-query)!: ...`), a bracketed
area (`[Serializer] ...`, `[locale] ...`) or a leading component name (`Selector: ...`,
`net/http: ...`). ``title_scopes`` returns those names; ``evidence.scope`` matches them to the
folders and file names of the repository. The kind words of the conventions (`fix`, `feat`,
`chore`, `bugfix`...), issue keys (`LANG-1721`) and versions (`3.x`) are not areas.

Every pattern here is applied to one line at a time and has no nested repetition: linear in
the text's length.
"""

from __future__ import annotations

import re
from brain.lazyre import lazy

__all__ = ["strip_boilerplate", "title_scopes", "member_refs", "KIND_WORDS"]

# the kind words of conventional commits and of the common bracketed tags: a change's kind, not its area
KIND_WORDS = frozenset((
    "feat feature features fix fixes fixed fixing bugfix bugfixes bug bugs hotfix chore chores docs doc "
    "documentation refactor refactoring perf performance test tests testing build ci style styles revert "
    "reverts misc minor major breaking deps dependencies dep wip release security improvement improvements "
    "enhancement enhancements change changes update updates add added remove removed cleanup clean fixup "
    "internal tweak typo typos new deprecate deprecated deprecation example examples lint format formatting "
    "merge merged tooling infra ng n/a na todo note").split())

# `Key-Word: value` trailers git and review tools append, and the `RELNOTES=`/`MOE_...=` markers
_TRAILER = lazy(
    r"^\s*(?:(?:signed-off|co-authored|reviewed|acked|reported|tested|suggested|requested|helped|cc|"
    r"approved|authored|committed)-by|change-id|piperorigin-revid|fixes-issue|bug|closes|differential revision|"
    r"reviewers|subscribers|pulled by|original commit|git-svn-id)\s*:.*$"
    r"|^\s*(?:relnotes|moe_migrated_revid|piperorigin-revid)\s*=.*$"
    r"|^\s*created by moe:.*$",
    re.I,
)
_MERGE_LINE = lazy(r"^\s*merge (?:pull request|branch|remote-tracking branch)\b.*$", re.I)
_RULE = lazy(r"^\s*[-=*_]{3,}\s*$")

# the title's prefix: `kind(scope)!:` / `[scope]` (one or more) / `scope:` (one word or a slashed path)
_CONVENTIONAL = lazy(r"^\s*([A-Za-z][\w\-]{0,20})\(([^()\n]{1,60})\)!?\s*:\s")
_BRACKETS = lazy(r"^\s*((?:\[[^\[\]\n]{1,40}\]\s*){1,3})")
_BRACKET = lazy(r"\[([^\[\]\n]{1,40})\]")
_PREFIX = lazy(r"^\s*([A-Za-z_][\w.\-]{0,40}(?:/[A-Za-z_][\w.\-]{0,40}){0,4})\s*:\s")
_ISSUE_KEY = lazy(r"^[A-Za-z]{1,12}-\d+$")
_VERSION = lazy(r"^v?\d+(?:\.(?:\d+|x))*$", re.I)
_SPLIT = lazy(r"[,|+&\s]+")
_WORD_START = lazy(r"[A-Za-z_]")
# `Chain#withConnectTimeout`, `Liquid::ParseContext#parse_expression`: a member written the Javadoc/Ruby way
_MEMBER = lazy(r"(?<![\w#])([A-Za-z_]\w*(?:(?:::|\.)[A-Za-z_]\w*){0,6})#([A-Za-z_]\w*[?!]?)")


def strip_boilerplate(text: str) -> str:
    """``text`` without the trailers, merge lines and rules of a commit message (its first line always stays)."""
    lines: list[str] = []
    for line in text.split("\n"):
        if _MERGE_LINE.match(line) or _RULE.match(line) or (lines and _TRAILER.match(line)):
            continue  # (a first line is the title even when it reads `Bug: ...`)
        lines.append(line)
    return "\n".join(lines)


def _area(name: str) -> str | None:
    name = name.strip().strip("`'\"").strip()
    if not name or len(name) > 60:
        return None
    low = name.lower()
    if low in KIND_WORDS or _ISSUE_KEY.match(name) or _VERSION.match(name) or not _WORD_START.match(name):
        return None
    return name


def title_scopes(title: str) -> list[str]:
    """The areas a commit title's prefix names, in order (see the module doc): `fix(a, b/c): x` -> [a, b/c]."""
    title = title.split("\n", 1)[0][:300]
    found: list[str] = []
    match = _CONVENTIONAL.match(title)
    if match:
        found.extend(_SPLIT.split(match.group(2)))
    else:
        match = _BRACKETS.match(title)
        if match:
            for inner in _BRACKET.findall(match.group(1)):
                found.extend(_SPLIT.split(inner))
            rest = _PREFIX.match(title[match.end():])  # `[bugfix] core: ...`
            if rest:
                found.append(rest.group(1))
        else:
            match = _PREFIX.match(title)
            if match:
                found.append(match.group(1))
    out: list[str] = []
    for name in found:
        area = _area(name)
        if area and area not in out:
            out.append(area)
    return out


def member_refs(text: str) -> list[str]:
    """`Type#member` references of the text as dotted names (`Chain#withConnectTimeout` -> `Chain.withConnectTimeout`)."""
    if "#" not in text:
        return []
    out: list[str] = []
    for match in _MEMBER.finditer(text):
        dotted = match.group(1).replace("::", ".") + "." + match.group(2).rstrip("?!")
        if dotted not in out:
            out.append(dotted)
    return out
