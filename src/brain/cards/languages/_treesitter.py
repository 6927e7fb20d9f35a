"""Small shared helpers for the tree-sitter extractors: one parser per grammar, text, doc comments.

``parser(grammar)`` imports the grammar wheel on first use (ImportError when it is not
installed: the registry turns that into a file not read, naming the extra).
"""

from __future__ import annotations

import importlib
import time

from .base import Symbol

__all__ = ["parser", "language", "text", "squash", "doc_before", "clean_doc", "lines", "parse", "decode_or_unread",
           "descendants", "bounded_parse", "parse_budget", "read_tree", "start_facts", "finish_facts", "flag_facts", "add_definition", "add_type",
           "MAX_SIG", "MAX_DOC"]

MAX_SIG = 160
MAX_DOC = 110
_LANGS: dict[str, object] = {}
_PARSERS: dict[str, object] = {}


def language(grammar: str, function: str = "language"):
    key = f"{grammar}:{function}"
    if key not in _LANGS:
        import tree_sitter

        mod = importlib.import_module(grammar)
        _LANGS[key] = tree_sitter.Language(getattr(mod, function)())
    return _LANGS[key]


def parser(grammar: str, function: str = "language"):
    key = f"{grammar}:{function}"
    if key not in _PARSERS:
        import tree_sitter

        _PARSERS[key] = tree_sitter.Parser(language(grammar, function))
    return _PARSERS[key]


def decode_or_unread(raw: bytes) -> dict | None:
    """None when ``raw`` is UTF-8 text, else the "unread" facts saying why."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"status": "unread", "reason": f"not UTF-8 (byte at offset {exc.start})"}
    return None


def parse_budget(size: int) -> float:
    """Seconds a parse of ``size`` bytes may take: 2 s plus 1 s per 50 KB (tree-sitter parses a normal
    file at megabytes a second; its error recovery on some garbage is superlinear: 32 KB of `<!-- ` in a
    .go file took 100 s)."""
    return 2.0 + size / 50_000


def bounded_parse(ts_parser, raw: bytes):
    """``ts_parser.parse(raw)`` cancelled once it runs past ``parse_budget``: TimeoutError then.

    tree-sitter checks the progress callback only when it reads through a callback, so the bytes are
    handed over in slices. A cancelled parser is reset before it is used again."""
    deadline = time.monotonic() + parse_budget(len(raw))
    try:
        return ts_parser.parse(lambda offset, _point: raw[offset:offset + 65536],
                               progress_callback=lambda *_: time.monotonic() > deadline)
    except ValueError:
        ts_parser.reset()
        if time.monotonic() > deadline:
            raise TimeoutError(f"parse took over {parse_budget(len(raw)):.0f} s") from None
        raise


def parse(grammar: str, raw: bytes, function: str = "language"):
    """(root node, error facts or None)."""
    try:
        tree = bounded_parse(parser(grammar, function), raw)
    except ImportError:
        raise
    except TimeoutError as exc:
        return None, {"status": "unread", "reason": f"{exc} (a pathological file)"}
    except Exception as exc:  # noqa: BLE001 - a parser failure is a file not read
        return None, {"status": "unread", "reason": f"parse failed ({type(exc).__name__})"}
    return tree.root_node, None


def read_tree(grammar: str, raw: bytes, function: str = "language"):
    """(root node, None) for a UTF-8 file that parsed, else (None, the "unread" facts): every extractor's first step."""
    bad = decode_or_unread(raw)
    if bad:
        return None, bad
    return parse(grammar, raw, function)


def start_facts(**keys) -> tuple[dict, list, list]:
    """An extractor's empty result: the facts ``{"status": "ok", **keys}`` (keys in the order given) and the
    exports and symbols lists it fills, later handed to :func:`finish_facts`."""
    return {"status": "ok", **keys}, [], []


def finish_facts(facts: dict, exports: list, symbols: list, root, path: str, lang) -> dict:
    """Every extractor's last step: the collected exports and symbols, imports sorted once each, the test and
    partial-parse flags (``lang.is_test`` by the path, a tree with errors)."""
    facts["exports"] = exports
    facts["symbols"] = symbols
    facts["imports"] = sorted(set(facts["imports"]))
    return flag_facts(facts, root, path, lang)


def flag_facts(facts: dict, root, path: str, lang) -> dict:
    """The test and partial-parse flags of ``facts`` (for extractors that finish their own keys)."""
    if lang.is_test(path):
        facts["test"] = True
    if root.has_error:
        facts["partial"] = True
    return facts


