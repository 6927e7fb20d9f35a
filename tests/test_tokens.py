"""The offline estimate never undercounts a real BPE tokenizer (vocabulary shipped in a package)."""

from __future__ import annotations

import base64
import functools
import importlib.resources
import inspect
import json
import os
import random

import pytest
from hypothesis import example, given, settings, strategies as st

from brain.tokens import estimate_tokens


@functools.lru_cache(maxsize=1)
def tokenizer():
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(importlib.resources.files("anthropic") / "tokenizer.json"))


def real(text: str) -> int:
    return len(tokenizer().encode(text).ids)


def corpus() -> list[tuple[str, str]]:
    rng = random.Random(7)
    samples = [(m.__name__, inspect.getsource(m)) for m in (argparse_mod(), json, os, random)]
    samples += [
        ("prose", "The boot puts now.md first, then the checkpoint and the module card. " * 40),
        ("french", "Le canal de push garanti est assuré par now.md, lu en slot prioritaire. " * 40),
        ("cjk", "这是一个测试文本，用于检查中文的分词数量。" * 40),
        ("emoji", "🚀✨🔥 done " * 80),
        ("base64", base64.b64encode(rng.randbytes(3000)).decode()),
        ("hex", rng.randbytes(2000).hex()),
        ("json", json.dumps({f"key_{i}": [i, str(i) * 3, {"nested": True}] for i in range(200)})),
        ("markdown-table", "| a | b | c |\n|---|---|---|\n" + "| `x_y` | 12 | zz |\n" * 100),
    ]
    return samples


def argparse_mod():
    import argparse

    return argparse


@pytest.mark.parametrize("name,text", corpus(), ids=[n for n, _ in corpus()])
def test_estimate_is_an_upper_bound_on_varied_text(name, text):
    assert estimate_tokens(text) >= real(text)


WORDS = ["def", "parse_http_response", "HTTPServer", "ok", "42", "3.14159", "é", "über", "日本", "🙂", "a/b/c.py",
         "x" * 30, "# note", "AbCdEf12", "==", "->", "self.cache[key]", "return None", "ValueError:", "sha256:9f86d08"]
SEPARATORS = [" ", "\n", "\n    ", ", ", "(", ")", ": ", "\t", "."]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), min_size=1, max_size=200))
@example([("def", " "), ("日本", " "), ("日本", " ")])  # rare ideographs after spaces: once undercounted (7 < 8)
def test_estimate_bounds_code_and_prose_built_from_real_pieces(pairs):
    """Words and identifiers separated the way code and prose separate them: the estimate holds."""
    text = "".join(word + sep for word, sep in pairs)
    assert estimate_tokens(text) >= real(text)


def test_estimate_is_not_wildly_pessimistic_on_prose():
    text = "Agents forget between sessions and after context compaction. " * 50
    assert estimate_tokens(text) <= 2 * real(text)


@pytest.mark.parametrize("first,last", [(0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x3040, 0x30FF), (0x0400, 0x04FF),
                                        (0x0370, 0x03FF), (0x0600, 0x06FF), (0x0900, 0x097F), (0x1F300, 0x1F5FF)],
                         ids=["cjk", "hangul", "kana", "cyrillic", "greek", "arabic", "devanagari", "emoji"])
def test_estimate_bounds_every_character_of_a_script_alone_and_after_a_space(first, last):
    """Rare characters cost a byte-level BPE up to a token per UTF-8 byte: each one, then all of them."""
    chars = [chr(i) for i in range(first, last + 1)]
    assert all(estimate_tokens(" " + c) >= real(" " + c) for c in chars)
    for joiner in ("", " "):
        text = joiner.join(chars)
        assert estimate_tokens(text) >= real(text)


PIECES = ["## Title\n\n", "text\n", "\n", "  indented\n", "\tx\n", "word", " ", "日本\n", "🙂 ", "AbCdEf12+/=xyz\n",
          "HTTPServer\n", "end \n", "", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_pieces_of_texts_joined_cleanly_add_up(chunks):
    """``pack`` counts a boot's text from its sections' counts: exact wherever ``joins_cleanly`` says so."""
    from brain.tokens import joins_cleanly, token_pieces, tokens_of_count

    text = "".join(chunks)
    kept = [c for c in chunks if c]
    if all(joins_cleanly(a, b) for a, b in zip(kept, kept[1:])):
        assert token_pieces(text) == sum(token_pieces(c) for c in kept)
        assert tokens_of_count(sum(token_pieces(c) for c in kept), text) == estimate_tokens(text)
    assert tokens_of_count(token_pieces(text), text) == estimate_tokens(text)


def test_joins_cleanly_only_at_a_line_end_before_no_space():
    from brain.tokens import joins_cleanly

    assert joins_cleanly("a\n", "b") and joins_cleanly("a\n", "\nb") and joins_cleanly("", " b")
    assert not joins_cleanly("a", "b") and not joins_cleanly("a\n", "  b") and not joins_cleanly("a\n", "\tb")
