"""Offline token estimate used for every budget.

Budgets are hard, so the estimate must never undercount what a real BPE tokenizer
sees. It counts pieces the way BPE pre-tokenizers split text (runs of letters,
digits, single punctuation marks, whitespace) and charges each run by length.
It needs no vocabulary and no download; tests compare it with a real tokenizer.
"""

from __future__ import annotations

import re

__all__ = ["estimate_tokens"]

# letters (any script), digits, whitespace runs, and everything else one char at a time
_PIECE = re.compile(r"[^\W\d_]+|\d+|\s+|.", re.UNICODE | re.DOTALL)
# case segments inside an ASCII word: "parseHTTPResponse" -> parse, HTTP, Response
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def estimate_tokens(text: str) -> int:
    """Return an upper-leaning estimate of the BPE token count of ``text``."""
    if not text:
        return 0
    total = 0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first.isalpha():
            if piece.isascii():
                # common English words are one token; long identifiers split every ~4 chars
                segments = _SEGMENT.findall(piece)
                if len(segments) * 3 > len(piece):
                    # random-looking case changes (keys, base64): BPE shreds them
                    total += (2 * len(piece) + 2) // 3
                    continue
                for seg in segments:
                    total += 1 if len(seg) <= 4 else (len(seg) + 3) // 4
            else:
                # non-Latin scripts: roughly a token per character or two
                total += len(piece)
        elif first.isdigit():
            total += (len(piece) + 1) // 2
        elif first.isspace():
            # a single space rides on the next word; indentation rides on its newline
            newlines = piece.count("\n")
            total += newlines if newlines else (0 if len(piece) == 1 else 1)
        else:
            total += 1 if first.isascii() else len(first.encode("utf-8"))
    return total
