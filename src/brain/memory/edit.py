"""Edits of one memory file's text in place: append, prepend, replace a section, find and replace.

Agents keep memory current by small changes (a line under "Next action", a fact fixed in a note);
rewriting the whole file for each means reading it, rebuilding it and racing every other writer.
These functions are pure (text in, text out) so the rules are tested apart from the disk; the one
write path (``Brain.edit`` -> ``Brain.write``) applies them over the version that was read, with its
hash as the expected one, so an edit is atomic and never lands on a file that changed meanwhile.

Headings are ATX headings (``#`` to ``######``) outside fenced code blocks; a section runs from its
heading to the next heading of the same or a higher level. Matching is by the heading's text, case
and surrounding space ignored, so ``Next action`` finds ``## Next action``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InvalidInput, NotFound

__all__ = ["EditResult", "OPERATIONS", "append", "prepend", "replace_section", "find_replace", "sections", "apply"]

OPERATIONS = ("append", "prepend", "section", "replace")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_FRONT_MATTER_END = re.compile(r"^---[ \t]*$")


@dataclass(frozen=True)
class EditResult:
    text: str
    changes: int  # lines appended/prepended as one change, a section replaced, or the occurrences replaced


def _block(text: str) -> str:
    """``text`` as whole lines: a final newline, no trailing blank lines."""
    return text.rstrip("\n") + "\n" if text.strip("\n") else ""


def sections(text: str) -> list[tuple[int, int, str, int]]:
    """Every heading outside fenced code: (line index, level, heading text, end line index of its section)."""
    lines = text.split("\n")
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        opener = _FENCE.match(line)
        if opener:
            mark = opener.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is None:
            heading = _HEADING.match(line)
            if heading:
                found.append((i, len(heading.group(1)), heading.group(2).strip()))
    out = []
    for k, (i, level, title) in enumerate(found):
        end = next((j for j, lv, _ in found[k + 1:] if lv <= level), len(lines))
        out.append((i, level, title, end))
    return out


def _body_start(text: str) -> int:
    """The offset past YAML front matter and a leading title heading: where a prepended line goes."""
    offset = 0
    lines = text.split("\n")
    index = 0
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if _FRONT_MATTER_END.match(lines[j]):
                index = j + 1
                break
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index < len(lines) and re.match(r"^#[ \t]", lines[index]):
        index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
    offset = sum(len(line) + 1 for line in lines[:index])
    return min(offset, len(text))


def append(text: str, addition: str) -> EditResult:
    """``addition`` as the last lines of ``text``."""
    block = _block(addition)
    if not block:
        raise InvalidInput("nothing to append: the text is empty", field="text")
    head = text.rstrip("\n")
    return EditResult((head + "\n" if head else "") + block, 1)


def prepend(text: str, addition: str) -> EditResult:
    """``addition`` as the first lines of the body: after front matter and a leading `# Title`."""
    block = _block(addition)
    if not block:
        raise InvalidInput("nothing to prepend: the text is empty", field="text")
    at = _body_start(text)
    before, after = text[:at], text[at:]
    if before and not before.endswith("\n"):
        before += "\n"
    gap = "\n" if before.strip() and not before.endswith("\n\n") else ""
    rest = ("\n" + after.lstrip("\n")) if after.strip() else ""
    return EditResult(before + gap + block + rest, 1)


def _wanted(heading: str) -> tuple[str, ...]:
    """The titles ``heading`` can mean, most literal first: the text as given, then without the `#` marks of
    a heading line (``## Next``). A section whose own title starts with `#` (the line ``# # x``) is found by
    its title, never mistaken for the section ``x``."""
    wanted = heading.strip()
    match = _HEADING.match(wanted)
    plain = wanted.casefold()
    return (plain, match.group(2).strip().casefold()) if match else (plain,)


def replace_section(text: str, heading: str, body: str) -> EditResult:
    """The body under ``heading`` (its heading line kept) replaced by ``body``; subsections go with it."""
    if not heading or not heading.strip():
        raise InvalidInput("give the heading of the section to replace", field="section")
    found = sections(text)
    hits: list[tuple[int, int, str, int]] = []
    for wanted in _wanted(heading):
        hits = [s for s in found if s[2].casefold() == wanted]
        if hits:
            break
    if not hits:
        known = ", ".join(f"`{s[2]}`" for s in sections(text)[:12]) or "none"
        raise NotFound(f"section `{heading.strip()}`", hint=f"the file's headings: {known}")
    if len(hits) > 1:
        raise InvalidInput(f"{len(hits)} sections are headed `{heading.strip()}`: the edit would be a guess",
                           field="section", hint="rename one heading, or use --replace with text unique to the file")
    start, _, _, end = hits[0]
    lines = text.split("\n")
    block = _block(body)
    tail = lines[end:]
    new = lines[:start + 1] + ([*block.rstrip("\n").split("\n")] if block else [])
    if tail and any(line.strip() for line in tail):
        new += [""] + tail
    else:
        new += [""] if text.endswith("\n") else []
    return EditResult("\n".join(new), 1)


def find_replace(text: str, old: str, new: str, *, expected: int | None = 1) -> EditResult:
    """Every occurrence of the literal ``old`` replaced by ``new``; ``expected`` occurrences must be there
    (``None``: any number but zero), so a replacement meant for one place never lands on three."""
    if not old:
        raise InvalidInput("give the text to replace", field="replace")
    found = text.count(old)
    if found == 0:
        raise NotFound(f"text `{old[:60]}`", hint="the file does not contain it (the match is literal and "
                                                  "case-sensitive); read the file again")
    if expected is not None and found != expected:
        raise InvalidInput(f"`{old[:60]}` occurs {found} times, not {expected}", field="count",
                           hint=f"pass --count {found} to replace all of them, or give longer text unique to the place")
    return EditResult(text.replace(old, new), found)


def apply(text: str, operation: str, *, value: str = "", heading: str | None = None, new: str = "",
          expected: int | None = 1) -> EditResult:
    """One edit by name (OPERATIONS), as the CLI and the MCP tool give it."""
    if operation == "append":
        return append(text, value)
    if operation == "prepend":
        return prepend(text, value)
    if operation == "section":
        return replace_section(text, heading or "", value)
    if operation == "replace":
        return find_replace(text, value, new, expected=expected)
    raise InvalidInput(f"unknown edit `{operation}`", field="operation", hint="one of: " + ", ".join(OPERATIONS))
