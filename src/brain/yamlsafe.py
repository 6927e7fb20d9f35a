"""The one YAML reader: every YAML brain parses goes through ``load_yaml``, at a cost linear in its size.

A repository or a writer chooses the YAML brain reads (``brain.yml``, ``brain.local.yml``, front
matter of decisions, profiles and notes, contracts, OpenAPI specs a card lists). Plain
``yaml.safe_load`` builds what it is given, and a few hundred bytes of nested aliases
(``b: &b [*a, *a, ...]``) build billions of references that any walk then visits: 338 bytes
took 25 s and 3.6 GB. So composition is bounded while it happens, before anything is built:

- no anchors or aliases at all, unless the caller allows them (third-party files such as OpenAPI
  specs); then the node count is counted *with* every alias expanded, and an alias to a node
  still being built (a cycle) is refused;
- at most ``max_depth`` levels of nesting, ``max_nodes`` nodes, ``max_chars`` characters of text;
- numbers of at most ``MAX_NUMBER_CHARS`` characters (a long integer costs quadratic time to
  convert, and past 4300 digits Python raises a ValueError that is not a YAML error), and at most
  ``MAX_NUMBER_KEYS`` number keys in one mapping (numbers are their own hash: crafted ones collide);
- only the plain YAML tags (``!!str``, ``!!int``...): ``!!python/...`` and custom tags are refused.

Anything past a bound raises ``YamlRefused`` (typed: ``problem``, ``limit``), as does a syntax
error, so callers handle one exception. ``tests/test_yaml_bounds.py`` fails when any other module
imports ``yaml``: this is the only door.
"""

from __future__ import annotations

from typing import Any

from .errors import YamlRefused

__all__ = ["load_yaml", "check_yaml_write", "MAX_DEPTH", "MAX_NODES", "MAX_CHARS", "MAX_NUMBER_CHARS",
           "MAX_NUMBER_KEYS"]

MAX_DEPTH = 64          # nesting levels; settings and front matter use three or four
MAX_NODES = 100_000     # scalars, lists and mappings, aliases expanded
MAX_CHARS = 4_000_000   # a card reads files up to cards.max_file_bytes (1 MB by default)
MAX_NUMBER_CHARS = 100  # an int or float scalar
MAX_NUMBER_KEYS = 1_000  # number keys of one mapping: ints that are equal modulo 2**61-1 share a hash, and
                         # a mapping of such keys costs quadratic time to build (40,000 of them: 25 s)

_STANDARD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = frozenset(_STANDARD + t for t in ("str", "int", "float", "bool", "null", "map", "seq",
                                                   "timestamp", "binary", "set", "omap", "pairs", "merge"))
_NUMBER_TAGS = frozenset((_STANDARD + "int", _STANDARD + "float"))

_LOADERS: dict[bool, type] = {}  # pure_python -> the loader class, built once


