"""Files beside the best-ranked ones that the ranking leaves out: where a fix spanning files goes next.

Read on the six-language development set (issue 23): when a fix changes several files, the ones the boot
never names are rarely pointed at by the text; they sit beside a top file: in its small folder (a Go
package's `types.go`, a Rust module's sibling) or among the files that changed with it in past commits.
The ranking gives them only a small lent share (``cochange``, and ``folder`` at 0), so in a big
repository they fall past the listed files. Naming them after the ranked list costs a few tokens each and
leaves the ranking (and every Acc@k) as it is: the boot's files slot lists them on one line, each with
why, so an agent that reads the top file knows what moves with it.
"""

from __future__ import annotations

from .evidence.folder import folder_mates
from .evidence.neighbours import C_FAMILY
from .history import cochanged

__all__ = ["beside_files", "render_beside", "SEEDS", "SMALL_FOLDER", "MOST"]

SEEDS = 5          # the first files (the top-five window) whose neighbours are named
SMALL_FOLDER = 6   # a folder with at most this many product files of the seed's language is one unit
MOST = 10          # names added at most


def beside_files(view, ranked: list[str], *, seeds: int = SEEDS, most: int = MOST) -> list[tuple[str, str, str]]:
    """(path, how, seed) for the files beside the first ``seeds`` of ``ranked`` that ``ranked`` does not hold:
    for each seed in rank order, the files that changed together with it in at least two past commits
    (``history.cochanged``, best first, ``how`` = "n of its m commits"; none without history), then its
    folder's other product files when the folder is small (``evidence.folder.folder_mates``, ``how`` = "folder").
    At most ``most``, first found first."""
    if most <= 0:
        return []
    listed = set(ranked)
    found: dict[str, tuple[str, str, str]] = {}
    changes: dict[str, int] = {}
    for seed in ranked[:seeds]:
        for path, _confidence, why in cochanged(view, seed, changes):
            if path not in listed and path not in found:
                found[path] = (path, why.rpartition(" (")[2].rstrip(")"), seed)
        for path in folder_mates(view, seed, SMALL_FOLDER, C_FAMILY):
            if path not in listed and path not in found:
                found[path] = (path, "folder", seed)
        if len(found) >= most:
            break
    return list(found.values())[:most]


def render_beside(beside: list[tuple[str, str, str]]) -> str:
    """One line, grouped by seed: "changes together with `a.go`: `b.go` (4 of its 30 commits); in the folder of ..."."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for path, how, seed in beside:
        folder = how == "folder"
        groups.setdefault((seed, folder), []).append(f"`{path}`" if folder else f"`{path}` ({how})")
    return "; ".join(f"{'in the folder of' if folder else 'changes together with'} `{seed}`: {', '.join(names)}"
                     for (seed, folder), names in groups.items())
