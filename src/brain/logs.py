"""Debug logging that never touches stdout (stdout belongs to data and to MCP stdio)."""

from __future__ import annotations

import os
import sys

__all__ = ["configure_logging", "debug"]


def configure_logging(verbose: bool = False, env: dict[str, str] | None = None) -> None:
    env = os.environ if env is None else env
    spec = env.get("BRAIN_LOG", "")
    if verbose and not spec:
        spec = "debug"
    if not spec:
        return
    import logging  # lazy: most runs never log

    level_name, _, target = spec.partition(":")
    level = getattr(logging, level_name.upper(), logging.DEBUG)
    handler: logging.Handler = logging.FileHandler(target) if target else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger("brain")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def debug(name: str, message: str, *args) -> None:
    """Log at debug level without importing logging on hot paths unless logging is in use."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(name).debug(message, *args)
