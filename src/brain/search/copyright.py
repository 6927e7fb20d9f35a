"""Who holds the copyright a source file's head names: the sign that tells code copied in from elsewhere.

Pure text work on a file's first lines, apart from ``read_head``; ``code.vendored_folders`` compares the holders
a folder's files name with the project's own to find third-party code kept in the tree.
"""

from __future__ import annotations

import re

from ..lazyre import lazy

__all__ = ["HEAD_CHARS", "copyright_holder", "read_head"]

_COPYRIGHT = lazy(r"copyright\b", re.I)
_COPYRIGHT_SIGN = lazy(r"\(c\)|\N{COPYRIGHT SIGN}|&copy;", re.I)
_HOLDER_WORD = lazy(r"[^\W\d_][\w'.\-]*|\d+")
# words of a copyright line that name no one in particular
_HOLDER_FILLER = frozenset(
    "the and others inc incorporated corporation corp co company ltd limited llc gmbh ag sa authors author "
    "contributors by of its affiliates present copyright holders holder portions parts".split())
_HOLDER_END = frozenset("all licensed see this use permission under".split())
HEAD_CHARS = 3000  # a file's copyright notice sits in its first lines


def copyright_holder(head: str, lines: int = 40) -> frozenset[str]:
    """The words naming the holder of the first copyright notice in ``head`` (empty when none).

    `/* Copyright (c) IBM Corporation, 2000, 2010.  All rights reserved. */` -> {"ibm"};
    `// Copyright 2019 The Go Authors.` -> {"go"}. A notice is `Copyright` followed by `(c)`, `©`
    or a year, so prose about "the copyright owner" is not one."""
    for line in head.split("\n")[:lines]:
        match = _COPYRIGHT.search(line)
        if not match:
            continue
        rest = line[match.end(): match.end() + 160]
        signed = bool(_COPYRIGHT_SIGN.match(rest.lstrip()))
        words = _HOLDER_WORD.findall(_COPYRIGHT_SIGN.sub(" ", rest))
        if not words or not (signed or words[0].isdigit()):
            continue
        name: list[str] = []
        for word in words:
            low = word.lower().strip(".'-")
            if word.isdigit():
                if name:
                    break
                continue
            if low in _HOLDER_END:
                break
            if low and low not in _HOLDER_FILLER and "@" not in low:
                name.append(low)
            if len(name) == 3:
                break
        if name:
            return frozenset(name)
    return frozenset()


def read_head(path: str) -> str:
    """The first ``HEAD_CHARS`` characters of a file (empty when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(HEAD_CHARS)
    except OSError:
        return ""
