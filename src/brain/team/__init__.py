"""Team mode: one brain served to several machines over authenticated HTTP.

- ``tokens``: bearer tokens per agent or person, stored hashed (sha256) in
  ``runtime/tokens.json``, shown once at creation, revocable;
- ``identity``: who is calling (the token's principal, carried in a context
  variable for the duration of a request) and the session bound to it, so one agent
  cannot act as another;
- ``middleware``: the ASGI middleware that authenticates every request (401) and
  bounds request bodies (413), for the MCP app and the web UI alike;
- ``server``: the team server app (``brain serve --http`` when tokens exist).

See docs/team.md.
"""

from __future__ import annotations

__all__ = ["Principal", "current_principal", "writer_role", "TokenRecord", "TokenStore"]

_HOME = {"Principal": "identity", "current_principal": "identity", "writer_role": "identity",
         "TokenRecord": "tokens", "TokenStore": "tokens"}


def __getattr__(name: str):
    """The package's names, imported on first use: a boot asks ``team.identity`` whether a memory is
    visible, and must not load the token store (hashlib, secrets, dataclasses) to be told."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value
