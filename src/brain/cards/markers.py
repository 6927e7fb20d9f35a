"""The card file format: a generated block between markers, then the human "How to use".

    <!-- brain:generated:begin ... -->
    # Module `name`
    <!-- brain:source sha256:HEX files:N -->
    ...generated sections...
    <!-- brain:generated:end -->

    ## How to use

    ...human text, kept byte for byte...

The generated block always comes first and never contains a marker line (generated
text is sanitised), so the first end-marker line is the real one whatever the human
section holds. Everything after the How to use heading is the human's, to the last byte.
"""

from __future__ import annotations

import re

from ..records import field, record
from ..lazyre import lazy

__all__ = ["BEGIN", "END", "HOW_TO_USE_HEADING", "PLACEHOLDER", "ParsedCard", "parse_card", "join_card",
           "sanitize", "split_sections", "SOURCE_RE"]

BEGIN = "<!-- brain:generated:begin (written by `brain map`; edit only the How to use section) -->"
END = "<!-- brain:generated:end -->"
HOW_TO_USE_HEADING = "## How to use"
_SEPARATOR = "\n" + HOW_TO_USE_HEADING + "\n\n"
PLACEHOLDER = ("_Not written yet. Say here how to use this module (entry points, invariants, pitfalls); "
               "`brain report-done --module M --how-to-use F` replaces this section._\n")
SOURCE_RE = lazy(r"^<!-- brain:source sha256:([0-9a-f]{64}) files:(\d+) -->$", re.M)


def sanitize(text: str) -> str:
    """Generated text never carries anything that could be read as a marker."""
    return text.replace("<!--", "<!-").replace("-->", "->")


@record
class ParsedCard:
    generated: str                # the generated block, markers included
    human: str                    # the How to use text, byte for byte
    source_hash: str | None = None
    file_count: int | None = None
    intact: bool = True           # False when the markers were damaged (the human text is then kept whole)
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def human_written(self) -> bool:
        return bool(self.human.strip()) and self.human != PLACEHOLDER


def split_sections(generated: str) -> dict[str, str]:
    """``## Title`` -> body (without the heading), for the generated block."""
    sections: dict[str, str] = {}
    current = None
    lines: list[str] = []
    for line in generated.splitlines():
        if line.startswith("## "):
            if current is not None:
                sections[current] = "\n".join(lines).strip("\n")
            current = line[3:].strip()
            lines = []
        elif line in (END,):
            continue
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip("\n")
    return sections


def parse_card(text: str) -> ParsedCard:
    """Split a card into its generated block and its human section, never losing human text."""
    end_line = "\n" + END + "\n"
    if text.startswith(BEGIN + "\n"):
        idx = text.find(end_line)
        if idx >= 0:
            generated = text[: idx + len(end_line)]
            rest = text[idx + len(end_line):]
            if rest.startswith(_SEPARATOR):
                human = rest[len(_SEPARATOR):]
            else:
                # the heading was edited: keep everything after the block as the human text
                heading = "\n" + HOW_TO_USE_HEADING + "\n"
                human = rest[len(heading):].lstrip("\n") if rest.startswith(heading) else rest.lstrip("\n")
            match = SOURCE_RE.search(generated)
            return ParsedCard(generated, human, match.group(1) if match else None,
                              int(match.group(2)) if match else None, True, split_sections(generated))
    # markers damaged or absent: nothing generated can be trusted, and nothing human is dropped
    return ParsedCard("", text, None, None, False, {})


def join_card(generated: str, human: str) -> str:
    """The card text from a generated block (ending with the end marker line) and the human text."""
    if not generated.endswith("\n" + END + "\n"):
        raise ValueError("generated block must end with the end marker line")
    return generated + _SEPARATOR + (human if human else PLACEHOLDER)
