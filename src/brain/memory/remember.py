"""`brain remember TEXT`: file a one-line memory where it belongs, without the user choosing a path.

A fact worth keeping ("the staging database is reset every Sunday") is lost when filing it means
deciding on a file name first. The place is the note already about the fact's subject — the note that
shares most of the fact's content words, at least two, one of them in its title, its headings or its
file name — else `notes/inbox.md`, which a person sorts later. The fact goes in as a bullet at the end, through
``Brain.edit`` (atomic over the version read, territories and redaction applied), so a remembered
line is a small reviewable diff in the project's memory.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput

__all__ = ["MAX_CHARS", "INBOX", "remember", "choose_place"]

MAX_CHARS = 500
INBOX = "notes/inbox.md"
INBOX_HEAD = "# Inbox\n\nOne-line memories `brain remember` filed where no note was about them: move each where it belongs.\n"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,39}")
_HEADINGS = re.compile(r"^#{1,6}[ \t]+(.{1,200})$", re.MULTILINE)
MIN_SHARED = 2  # words the fact shares with the note's text, one of them in its title, headings or name
MAX_NOTE_CHARS = 20_000
MAX_NOTES = 2000  # a remember reads at most this many notes (their first MAX_NOTE_CHARS)


def _content_words(text: str) -> set[str]:
    from ..search.tokenize import STOPWORDS

    return {w.lower() for w in _WORD.findall(text)} - STOPWORDS


def _checked(text) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("nothing to remember: give the fact as one line of text", field="text")
    line = " ".join(text.split())
    if "\n" in text.strip():
        raise InvalidInput("a memory to remember is one line", field="text",
                           hint="for a longer text write a note: `brain write note NAME < file.md`")
    if len(line) > MAX_CHARS:
        raise InvalidInput(f"a remembered line is at most {MAX_CHARS} characters, not {len(line)}", field="text",
                           hint="for a longer text write a note: `brain write note NAME < file.md`")
    return line


def choose_place(brain, line: str) -> tuple[str, str]:
    """The memory path for ``line`` and why it was chosen: of the notes (the first MAX_NOTES by
    path), the one sharing most of the line's words, at least MIN_SHARED, one in its title, headings or
    name; ties go to the shorter path. Else the inbox."""
    words = _content_words(line)
    best: tuple[int, int, str, set[str]] | None = None
    if len(words) >= MIN_SHARED:
        notes = [n for n in brain.notes() if n.path.startswith("notes/") and n.path != INBOX
                 and not n.path.startswith("notes/private")]
        for note in notes[:MAX_NOTES]:
            doc = brain.memory.read_or_none(note.path)
            if doc is None:
                continue
            body = doc.text[:MAX_NOTE_CHARS]
            heads = " ".join(_HEADINGS.findall(body)) + " " + note.path.rsplit("/", 1)[-1].removesuffix(".md")
            about = words & _content_words(heads.replace("-", " ").replace("_", " "))
            shared = words & _content_words(body)
            if about and len(shared | about) >= MIN_SHARED:
                key = (len(about) + len(shared | about), -len(note.path))
                if best is None or key > best[:2]:
                    best = (*key, note.path, about)
    if best is not None:
        return best[2], f"the note about {', '.join(sorted(best[3])[:4])}"
    return INBOX, "no note is about it yet: the inbox, to sort later"


def remember(brain, text: str, *, role: str | None = None, reason: str | None = None) -> dict:
    """File ``text`` (one line) as a bullet in the note about it, or in the inbox; returns where and why."""
    from ..errors import Conflict

    line = _checked(text)
    path, why = choose_place(brain, line)
    for attempt in range(3):  # another writer appended meanwhile: nothing was written, read again and append
        bullet = f"- {line}"
        current = brain.memory.read_or_none(path)
        if path == INBOX and current is None:
            bullet = INBOX_HEAD + "\n" + bullet
        try:
            doc, _ = brain.edit(path, "append", value=bullet, role=role, reason=reason or "remember",
                                expected_hash=current.hash if current else None)
            break
        except Conflict:
            if attempt == 2:
                raise
    return {"path": doc.path, "why": why, "hash": doc.hash, "text": line,
            "redacted": [{"kind": k, "count": n} for k, n in doc.redacted]}
