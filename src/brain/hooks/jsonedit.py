"""Text-level JSON edits: add a member to an object or an element to an array, keeping every other byte.

Re-serializing a user's settings file would rewrite their formatting (key spacing, inline
arrays, indentation). Instead the file is scanned once for the byte spans of its values,
and brain's entries are inserted as text in the style around them (one member per line at
the sibling's indentation, or inline for a compact object), so removing the inserted text
gives the user's file back exactly. Only valid JSON is edited (it is parsed first).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["Node", "scan", "find", "add_member", "add_element", "remove_member", "remove_element", "read_json_object"]

_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


@dataclass
class Node:
    kind: str  # object | array | scalar
    start: int  # offset of the first character ('{', '[', or the scalar)
    end: int  # offset just past the last character
    members: list[tuple[str, int, "Node"]] = field(default_factory=list)  # objects: (key, key offset, value)
    items: list["Node"] = field(default_factory=list)  # arrays


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while True:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1


def _value(text: str, i: int) -> Node:
    i = _ws(text, i)
    c = text[i]
    if c == "{":
        node = Node("object", i, 0)
        i = _ws(text, i + 1)
        if text[i] == "}":
            node.end = i + 1
            return node
        while True:
            i = _ws(text, i)
            key_end = _string_end(text, i)
            key = json.loads(text[i:key_end])
            colon = _ws(text, key_end)
            child = _value(text, colon + 1)
            node.members.append((key, i, child))
            i = _ws(text, child.end)
            if text[i] == ",":
                i += 1
                continue
            node.end = i + 1  # '}'
            return node
    if c == "[":
        node = Node("array", i, 0)
        i = _ws(text, i + 1)
        if text[i] == "]":
            node.end = i + 1
            return node
        while True:
            child = _value(text, i)
            node.items.append(child)
            i = _ws(text, child.end)
            if text[i] == ",":
                i += 1
                continue
            node.end = i + 1  # ']'
            return node
    if c == '"':
        return Node("scalar", i, _string_end(text, i))
    for word in ("true", "false", "null"):
        if text.startswith(word, i):
            return Node("scalar", i, i + len(word))
    match = _NUMBER.match(text, i)
    if not match:
        raise ValueError(f"not JSON at offset {i}")
    return Node("scalar", i, match.end())


def scan(text: str) -> Node:
    json.loads(text)  # refuse anything that is not valid JSON before trusting the scanner
    return _value(text, 0)


def find(node: Node, *path: str) -> Node | None:
    for key in path:
        if node.kind != "object":
            return None
        hits = [child for k, _, child in node.members if k == key]
        if not hits:
            return None
        node = hits[-1]  # JSON's last duplicate wins, as in json.loads
    return node


def _line_indent(text: str, offset: int) -> str | None:
    """The whitespace from the start of ``offset``'s line, or None when something precedes it on the line."""
    start = text.rfind("\n", 0, offset) + 1
    prefix = text[start:offset]
    return prefix if not prefix.strip() else None


def _unit(text: str) -> str:
    match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    if not match:
        return "  "
    unit = match.group(1)
    return "\t" if unit.startswith("\t") else " " * min(len(unit), 8)


def _dump(value, indent: str | None, unit: str) -> str:
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    out = json.dumps(value, ensure_ascii=False, indent=unit)
    return out.replace("\n", "\n" + indent)


def _insert(text: str, container: Node, close: str, piece_of) -> str:
    """Insert before ``container``'s closing bracket a new last entry built by ``piece_of(indent)``."""
    unit = _unit(text)
    children = [child for _, _, child in container.members] if container.kind == "object" else container.items
    anchors = [key_at for _, key_at, _ in container.members] if container.kind == "object" else [c.start for c in children]
    if children:
        indent = _line_indent(text, anchors[-1])
        last_end = children[-1].end
        if indent is not None:
            piece = ",\n" + indent + piece_of(indent)
        else:
            piece = ", " + piece_of(None)
        return text[:last_end] + piece + text[last_end:]
    outer = _line_indent(text, container.start)
    close_at = container.end - 1
    if outer is None and "\n" not in text:  # a one-line file stays on one line
        return text[: container.start + 1] + piece_of(None) + text[close_at:]
    base = outer if outer is not None else ""
    inner = base + unit
    return text[: container.start + 1] + "\n" + inner + piece_of(inner) + "\n" + base + close + text[container.end:]


def add_member(text: str, obj: Node, key: str, value) -> str:
    unit = _unit(text)
    return _insert(text, obj, "}", lambda indent: json.dumps(key, ensure_ascii=False) + ": " + _dump(value, indent, unit))


def add_element(text: str, arr: Node, value) -> str:
    unit = _unit(text)
    return _insert(text, arr, "]", lambda indent: _dump(value, indent, unit))


def _remove(text: str, starts: list[int], children: list[Node], index: int) -> str:
    if len(children) == 1:  # the only entry: the container becomes empty, brackets kept where they were
        return text[: _open_after(text, starts[0])] + text[_close_before(text, children[0].end):]
    if index == len(children) - 1:  # the last entry: from the end of the previous one
        return text[: children[index - 1].end] + text[_close_before(text, children[index].end):]
    return text[: starts[index]] + text[starts[index + 1]:]


def _open_after(text: str, offset: int) -> int:
    """Just past the bracket that opens the container whose first entry starts at ``offset``."""
    i = offset - 1
    while text[i] in _WS:
        i -= 1
    return i + 1


def _close_before(text: str, offset: int) -> int:
    """Where the whitespace before the closing bracket after ``offset`` ends (trailing whitespace kept)."""
    i = offset
    while text[i] in _WS:
        i += 1
    # keep the newline and indentation that precede the closing bracket
    j = i
    while j > offset and text[j - 1] in " \t":
        j -= 1
    if j > offset and text[j - 1] == "\n":
        j -= 1
        while j > offset and text[j - 1] == "\r":
            j -= 1
    return j


def remove_member(text: str, obj: Node, key: str) -> str:
    """``text`` without the member ``key`` of ``obj`` (its last occurrence), commas and layout kept tidy."""
    index = max(i for i, (k, _, _) in enumerate(obj.members) if k == key)
    return _remove(text, [at for _, at, _ in obj.members], [c for _, _, c in obj.members], index)


def remove_element(text: str, arr: Node, index: int) -> str:
    return _remove(text, [c.start for c in arr.items], arr.items, index)


def read_json_object(path) -> dict:
    """A JSON object file as a dict; ``{}`` when it is missing, unreadable, not JSON or not an object
    (hook states, install manifests and client settings are all optional to brain)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
