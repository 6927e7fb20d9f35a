"""Offline token estimate used for every budget.

Budgets are hard, so the estimate must never undercount what a real BPE tokenizer
sees. One regular expression cuts text into the pieces BPE vocabularies tend to
produce (short letter chunks split at case changes, pairs of digits, one mark of
punctuation, a newline with its indentation; a single space rides on the next word)
and the estimate is their count, plus extra for characters outside ASCII (counted
by their UTF-8 bytes: a rare ideograph or an emoji costs a byte-level BPE one token
per byte) and for random-looking runs (keys, base64), which byte-level BPE splits
further. It needs no
vocabulary and no download; tests compare it with a real tokenizer.
"""

from __future__ import annotations

from .lazyre import lazy

__all__ = ["estimate_tokens", "joins_cleanly", "token_pieces", "tokens_of_count"]

_TOKEN = lazy(
    r"[A-Z]?[a-z]{1,4}"          # word chunks: "parse", "Http", "Response" -> Resp, onse
    r"|[A-Z]{1,3}(?![a-z])"       # capitals runs: "HTTP" -> HTT, P
    r"|\d{1,2}"                   # digits in pairs
    r"|\n[^\S\n]*"                # a newline with the indentation after it
    r"|[^\S\n]{2,}|\t"            # runs of spaces or tabs, a lone tab (a single space is free)
    r"|[^\sA-Za-z\d]",            # anything else, one character each (punctuation, other scripts)
)
_NON_ASCII = lazy(r"[^\x00-\x7f]+")
_SPACE_BEFORE_NON_ASCII = lazy(r" (?=[^\x00-\x7f])")
# long unbroken runs mixing lower case, upper case and digits: keys, hashes, base64
_BLOB = lazy(r"[A-Za-z0-9+/=]{8,}")


def estimate_tokens(text: str) -> int:
    """Return an upper-leaning estimate of the BPE token count of ``text``."""
    if not text:
        return 0
    return tokens_of_count(token_pieces(text), text)


def tokens_of_count(count: int, text: str) -> int:
    """The estimate of ``text`` given its ``token_pieces`` count (the trailing space and the merges added)."""
    if text and text[-1] in " \t":
        count += 1  # a trailing space has no word to ride on
    # a tenth more for merges the pieces above cannot see ("pya" is two tokens, not one)
    return count + (count + 9) // 10


def joins_cleanly(left: str, right: str) -> bool:
    """Whether ``token_pieces(left + right) == token_pieces(left) + token_pieces(right)``: ``left`` ends a line
    and ``right`` starts with neither a space nor a tab. No piece, run or blob holds a newline except a
    newline piece at its start, which takes only the spaces after it: the pieces of ``left`` end at its
    last newline's piece, those of ``right`` start at its first character, as they do alone."""
    return not left or not right or (left[-1] == "\n" and (right[0] == "\n" or not right[0].isspace()))


def token_pieces(text: str) -> int:
    """The pieces counted for ``text``, before the trailing space and the tenth for merges (see
    ``joins_cleanly`` for when the counts of two texts add up to their concatenation's)."""
    if not text:
        return 0
    count = len(_TOKEN.findall(text))
    if not text.isascii():
        # a byte-level BPE spends up to one token per UTF-8 byte on a rare character (a CJK ideograph
        # is 3 bytes, an emoji 4), and the space before one does not merge into it: count bytes
        # (after the NFKC normalization tokenizers apply: "΅" becomes a space and two combining marks)
        import unicodedata

        for run in _NON_ASCII.findall(text):
            normal = unicodedata.normalize("NFKC", run)
            count += len(normal.encode("utf-8")) - len(run) + normal.count(" ")
        count += len(_SPACE_BEFORE_NON_ASCII.findall(text))
    for blob in _BLOB.findall(text):
        if not (blob.isalpha() or blob.isdigit() or blob.islower() or blob.isupper()):
            # BPE shreds random-looking text to about 1.4 characters a token
            count += max(0, (len(blob) * 5 + 6) // 7 - len(_TOKEN.findall(blob)))
    return count
