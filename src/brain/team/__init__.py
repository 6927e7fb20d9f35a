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

from .identity import Principal, current_principal, writer_role
from .tokens import TokenRecord, TokenStore

__all__ = ["Principal", "current_principal", "writer_role", "TokenRecord", "TokenStore"]