def add_definition(symbols: list, entries: list, span: tuple[int, int], qualname: str, symbol_kind: str, public: bool,
                   sig: str, card_kind: str, name: str, doc=lambda: "") -> None:
    """One definition found: its :class:`Symbol` for the code index, and when ``public`` its card entry
    ``{kind, name, sig, doc}`` appended to ``entries`` (a type's members or the file's exports). ``doc`` is a
    callable, called only for a public one: finding a doc comment walks the siblings."""
    symbols.append(Symbol(qualname, symbol_kind, span[0], span[1], public, sig))
    if public:
        entries.append({"kind": card_kind, "name": name, "sig": sig, "doc": doc()})


def add_type(exports: list, position: int, public: bool, kind: str, qualname: str, sig: str, doc, members: list) -> None:
    """A public type's export with its ``members``, put at ``position`` (where it stood before its nested types were
    walked, so a type comes before the types it holds). ``doc`` is called only for a public one."""
    if public:
        exports.insert(position, {"kind": kind, "name": qualname, "sig": sig, "doc": doc(), "members": members})


def text(src: bytes, node) -> str:
    if node is None:
        return ""
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def squash(value: str, limit: int = MAX_SIG) -> str:
    """One line, single spaces, tidy brackets, cut at ``limit``."""
    value = " ".join(value.split())
    for a, b in (("( ", "("), (" )", ")"), (",)", ")"), ("< ", "<"), (" >", ">"), ("[ ", "["), (" ]", "]")):
        value = value.replace(a, b)
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def clean_doc(line: str) -> str:
    """A doc line made safe for a card: no marker-looking text, balanced backquotes, shortened."""
    line = line.strip().replace("<!--", "<!-").replace("-->", "->")
    if line.count("`") % 2:
        line = line.replace("`", "'")
    return line if len(line) <= MAX_DOC else line[: MAX_DOC - 1].rstrip() + "…"


def _comment_lines(raw: str) -> list[str]:
    body = raw.strip()
    if body.startswith("/*"):
        body = body[2:]
        if body.endswith("*/"):
            body = body[:-2]
        out = []
        for line in body.splitlines():
            line = line.strip()
            while line.startswith("*") or line.startswith("!"):
                line = line[1:]
            out.append(line.strip())
        return out
    out = []
    for line in body.splitlines():
        line = line.strip()
        for prefix in ("///", "//!", "//", "#"):
            if line.startswith(prefix):
                line = line[len(prefix):]
                break
        out.append(line.strip())
    return out


def doc_before(src: bytes, node, comment_types=("comment", "line_comment", "block_comment"), *, doc_only: str = "",
               skip: tuple[str, ...] = ()) -> str:
    """First meaningful line of the comment block right above ``node`` (no blank line between).

    ``doc_only`` keeps only comments starting with that prefix (``/**`` for Javadoc/JSDoc,
    ``///`` for Rust); sibling nodes of the ``skip`` types between the comment and ``node``
    (attributes, annotations) are stepped over.
    """
    parts: list[str] = []
    prev = node.prev_sibling
    line = node.start_point[0]
    while prev is not None and prev.type in skip and prev.end_point[0] >= line - 1:
        line = prev.start_point[0]
        prev = prev.prev_sibling
    while prev is not None and prev.type in comment_types and prev.end_point[0] >= line - 1:
        raw = text(src, prev)
        if doc_only and not raw.lstrip().startswith(doc_only):
            break
        parts.insert(0, raw)
        line = prev.start_point[0]
        prev = prev.prev_sibling
    for chunk in parts:
        for candidate in _comment_lines(chunk):
            if candidate and not candidate.startswith(("@", "#[", "+build", "go:", "nolint", "SPDX", "Copyright", "NOLINT")):
                return clean_doc(candidate)
    return ""


def lines(node) -> tuple[int, int]:
    """1-based inclusive line range of a node."""
    end = node.end_point[0] + (0 if node.end_point[1] == 0 and node.end_point[0] > node.start_point[0] else 1)
    return node.start_point[0] + 1, max(end, node.start_point[0] + 1)


def descendants(node, types: str | tuple[str, ...]):
    """Nodes of ``types`` under ``node`` in document order, not descending into a match."""
    types = (types,) if isinstance(types, str) else types
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in types:
            yield cur
        else:
            stack.extend(reversed(cur.named_children))
