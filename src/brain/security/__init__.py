"""Security of what is written: secret redaction and territories (scribes).

- ``redact``: secret shapes (API keys, tokens, private keys, passwords in URLs, assigned
  secrets) are replaced by ``[REDACTED:<kind>]`` before any store keeps the text (memory
  files, log lines, commit messages, coordination rows), in linear time on any input;
- ``territories``: each memory area has one owning writer role; writes from another
  role are refused before anything is written.

Both are pure logic (no I/O): each store applies redaction on its own write path (``Brain``
and ``MemoryStore`` for memory, the conversation log's append, ``commit_write``, the
``Coordinator`` and ``LiveState``), and ``Brain.write`` checks territories.
"""

from __future__ import annotations

__all__ = ["REDACTED", "Redaction", "Redactor", "redactor_from_settings", "Territories", "Territory",
           "territories_from_settings"]

_WHERE = {"REDACTED": "redact", "Redaction": "redact", "Redactor": "redact", "redactor_from_settings": "redact",
          "Territories": "territories", "Territory": "territories", "territories_from_settings": "territories"}


def __getattr__(name: str):
    """Lazy: opening a brain imports only the redactor, and compiles its patterns on first use."""
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(name)
