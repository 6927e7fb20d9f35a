"""Security of what is written: secret redaction and territories (scribes).

- ``redact``: secret shapes (API keys, tokens, private keys, passwords in URLs) are
  replaced by ``[REDACTED:<kind>]`` before any memory file or log line touches disk;
- ``territories``: each memory area has one owning writer role; writes from another
  role are refused before anything is written.

Both are pure logic (no I/O): the composition root (``Brain``) applies them on its
single write path and the conversation log applies redaction on its append path.
"""

from __future__ import annotations

from .redact import REDACTED, Redaction, Redactor, redactor_from_settings
from .territories import Territories, Territory, territories_from_settings

__all__ = ["REDACTED", "Redaction", "Redactor", "redactor_from_settings", "Territories", "Territory",
           "territories_from_settings"]