def _loader_class(pure_python: bool = False) -> type:
    """A loader built from libyaml's parser (fast, iterative) when present, PyYAML's own otherwise
    (or when ``pure_python``), with the bounded composer below in front of it. Built on first use:
    yaml stays a lazy import."""
    if pure_python in _LOADERS:
        return _LOADERS[pure_python]
    import yaml
    from yaml.composer import Composer
    from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent
    from yaml.nodes import MappingNode, ScalarNode

    parser = None
    if not pure_python:
        try:
            from yaml._yaml import CParser as parser
        except ImportError:  # PyYAML built without libyaml: its own parser, with the flow pre-check below
            parser = None

    class BoundedComposer(Composer):
        """PyYAML's composer with every node counted, nesting measured and aliases checked."""

        def _setup(self, source: str, aliases: bool, max_depth: int, max_nodes: int) -> None:
            self.anchors = {}
            self._source, self._aliases = source, aliases
            self._max_depth, self._max_nodes = max_depth, max_nodes
            self._depth = self._nodes = 0
            self._sizes: dict[str, int] = {}   # anchor -> its node count, aliases inside expanded
            self._open: set[str] = set()       # anchors whose node is still being composed
            self._number_keys: dict[int, int] = {}  # id of a mapping node -> how many number keys it has

        def _refuse(self, event, problem: str, detail: str, limit: int | None = None):
            mark = getattr(event, "start_mark", None)
            line = mark.line + 1 if mark is not None else None
            where = f" (line {line})" if line else ""
            return YamlRefused(self._source, problem, detail + where, limit, line)

        def _count(self, event, amount: int) -> None:
            self._nodes += amount
            if self._nodes > self._max_nodes:
                raise self._refuse(event, "nodes", f"more than {self._max_nodes} YAML nodes"
                                   + (" once its aliases are expanded" if self._aliases else ""), self._max_nodes)

        def compose_node(self, parent, index):
            if self.check_event(AliasEvent):
                event = self.get_event()
                if not self._aliases:
                    raise self._refuse(event, "alias", f"a YAML alias (*{event.anchor}): aliases are not allowed here")
                if event.anchor in self._open:
                    raise self._refuse(event, "alias", f"the YAML alias *{event.anchor} refers to a node that holds it")
                if event.anchor in self._sizes:
                    self._count(event, self._sizes[event.anchor])
                return self._alias_node(event)
            event = self.peek_event()
            if event.anchor is not None and not self._aliases:
                raise self._refuse(event, "alias", f"a YAML anchor (&{event.anchor}): anchors are not allowed here")
            tag = getattr(event, "tag", None)
            if tag not in (None, "!") and tag not in _ALLOWED_TAGS:
                raise self._refuse(event, "tag", f"the YAML tag {tag!r}: only plain YAML types are read")
            self._count(event, 1)
            nested = isinstance(event, (SequenceStartEvent, MappingStartEvent))
            if nested:
                self._depth += 1
                if self._depth > self._max_depth:
                    raise self._refuse(event, "depth", f"YAML nested more than {self._max_depth} levels deep",
                                       self._max_depth)
            before = self._nodes
            if event.anchor is not None:
                self._open.add(event.anchor)
            node = super().compose_node(parent, index)
            if event.anchor is not None:
                self._open.discard(event.anchor)
                self._sizes[event.anchor] = self._nodes - before + 1
            if nested:
                self._depth -= 1
            elif isinstance(event, ScalarEvent) and isinstance(node, ScalarNode) and node.tag in _NUMBER_TAGS:
                if len(node.value) > MAX_NUMBER_CHARS:
                    raise self._refuse(event, "scalar", f"a number of {len(node.value)} characters (at most "
                                       f"{MAX_NUMBER_CHARS})", MAX_NUMBER_CHARS)
                if index is None and isinstance(parent, MappingNode):  # a number as a mapping key
                    count = self._number_keys[id(parent)] = self._number_keys.get(id(parent), 0) + 1
                    if count > MAX_NUMBER_KEYS:
                        raise self._refuse(event, "keys", f"more than {MAX_NUMBER_KEYS} number keys in one mapping",
                                           MAX_NUMBER_KEYS)
            return node

        def _alias_node(self, event):
            if event.anchor not in self.anchors:
                from yaml.composer import ComposerError

                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
            return self.anchors[event.anchor]

    bases = (BoundedComposer, parser) if parser is not None else (BoundedComposer, yaml.reader.Reader,
                                                                   yaml.scanner.Scanner, yaml.parser.Parser)

    class BoundedLoader(*bases, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        def __init__(self, stream) -> None:
            if parser is not None:
                parser.__init__(self, stream)
            else:
                yaml.reader.Reader.__init__(self, stream)
                yaml.scanner.Scanner.__init__(self)
                yaml.parser.Parser.__init__(self)
            Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

        # libyaml's parser brings its own node builders; the bounded ones must win
        check_node = Composer.check_node
        get_node = Composer.get_node
        get_single_node = Composer.get_single_node

    BoundedLoader.pure_python = parser is None
    _LOADERS[pure_python] = BoundedLoader
    return BoundedLoader


def _flow_depth_over(text: str, limit: int) -> bool:
    """Whether brackets nest deeper than ``limit`` (quotes not considered: an upper bound). PyYAML's own
    scanner costs time quadratic in flow nesting *before* the composer sees a node, so without libyaml
    this check runs first; libyaml's scanner has no such cost."""
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}" and depth:
            depth -= 1
    return False


def load_yaml(text: str, source: str, *, aliases: bool = False, max_depth: int = MAX_DEPTH,
              max_nodes: int = MAX_NODES, max_chars: int = MAX_CHARS) -> Any:
    """Parse one YAML document with bounded cost; ``YamlRefused`` for a syntax error or a bound passed.

    ``source`` names the text in errors (a file, ``brain_write``...). ``aliases`` allows anchors and
    aliases, counted expanded against ``max_nodes`` (for files brain does not own, like OpenAPI specs)."""
    if not isinstance(text, str):
        raise YamlRefused(source, "syntax", "YAML must be text")
    if len(text) > max_chars:
        raise YamlRefused(source, "size", f"{len(text)} characters of YAML, above the limit of {max_chars}",
                          max_chars)
    import yaml

    cls = _loader_class()
    if cls.pure_python and _flow_depth_over(text, max_depth):
        raise YamlRefused(source, "depth", f"YAML nested more than {max_depth} levels deep", max_depth)
    loader = cls(text)
    try:
        loader._setup(source, aliases, max_depth, max_nodes)
        return loader.get_single_data()
    except YamlRefused:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise YamlRefused(source, "syntax", "not valid YAML" + (f" (line {line})" if line else ""),
                          line=line) from None
    except Exception as exc:  # noqa: BLE001 - PyYAML's constructors raise KeyError (`!!bool maybe`),
        # AttributeError (`!!timestamp foo`), ValueError...: a value that cannot be built is a refusal, not a crash
        raise YamlRefused(source, "syntax", f"a YAML value that cannot be read ({type(exc).__name__})") from None
    finally:
        loader.dispose()


def check_yaml_write(path: str, text: str) -> None:
    """Refuse a memory write whose YAML (a ``.yml`` file, or a markdown file's front matter) passes a
    bound: readers would refuse it later anyway, and the writer learns why now, with nothing written.
    A syntax error is left to the readers (a note may open with a ``---`` rule); a bomb is not."""
    if path.endswith((".yml", ".yaml")):
        block = text
    elif text.startswith("---\n") and text.find("\n---", 4) > 0:
        block = text[4:text.find("\n---", 4)]
    else:
        return
    try:
        load_yaml(block, path)
    except YamlRefused as exc:
        if exc.problem != "syntax":
            raise
