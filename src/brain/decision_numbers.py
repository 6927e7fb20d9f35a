"""Give decision records that share a number numbers of their own.

Two clones, two branches or two worktrees each run `brain decision new` and both take the next
free number; the merge then holds two `0042-*.md`. Which one keeps 0042 is decided by what others
already rely on, in this order:

1. a record the branch's upstream (``@{upstream}``) holds: teammates pulled it under that number;
2. a record the repository's main line holds (``origin/HEAD``'s branch, else a local ``main``, else
   ``master``): a topic branch (an agent's worktree, no upstream) that merges main in to catch up
   moves its own record, never main's, which others already cite;
3. a record the current branch (``HEAD``) holds: during a merge, the side being merged into, so a
   merge of a topic branch into main renumbers the topic branch's record, never main's;
4. the record added earliest in the history, then the path: deterministic without git.

The others move to the next free numbers above every number in use: the file is renamed (one
atomic rename, the name's number first so a crash leaves a consistent record) and its title line
rewritten. Text elsewhere that cites the old number is not rewritten — it may mean either record —
and is listed so a person can check it.
"""

from __future__ import annotations

import os
import re

from .decisions import _check_territories, _numbering_lock, _write_index, _write_repo_file, decisions_dir, \
    duplicate_numbers, load_decisions
from .errors import InvalidInput, PathRefused
from .memory.paths import has_link_between

__all__ = ["renumber_duplicates"]

_LEADING_NUMBER = re.compile(r"^\d{1,5}")
_TITLE_NUMBER = re.compile(r"^(#\s+(?:(?:ADR|Decision|RFC)[\s-]*)?)(\d{1,5})", re.I)


def renumber_duplicates(brain, *, dry_run: bool = False, role: str | None = None) -> dict:
    """Renumber all but one record of every shared number; returns ``{"moves", "kept", "mentions"}``.

    ``moves``: ``[{"number", "to", "path", "new_path"}]``; ``kept``: ``{number: path}``;
    ``mentions``: files citing an old number (``{number: [paths]}``). ``dry_run`` plans without writing."""
    with _numbering_lock(brain):
        records = load_decisions(brain)
        shared = duplicate_numbers(records)
        if not shared:
            return {"moves": [], "kept": {}, "mentions": {}, "dry_run": dry_run}
        seen = _seen_in_git(brain, [p for paths in shared.values() for p in paths])
        next_free = max(r.number for r in records) + 1
        moves, kept = [], {}
        for number, paths in sorted(shared.items()):
            order = sorted(paths, key=lambda p: seen.get(p, (1, 1, 1, float("inf"))) + (p,))
            kept[number] = order[0]
            for path in order[1:]:
                new_path = _renamed(path, next_free)
                moves.append({"number": number, "to": next_free, "path": path, "new_path": new_path})
                next_free += 1
        mentions = _mentions(records, {m["number"] for m in moves}, {m["path"] for m in moves})
        if not dry_run:
            _check_territories(brain, [brain.repo / p for m in moves for p in (m["path"], m["new_path"])], role)
            for move in moves:
                _move(brain, move, role)
            _write_index(brain)
        return {"moves": moves, "kept": kept, "mentions": mentions, "dry_run": dry_run}


def _renamed(path: str, number: int) -> str:
    folder, _, name = path.rpartition("/")
    new_name = _LEADING_NUMBER.sub(f"{number:04d}", name, count=1)
    return f"{folder}/{new_name}" if folder else new_name


def _move(brain, move: dict, role: str | None) -> None:
    """Rename the record, then rewrite its title's number: the file name decides the number, so a crash
    between the two leaves a record with its new number and its old title line, never two records."""
    old, new = brain.repo / move["path"], brain.repo / move["new_path"]
    folder = decisions_dir(brain)
    if has_link_between(brain.repo, folder) or old.is_symlink():
        raise PathRefused(move["path"], "symlink", "a decision record or its folder is a symbolic link: "
                                                   "links are never renamed through")
    if os.path.lexists(new):
        raise InvalidInput(f"{move['new_path']} already exists", field="number")
    os.rename(old, new)
    text = new.read_bytes().decode("utf-8", errors="replace")
    lines = text.split("\n")
    for i, line in enumerate(lines[:80]):
        if line.startswith("# "):
            m = _TITLE_NUMBER.match(line)
            if m:
                width = len(m.group(2)) if m.group(2).startswith("0") else 0  # "0007" stays padded, "7" plain
                lines[i] = m.group(1) + f"{move['to']:0{width}d}" + line[m.end():]
                _write_repo_file(brain, new, "\n".join(lines), role)
            break


def _seen_in_git(brain, paths: list[str]) -> dict[str, tuple]:
    """Per record path: (0 if the upstream holds it else 1, 0 if the main line holds it else 1, 0 if HEAD holds
    it else 1, when it was added)."""
    from .gitsafe import project_repo

    repo = project_repo(brain.repo)
    if repo is None:
        return {}
    prefix = os.path.relpath(brain.repo, repo.root).replace(os.sep, "/")
    full = {p: p if prefix == "." else f"{prefix}/{p}" for p in paths}
    folders = sorted({f.rpartition("/")[0] or "." for f in full.values()})

    def holds(ref: str) -> set[str]:
        out = repo.run("ls-tree", "-r", "--name-only", ref, "--", *folders, check=False)
        return set(out.stdout.splitlines()) if out.returncode == 0 else set()

    upstream = repo.run("rev-parse", "-q", "--verify", "@{upstream}", check=False)
    in_upstream = holds(upstream.stdout.strip()) if upstream.returncode == 0 and upstream.stdout.strip() else set()
    main_line = next((ref for ref in ("refs/remotes/origin/HEAD", "refs/heads/main", "refs/heads/master")
                      if repo.run("rev-parse", "-q", "--verify", ref + "^{commit}", check=False).returncode == 0), None)
    in_main = holds(main_line) if main_line else set()
    in_head = holds("HEAD")
    seen = {}
    for path, name in full.items():
        added = repo.run("log", "--all", "--format=%ct", "--diff-filter=A", "--", name, check=False).stdout.split()
        seen[path] = (0 if name in in_upstream else 1, 0 if name in in_main else 1, 0 if name in in_head else 1,
                      min(map(int, added)) if added else float("inf"))
    return seen


def _mentions(records, numbers: set[int], moved: set[str]) -> dict[int, list[str]]:
    """Records that cite a renumbered number by Supersedes / Superseded by: they may mean either record."""
    out: dict[int, list[str]] = {}
    for record in records:
        for number in {*record.supersedes, *([record.superseded_by] if record.superseded_by else [])} & numbers:
            if record.path not in moved:
                out.setdefault(number, []).append(record.path)
    return {n: sorted(p) for n, p in sorted(out.items())}
