"""The held-out split of the `calls` work (call-graph link) on issue 23 (fixed before any result was read).

A repository is tuning iff sha256("calls-2026-12-08:" + owner/name) starts with a hex digit 0-7, held out
otherwise. ``python bench/calls_split.py`` prints both halves' sizes; ``half(repo)`` is "tune" or "held".
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pairs_split import print_sizes, salted_half  # noqa: E402

SALT = "calls-2026-12-08"


def half(repo: str) -> str:
    return salted_half(SALT, repo)


if __name__ == "__main__":
    print_sizes(half)
