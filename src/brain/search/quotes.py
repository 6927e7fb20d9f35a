"""Text a task report quotes: messages and output lines a developer would grep the repository for.

An error or log message a user pasted (``panic: runtime error: index out of range``,
``Assertion failed: (0 && "Invalid value")``), a usage line, a quoted sentence of the
program's output: when a run of its words appears verbatim in one or a few source files,
that is very likely where the behaviour lives. Word matches (BM25) cannot see this; a
phrase can.

Extraction is pure and bounded: candidates come from lines that look like messages (an
error word under a short ``prefix:`` head, an exception's ``ValueError:`` head, a Rust
panic), long options with an inner dash (``--null-input``), backtick and double-quoted
spans with a space, and the program's output pasted in code blocks. The reporter's own
code (statements, calls, generics) is left out: it matches the library's examples and doc
comments that use the same calls, not where the behaviour lives; so are the source lines
under Python traceback frames (the frames name those files already). Each candidate is
kept as its words (``tokenize.WORD``), at most ``MAX_WORDS`` of them, at most
``MAX_CANDIDATES`` candidates. Every pattern is linear.

The repository side (``locate``) looks each window of ``WINDOW`` words up as an FTS5
phrase over the files' token stream (``tokenize.token_text`` keeps each word's tokens
in text order, so the phrase of a window's tokens matches the same words written in a
file); a window must hold two or more content words. A message's variable parts (a
number, a user's name) break only the windows that cross them.
"""

from __future__ import annotations

from itertools import chain

from .tokenize import STOPWORDS, WORD
from ..lazyre import lazy

__all__ = ["quoted_candidates", "phrase_windows", "MAX_CANDIDATES", "MAX_WORDS", "WINDOW"]

MAX_CANDIDATES = 40
MAX_WORDS = 24  # words kept of one candidate (its head: a message's constant part comes first)
MAX_LINE = 300  # longer lines are prose or data, not a message
WINDOW = 3  # words per looked-up phrase: short enough to survive a message's variable parts

_FENCE = lazy(r"^\s*(?:```|~~~)")
_BACKTICKED = lazy(r"`([^`\n]{2,160})`")
_DOUBLE_QUOTED = lazy(r'"([^"\n]{2,160})"')
_ERROR_WORD = lazy(
    r"(?i)\b(?:error|errors|panic|panicked|exception|fail|failed|failure|fatal|warning|assert|assertion|invalid|"
    r"cannot|can't|unable|unsupported|unexpected|unknown|missing|illegal|expected|denied|refused|abort|aborted)\b")
# a message has a short `prefix: ` head (`error: ...`, `jq: error (at <stdin>:0): ...`, `src/x.c:12:5: runtime error:`)
_MESSAGE_HEAD = lazy(r"^[^:\s][^:\n]{0,60}(?::\d+){0,3}:\s")
# a line of the reporter's own code (a statement, a block, an assignment) rather than the program's output: it
# matches the library's examples and doc comments that use the same calls, not where the behaviour lives
_CODE_SHAPE = lazy(r"[;{}]|\s=\s|::|=>|->|\w\(|\w<\w|^#|"
                         r"^(?:let|fn|def|func|var|const|import|use|from|return|if|for|while)\b")
# Python's and Java's `ValueError: ...`, `java.lang.IllegalStateException: ...`
_EXCEPTION_HEAD = lazy(r"^[A-Za-z_][\w.$]{0,100}(?:Error|Exception|Warning)(?::\s|$)")
# a Python traceback frame: the source line under it is the repository's own code, which the frame already names;
# the traceback's header is in every project that prints tracebacks
_PY_FRAME = lazy(r"^\s*File \"")
_PY_TRACEBACK = lazy(r"^Traceback \(most recent call last\)")
_PANIC_HEAD = lazy(r"^thread '[^'\n]{0,80}' panicked")
# a long command-line option of two words or more (`--null-input`, `--check-cfg`): one token, as specific as a
# phrase (a one-word option is a plain word to the index, `--help` is `help`)
_LONG_OPTION = lazy(r"(?<![\w-])--[A-Za-z][A-Za-z0-9]{0,40}[-_][\w-]{1,40}(?![\w-])")


def _words(text: str) -> tuple[str, ...]:
    out = []
    for word in WORD.findall(text):
        if word.strip("_"):
            out.append(word)
            if len(out) >= MAX_WORDS:
                break
    return tuple(out)


def quoted_candidates(text: str) -> list[tuple[str, ...]]:
    """Word sequences (3+ words each) the text quotes: message lines first, then long options
    (one word each, with their dashes), backtick and double-quoted spans, then code lines
    (pure; bounded count and length)."""
    messages: list[str] = []
    output: list[str] = []  # the program's output pasted in a code block: usage lines, logs
    fenced = after_frame = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        under_frame, after_frame = after_frame, bool(_PY_FRAME.match(line))
        if not stripped or len(stripped) > MAX_LINE or under_frame or after_frame or _PY_TRACEBACK.match(stripped):
            continue
        if _EXCEPTION_HEAD.match(stripped) or _ERROR_WORD.search(stripped) and (
                _MESSAGE_HEAD.match(stripped) or _PANIC_HEAD.match(stripped)):
            messages.append(stripped)
        elif (fenced or line.startswith(("    ", "\t"))) and not _CODE_SHAPE.search(stripped):
            output.append(stripped)
    # a span without a space is a name or a path (read as such elsewhere); one shaped as a statement is code
    spans = [m.group(1) for m in _BACKTICKED.finditer(text) if " " in m.group(1) and not _CODE_SHAPE.search(m.group(1))]
    spans += [m.group(1) for m in _DOUBLE_QUOTED.finditer(text) if " " in m.group(1)]
    options = {(m.group(),): None for m in _LONG_OPTION.finditer(text)}
    found: dict[tuple[str, ...], None] = {}
    for words in chain(map(_words, messages), options, map(_words, chain(spans, output))):
        if len(words) >= WINDOW or words in options:
            found.setdefault(words)
            if len(found) >= MAX_CANDIDATES:
                break
    return list(found)


def _content(word: str) -> bool:
    return len(word) > 1 and not word.isdigit() and word.lower() not in STOPWORDS


def phrase_windows(words: tuple[str, ...]) -> list[tuple[int, tuple[str, ...]]]:
    """(start, window) for the windows of ``WINDOW`` consecutive words worth looking up: two content
    words or more (``it does not``, ``in case of`` are in every codebase's comments); a long option
    is its own window."""
    if len(words) == 1 and words[0].startswith("--"):
        return [(0, words)]
    out = []
    for i in range(len(words) - WINDOW + 1):
        window = words[i : i + WINDOW]
        if sum(_content(w) for w in window) >= 2:
            out.append((i, window))
    return out
