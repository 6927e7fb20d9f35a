"""Stack traces and compiler diagnostics of Go, Rust, Java/Kotlin, JavaScript/TypeScript, C and C++.

A bug report's trace names the files the fault went through; the deepest frame inside the
repository is the best single clue. Each language prints its frames in its own shape and
order, so each has a row in ``SHAPES``: a pattern for one line, and whether that language
prints the innermost frame first (Go, Java, JavaScript, Rust backtraces, sanitizers) or last.
``trace_frames`` returns every frame outermost first, so the last one is the deepest, the
order Python tracebacks already have.

Lines are matched one at a time with anchored patterns (no nested quantifiers) and lines
longer than ``MAX_LINE`` are skipped: a report's text is untrusted input.
"""

from __future__ import annotations

import re

from ..lazyre import lazy
from ..records import record

__all__ = ["SHAPES", "TraceShape", "trace_frames", "MAX_LINE"]

MAX_LINE = 1000
MAX_LINES = 20_000
_C_EXT = r"(?:c|h|cc|cpp|cxx|c\+\+|hpp|hh|hxx|h\+\+|inl|ipp|tpp|m|mm)"
_JS_EXT = r"(?:js|mjs|cjs|jsx|ts|tsx|mts|cts|vue|svelte)"


@record(frozen=True)
class TraceShape:
    """One language's frame line: ``pattern`` has a ``path`` group (or ``java_file`` + ``func``)
    and optionally ``func``; ``innermost_first`` when the language prints the fault's frame first;
    ``section`` starts a new block whose frames are ordered on their own (Java's ``Caused by:``)."""

    name: str
    pattern: re.Pattern
    innermost_first: bool
    section: re.Pattern | None = None
    find: str | None = None  # the pattern is matched from this marker on, wherever it is in the line


SHAPES: tuple[TraceShape, ...] = (
    # Go panic: "main.(*T).Run(...)" then "\t/home/u/app/pkg/run.go:12 +0x1d"
    TraceShape("go", lazy(r"\s+(?P<path>[^\s:]+\.go):(?P<line>\d+)(?:\s+\+0x[0-9a-fA-F]+)?\s*$"), True,
               section=lazy(r"goroutine \d+ \[")),
    # Java/Kotlin: "\tat com.x.core.JsonParser.next(JsonParser.java:42)"; "Caused by: ..." starts a block
    TraceShape("java", lazy(r"\s*at (?:[\w.\-]+/)?(?P<func>[\w$.<>]+)\((?P<java_file>[\w$]+\.(?:java|kt|scala|groovy)):"
                                  r"(?P<line>\d+)\)"), True, section=lazy(r"\s*Caused by:")),
    # JavaScript: "    at render (/app/src/cards/card.js:12:5)" or "    at /app/src/x.js:3:9"
    TraceShape("js", lazy(r"\s*at (?:(?:async |new )?(?P<func>[^\s()]+)(?: \[as [^\]\s]+\])? \()?(?:file://|webpack:///?)?"
                                r"(?P<path>[^\s():]+\." + _JS_EXT + r"):(?P<line>\d+)(?::\d+)?\)?\s*$"), True),
    # Rust backtrace: "  12: tokio::runtime::park" then "             at ./tokio/src/runtime/park.rs:98:5"
    TraceShape("rust", lazy(r"\s*at (?:\./)?(?P<path>[^\s:]+\.rs):(?P<line>\d+)(?::\d+)?\s*$"), True,
               section=lazy(r"stack backtrace:")),
    # Rust panic location (after the backtrace's frames: it is the deepest): "thread 'main' panicked at src/x.rs:12:5:" (or "at 'msg', src/x.rs:12:5")
    TraceShape("rust-panic", lazy(r"panicked at (?:'[^'\n]*', )?(?P<path>[^\s:]+\.rs):(?P<line>\d+)(?::\d+)?"), False,
               find="panicked at "),
    # C/C++ sanitizers and gdb: "#0 0x4005d4 in jv_free /src/jv.c:123:4", "#1 0x.. in f (a=1) at src/x.c:9"
    TraceShape("c-frame", lazy(r"\s*#\d+\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(?P<func>[\w:~<>]+)\s*(?:\([^()\n]*\)\s*)?"
                                     r"(?:at\s+)?(?P<path>[^\s:()]+\." + _C_EXT + r"):(?P<line>\d+)"), True),
    # C/C++ compiler: "include/fmt/core.h:1234:5: error: ..." (gcc, clang) and "x.cpp(12): error C2039" (MSVC)
    TraceShape("c-error", lazy(r"\s*(?P<path>[^\s:()]+\." + _C_EXT + r")(?::(?P<line>\d+)(?::\d+)?:|\((?P<mline>\d+)(?:,\d+)?\)\s*:)"
                                     r"\s*(?P<level>fatal error|error|warning|note|required from|In instantiation)"), True),
)


def _java_path(func: str, file: str) -> str:
    """``com.x.core.JsonParser$1.next`` in ``JsonParser.java`` -> ``com/x/core/JsonParser.java``."""
    owner = func.rsplit(".", 1)[0] if "." in func else ""
    package = owner.rsplit(".", 1)[0] if "." in owner else ""
    return f"{package.replace('.', '/')}/{file}" if package else file


def trace_frames(text: str) -> tuple[list[tuple[str, str]], set[int]]:
    """(frames outermost first as (path, function), indices of the lines they came from)."""
    frames: list[tuple[str, str]] = []
    used: set[int] = set()
    lines = text.split("\n")[:MAX_LINES]
    for shape in SHAPES:
        blocks: list[list[tuple[str, str]]] = [[]]
        errors: list[tuple[str, str]] = []
        previous = ""
        for number, line in enumerate(lines):
            if len(line) > MAX_LINE:
                previous = ""
                continue
            if shape.section is not None and shape.section.match(line):
                blocks.append([])
            subject = line
            if shape.find is not None:
                at = line.find(shape.find)
                if at < 0:
                    previous = line
                    continue
                subject = line[at:]
            match = shape.pattern.match(subject)
            if match is None:
                previous = line
                continue
            groups = match.groupdict()
            func = groups.get("func") or ""
            if groups.get("java_file"):
                path = _java_path(func, groups["java_file"])
                func = func.rsplit(".", 1)[-1]
            else:
                path = groups["path"]
            if shape.name in ("go", "rust") and not func:
                # the frame's function is on the line above: "pkg/path.(*T).Method(0xc0...)", "12: crate::f"
                func = previous.strip().split(": ", 1)[-1].rsplit("/", 1)[-1]
                func = (func.rsplit("(", 1)[0] if func.endswith(")") else func)[:120]
            used.add(number)
            frame = (path.replace("\\", "/"), func)
            if shape.name == "c-error" and "error" in (groups.get("level") or ""):
                errors.append(frame)  # the error itself is where the fault shows; notes lead back out
            else:
                blocks[-1].append(frame)
            previous = line
        ordered: list[tuple[str, str]] = []
        for block in blocks:
            ordered.extend(reversed(block) if shape.innermost_first else block)
        ordered.extend(reversed(errors))
        frames.extend(ordered)
    return frames, used
