"""Security of what is written: secret redaction and territories (scribes).

- ``redact``: secret shapes (API keys, tokens, private keys, passwords in URLs) are
  replaced by ``[REDACTED:<kind>]`` before any memory file or log line touches disk;
- ``territories``: each memory area has one owning writer role; writes from another
  role are refused before anything is written.

Both are pure logic (no I/O): the composition root (``Brain``) applies them on its
single write path and the conversation log applies redaction on its append path.
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
