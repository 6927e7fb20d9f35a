"""The human surface: a server-rendered web UI (Starlette + Jinja2 + a vendored htmx).

``create_app(brain, middleware=[...], auth=callable)`` builds the app; ``brain ui`` serves
it with uvicorn on 127.0.0.1. Rich content (logs, cards, notes) is shown here and only
here (DESIGN §1 frontier rule); see docs/web.md.
"""

from __future__ import annotations

__all__ = ["create_app"]


def create_app(brain, **options):
    """The Starlette app over ``brain`` (see ``brain.web.app.create_app`` for the options)."""
    from .app import create_app as _create

    return _create(brain, **options)
