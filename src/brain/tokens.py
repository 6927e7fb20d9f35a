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

__all__ = ["estimate_tokens"]

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
    if text[-1] in " \t":
        count += 1  # a trailing space has no word to ride on
    for blob in _BLOB.findall(text):
        if not (blob.isalpha() or blob.isdigit() or blob.islower() or blob.isupper()):
            # BPE shreds random-looking text to about 1.4 characters a token
            count += max(0, (len(blob) * 5 + 6) // 7 - len(_TOKEN.findall(blob)))
    # a tenth more for merges the pieces above cannot see ("pya" is two tokens, not one)
    return count + (count + 9) // 10
