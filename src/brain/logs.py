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
    if target:
        from pathlib import Path

        from .memory.private import open_private

        try:  # a debug log holds paths, ids and error texts: its owner's only, like runtime/
            os.close(open_private(Path(target), os.O_WRONLY | os.O_APPEND))
        except OSError:
            pass  # FileHandler reports an unusable target itself
    handler: logging.Handler = logging.FileHandler(target) if target else logging.StreamHandler(sys.stderr)
    handler.setFormatter(_redacting_formatter(logging)("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger("brain")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def _redacting_formatter(logging):
    """A Formatter whose every line (message, arguments, traceback) passes the built-in redactor: a request
    path, a client's hello or an exception may carry a key, and BRAIN_LOG may name a file that keeps it."""
    from .security.redact import Redactor

    redact = Redactor()

    class RedactingFormatter(logging.Formatter):
        def format(self, record) -> str:
            return redact(super().format(record))

    return RedactingFormatter


def debug(name: str, message: str, *args) -> None:
    """Log at debug level without importing logging on hot paths unless logging is in use."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(name).debug(message, *args)
