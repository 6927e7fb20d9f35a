"""The YAML-free front matter reader agrees with YAML whenever it answers (property test)."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from brain.memory.layers import _simple_front_matter, parse_front_matter

WORDS = st.sampled_from(["hot", "warm", "build", "review", "a-b", "x.y", "3", "true", "False", "null", "yes",
                         "two words", "'quoted'", "a: b", "#x", "[1]", "", "日本", "on", "0x10", "1.5", "010",
                         "TRUE", "Yes", "-x", "x:y", "a,b", "x #c", "2026-01-01", "1e3", ".inf", "No"])
KEYS = st.sampled_from(["tier", "roles", "name", "requires", "triggers", "context_tier", "x-y"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, st.one_of(WORDS, st.lists(WORDS, max_size=4))), max_size=6))
def test_simple_reader_agrees_with_yaml(entries):
    lines = []
    for key, value in entries:
        lines.append(f"{key}: [{', '.join(value)}]" if isinstance(value, list) else f"{key}: {value}")
    block = "\n".join(lines)
    mine = _simple_front_matter(block)
    if mine is None:
        return  # handed to YAML: nothing to compare
    try:
        expected = yaml.safe_load(block) or {}
    except yaml.YAMLError:
        raise AssertionError(f"simple reader accepted what YAML refuses: {block!r}")
    assert mine == expected


def test_profile_front_matter_parsed_with_and_without_yaml():
    meta, body = parse_front_matter("---\ntier: hot\nroles: [build, review]\n---\nBody.\n", "x.md")
    assert meta == {"tier": "hot", "roles": ["build", "review"]} and body == "Body.\n"
    meta, _ = parse_front_matter("---\ntier: hot\nroles:\n  - build\n---\nB\n", "x.md")
    assert meta == {"tier": "hot", "roles": ["build"]}
