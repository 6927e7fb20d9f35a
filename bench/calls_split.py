"""The held-out split of the `calls` work (call-graph link) on issue 23 (fixed before any result was read).

A repository is tuning iff sha256("calls-2026-12-08:" + owner/name) starts with a hex digit 0-7, held out
otherwise. ``python bench/calls_split.py`` prints both halves' sizes; ``half(repo)`` is "tune" or "held".
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SALT = "calls-2026-12-08"


def half(repo: str) -> str:
    return "tune" if hashlib.sha256(f"{SALT}:{repo}".encode()).hexdigest()[0] in "01234567" else "held"


if __name__ == "__main__":
    repos = [r["repo"] for r in json.loads((Path(__file__).parent / "corpus" / "repositories.json").read_text())["repositories"]]
    tune = [r for r in repos if half(r) == "tune"]
    print(f"{len(repos)} repositories: {len(tune)} tuning, {len(repos) - len(tune)} held out")
