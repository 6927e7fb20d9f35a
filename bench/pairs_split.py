"""The held-out split of the `pairs` work on issue 23 (fixed before any result was read).

A repository is tuning iff sha256("pairs-2026-12-07b:" + owner/name) starts with a hex digit 0-7, held out
otherwise. ``python bench/pairs_split.py`` prints both halves' sizes; ``half(repo)`` is "tune" or "held".
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SALT = "pairs-2026-12-07b"


def salted_half(salt: str, repo: str) -> str:
    """"tune" or "held": the split every salted round uses (first hex digit of sha256(salt:repo) 0-7 is tuning)."""
    return "tune" if hashlib.sha256(f"{salt}:{repo}".encode()).hexdigest()[0] in "01234567" else "held"


def half(repo: str) -> str:
    return salted_half(SALT, repo)


def print_sizes(half_of) -> None:
    """Both halves' sizes over the corpus' repositories."""
    repos = [r["repo"] for r in json.loads((Path(__file__).parent / "corpus" / "repositories.json").read_text())["repositories"]]
    tune = [r for r in repos if half_of(r) == "tune"]
    print(f"{len(repos)} repositories: {len(tune)} tuning, {len(repos) - len(tune)} held out")


if __name__ == "__main__":
    print_sizes(half)
