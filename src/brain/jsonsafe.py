"""JSON from files a repository ships (package.json, tsconfig.json, composer.json, `.claude/settings.json`...).

``json.loads`` of ``[[[[…`` 100,000 deep raises ``RecursionError``, which is not a ``ValueError``:
every reader that caught ``ValueError`` for "not valid JSON" let it through, and a cloned repository's
package.json made `brain map` end in a traceback. ``loads`` turns it into the ``ValueError`` those
readers already handle (the file is then "not read", as any broken one).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads", "TooDeep"]


class TooDeep(ValueError):
    """A JSON document nested deeper than the decoder can follow."""


def loads(raw: str | bytes) -> Any:
    try:
        return json.loads(raw)
    except RecursionError:
        raise TooDeep("JSON nested too deeply") from None
