"""Repositories no benchmark may mine: those reserved for independent checks, and the development sets.

The reserved list (../shared/bench/reserved-repositories.txt beside the project: one owner/name a line)
keeps some public repositories unseen so the ranking can be checked on projects nobody tuned or fitted it
on; the development sets (Django and multilang-dev.jsonl's repositories) are where it was tuned. A
benchmark that picks repositories by name (build_corpus.py, bench_heldout.py) refuses the whole run,
before reading any mirror, when it names one of them, compared case-insensitively; a missing reserved
list is an error, never an empty one.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RESERVED = ROOT.parent / "shared" / "bench" / "reserved-repositories.txt"
DEVELOPMENT_REPOSITORIES = ("django/django", "jqlang/jq", "fmtlib/fmt", "zeromicro/go-zero", "FasterXML/jackson-core",
                            "anuraghazra/github-readme-stats", "expressjs/express", "axios/axios", "tokio-rs/tokio",
                            "tokio-rs/bytes")


class BenchRefusal(Exception):
    """A run a benchmark refuses: its message names the problem; nothing has been written."""

    exit_code = 2


class ReservedListMissing(BenchRefusal):
    def __init__(self, path: Path):
        self.path = path
        super().__init__(f"the reserved-repository list {path} does not exist (give --reserved FILE)")


class RefusedRepositories(BenchRefusal):
    def __init__(self, repos: list[str], why: str):
        self.repos, self.why = repos, why
        super().__init__(f"refusing {why} repositories: {', '.join(repos)}")


def read_reserved(path: Path) -> set[str]:
    """The reserved owner/name list, lower-cased (one a line; `#` comments and blank lines ignored)."""
    path = Path(path)
    if not path.is_file():
        raise ReservedListMissing(path)
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(line.lower())
    return names


def refuse_reserved(repos: list[str], reserved: set[str]) -> None:
    """Raise when any repository is reserved for independent checks or belongs to a development set."""
    hits = sorted(r for r in repos if r.lower() in reserved)
    if hits:
        raise RefusedRepositories(hits, "reserved")
    development = {r.lower() for r in DEVELOPMENT_REPOSITORIES}
    hits = sorted(r for r in repos if r.lower() in development)
    if hits:
        raise RefusedRepositories(hits, "development-set")
