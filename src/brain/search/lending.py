"""The lending passes of the file ranking: the best few files lend a share of their score to the files they are
linked to (``Links``, read by ``evidence.neighbours.collect_links``), each pass finding the best files again.

``ranking.combine`` runs ``PASSES`` in order after the weighted sum of each file's own evidence, then the
demotion factors, then ``lend_to_served`` (copies, forward declarations and build scripts, which are
lent to after the demotions). Every pass is pure: it reads the ``Evidence`` and the scores so far and
calls ``add(path, weight, reason)``; a file whose links were not read is recorded in ``missing`` (the
gathering reads them and ranks again).
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from ..errors import InvalidInput
from ..records import field, record

__all__ = ["Links", "PASSES", "lend_to_served", "best_seeds", "links_of", "give_all", "NO_SEED", "JS_EXTS", "Scores"]

NO_SEED = frozenset({"test", "nonproduct"})  # files that never lend: demoted after the lending
JS_EXTS = (".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts")


@record
class Links:
    """What a file lends to when it is one of the best few, as read from the repository.

    ``near`` is None for a hub (more import neighbours than ``max_neighbours``); ``overrides``
    are (named method, file) pairs, ``siblings`` (base type, sibling files, [(named word, the
    siblings writing it)]), ``entries`` the JavaScript entry points importing the file (None:
    a hub). Files that will be among the best are left in: ``combine`` drops them."""

    near: list[str] | None = field(default_factory=list)
    twins: list[str] = field(default_factory=list)
    overrides: list[tuple[str, str]] = field(default_factory=list)
    siblings: list[tuple[str, list[str], list[tuple[str, list[str]]]]] = field(default_factory=list)
    declarations: list[str] = field(default_factory=list)
    entries: list[str] | None = field(default_factory=list)
    cochange: list[tuple[str, float, str]] = field(default_factory=list)  # (file, confidence, reason), best first
    forward: list[str] = field(default_factory=list)  # forward-declaration headers serving the file
    build: str | None = None  # its Rust crate's build script
    package_build: list[str] = field(default_factory=list)  # its package's build scripts (search.buildscripts)
    folder: list[str] = field(default_factory=list)  # product files of its folder in its language (evidence.folder)
    namesakes: list[str] = field(default_factory=list)  # files of its name in sibling folders
    kin: list[str] = field(default_factory=list)  # its base types' files and its subtypes' (evidence.types)
    family: list[str] = field(default_factory=list)  # files whose type name goes on from its own, or it from theirs
    users: list[str] | None = field(default_factory=list)  # files writing its type name (None: too many)

    def to_json(self) -> dict:
        out: dict = {}
        if self.cochange:
            out["cochange"] = [list(c) for c in self.cochange]
        if self.forward:
            out["forward"] = list(self.forward)
        if self.build:
            out["build"] = self.build
        if self.package_build:
            out["package_build"] = list(self.package_build)
        if self.near is None or self.near:
            out["near"] = self.near
        for key in ("twins", "declarations", "folder", "namesakes", "kin", "family"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        if self.users is None or self.users:
            out["users"] = self.users
        if self.overrides:
            out["overrides"] = [list(o) for o in self.overrides]
        if self.siblings:
            out["siblings"] = [[base, list(sibs), [[w, list(ps)] for w, ps in words]] for base, sibs, words in self.siblings]
        if self.entries is None or self.entries:
            out["entries"] = self.entries
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Links":
        try:
            return cls(near=_paths_or_none(data.get("near", [])), twins=_paths(data.get("twins", [])),
                       overrides=[(str(w), str(p)) for w, p in data.get("overrides", [])],
                       siblings=[(str(b), _paths(s), [(str(w), _paths(ps)) for w, ps in words])
                                 for b, s, words in data.get("siblings", [])],
                       declarations=_paths(data.get("declarations", [])),
                       entries=_paths_or_none(data.get("entries", [])),
                       cochange=[(str(p), float(c), str(r)) for p, c, r in data.get("cochange", [])],
                       forward=_paths(data.get("forward", [])),
                       build=None if data.get("build") is None else str(data["build"]),
                       package_build=_paths(data.get("package_build", [])),
                       folder=_paths(data.get("folder", [])), namesakes=_paths(data.get("namesakes", [])),
                       kin=_paths(data.get("kin", [])), family=_paths(data.get("family", [])),
                       users=_paths_or_none(data.get("users", [])))
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"evidence links of the wrong shape: {exc}") from None


def _paths(value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise ValueError("a list of paths was expected")
    return list(value)


def _paths_or_none(value) -> list[str] | None:
    return None if value is None else _paths(value)


class Scores(dict):
    """``path -> score`` of one ranking (``ranking._rank``), counting its writes: the passes ask ``best_seeds``
    for the best files before each pass, and most passes lend nothing (29 of the 40 asks of a Django task
    boot found the scores as the ask before had them), so while the count stands the last answer holds."""

    __slots__ = ("writes", "seeds")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.writes = 0
        self.seeds: tuple | None = None  # (what the answer was worked out from, the answer)

    def __setitem__(self, key, value) -> None:
        self.writes += 1
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self.writes += 1
        super().__delitem__(key)

    def setdefault(self, key, default=None):
        self.writes += 1
        return super().setdefault(key, default)

    def pop(self, *args):
        self.writes += 1
        return super().pop(*args)

    def popitem(self):
        self.writes += 1
        return super().popitem()

    def update(self, *args, **kwargs) -> None:
        self.writes += 1
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.writes += 1
        super().clear()

    def __ior__(self, other):
        self.writes += 1
        return super().__ior__(other)


def best_seeds(evidence, weights: Weights, score: dict[str, float]) -> list[str]:
    """The best few files that lend their neighbours a share: product code only (tests, examples,
    scripts and docs are demoted after lending, so they must not lend on their raw score)."""
    count = weights.params["neighbour_seeds"]
    known = isinstance(score, Scores)
    if known:
        basis = (score.writes, count, id(evidence))
        if score.seeds is not None and score.seeds[0] == basis:
            return list(score.seeds[1])
    files = evidence.files
    eligible = [p for p in score if p not in files or not NO_SEED.intersection(files[p].flags)]
    seeds = heapq.nsmallest(count, eligible, key=lambda p: (-score[p], p))
    if known:
        score.seeds = (basis, tuple(seeds))
    return seeds


def links_of(evidence, path: str, missing: set[str] | None) -> "Links":
    found = evidence.files.get(path)
    if found is None or found.links is None:
        if missing is not None:
            missing.add(path)
        return Links()
    return found.links


def give_all(lent: dict[str, tuple[float, str]], add) -> None:
    for path, (weight, reason) in lent.items():
        add(path, weight, reason)


def _lend_to_neighbours(evidence, weights, score, add, missing) -> None:
    """Files the best ones import or are imported by (a Go import reaches every file of the package), and
    their header/source twin: a fix that changes a function often changes its caller, its declaration or
    a sibling in the package; the share keeps a neighbour just under the files the text points to."""
    seeds = best_seeds(evidence, weights, score)
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        base = score[seed]
        links = links_of(evidence, seed, missing)
        for path in links.near or ():
            share = weights.shares["import"] * base
            if path != seed and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"imports or is imported by `{seed}`")
        for path in links.twins:
            share = weights.shares["twin"] * base
            if path != seed and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"header/source twin of `{seed}`")
    give_all(lent, add)


def _lend_to_overriders(evidence, weights, score, add, missing) -> None:
    """A subclass, delegate or implementation linked to a best file by `extends` that defines a method the
    text names which that file defines too (`JsonParser.getNumberType()` -> `JsonParserDelegate`). The best
    files lend nothing to each other."""
    seeds = best_seeds(evidence, weights, score)
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        for word, path in links_of(evidence, seed, missing).overrides:
            share = weights.shares["override"] * score[seed]
            if path not in seeds and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"also defines `{word}` of `{seed}`")
    give_all(lent, add)


def _lend_to_declarations(evidence, weights, score, add, missing) -> None:
    """A JavaScript module's declaration twin (`x.d.ts`, and the declarations beside it it takes its types
    from), as a C source its header: a change to what a module exports changes its declarations."""
    lent: dict[str, tuple[float, str]] = {}
    for seed in best_seeds(evidence, weights, score):
        for path in links_of(evidence, seed, missing).declarations:
            share = weights.shares["twin"] * score[seed]
            if share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"declaration twin of `{seed}`")
    give_all(lent, add)


def _lend_to_entry_points(evidence, weights, score, add, missing) -> None:
    """A JavaScript file nothing imports (a request handler, a command, a page) gets a share of each best
    file it imports: a feature in a module reaches the user through the entry point passing it on."""
    seeds = [p for p in best_seeds(evidence, weights, score) if p.endswith(JS_EXTS)]
    shares: dict[str, float] = defaultdict(float)
    for seed in seeds:
        entries = links_of(evidence, seed, missing).entries
        for path in entries or ():
            if path not in seeds:
                shares[path] += weights.shares["entry_share"] * score[seed]
    for path, weight in shares.items():
        add(path, weight, "entry point importing the best files")


def _lend_to_siblings(evidence, weights, score, add, missing) -> None:
    """Subclasses of the same base as a best file whose code also writes a code-like name the text names
    and that file writes (`usesPadding()`): a fix to how one parser calls a method is repeated in its siblings."""
    seeds = best_seeds(evidence, weights, score)
    most = weights.params["max_siblings"]
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        for base, siblings, words in links_of(evidence, seed, missing).siblings:
            siblings = [p for p in siblings if p not in seeds]
            if not siblings or len(siblings) > most:
                continue
            for word, writers in words:
                for path in siblings:
                    share = weights.shares["sibling"] * score[seed]
                    if path in writers and share > lent.get(path, (0.0, ""))[0]:
                        lent[path] = (share, f"like `{seed}` extends `{base}` and writes `{word}`")
    give_all(lent, add)


def _lend_to_cochanged(evidence, weights, score, add, missing) -> None:
    """Files that changed together with the best few in past commits (HEAD's history), by the pair's
    confidence: a fix often spans files that move together though the text names one of them."""
    lent: dict[str, tuple[float, str]] = {}
    for seed in best_seeds(evidence, weights, score)[: weights.params["cochange_seeds"]]:
        for path, confidence, reason in links_of(evidence, seed, missing).cochange:
            share = weights.shares["cochange"] * confidence * score[seed]
            if share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, reason)
    give_all(lent, add)


def lend_to_served(evidence, weights, score, add, missing) -> None:
    """After the demotions: an amalgamated copy gets a share of its best-ranked part's score (capped below it,
    so it ranks just below the part it holds), and the forward-declaration headers and the crate build
    script and the package build scripts serving the best few files a share of theirs (see ``search.traps``)."""
    lent: dict[str, tuple[float, str]] = {}

    def give(path: str, weight: float, reason: str) -> None:
        if weight > lent.get(path, (0.0, ""))[0]:
            lent[path] = (weight, reason)

    shares, p = weights.shares, weights.params
    for copy, found in evidence.files.items():
        held = [q for q in found.parts if score.get(q, 0.0) > 0]
        if held:
            best = max(held, key=lambda q: (score[q], q))
            give(copy, min(shares["copy"] * score[best], p["copy_cap"] * score[best] - score.get(copy, 0.0)),
                 f"copy holding `{best}`")
    for seed in best_seeds(evidence, weights, score)[: p["trap_seeds"]]:
        base = score.get(seed, 0.0)
        if base <= 0 or (seed in evidence.files and "amalgamated" in evidence.files[seed].flags):
            continue
        links = links_of(evidence, seed, missing)
        for header in links.forward:
            give(header, shares["forward"] * base, f"forward declarations of `{seed}`")
        if links.build:
            give(links.build, shares["build"] * base, f"build script of `{seed}`'s crate")
        for script in links.package_build:  # capped like a copy: never above the file it builds
            give(script, min(shares["package_build"] * base, p["copy_cap"] * base - score.get(script, 0.0)),
                 f"build script of `{seed}`'s package")
    give_all(lent, add)


def _lend_to_folder(evidence, weights, score, add, missing) -> None:
    """The files beside the best few (``evidence.folder``): a folder-mate that has evidence of its own gets
    the ``folder`` share of the seed's score, a file of the same name in a sibling folder the ``namesake``
    share: a fix to one file of a package, or to one platform's copy, often touches its siblings."""
    shares = weights.shares
    seeds = best_seeds(evidence, weights, score)[: weights.params["folder_seeds"]]
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        links = links_of(evidence, seed, missing)
        for path in links.folder:
            share = shares["folder"] * score[seed]
            if path not in seeds and score.get(path, 0.0) > 0 and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"beside `{seed}` in its folder")
        for path in links.namesakes:
            share = shares["namesake"] * score[seed]
            if path not in seeds and share > lent.get(path, (0.0, ""))[0]:
                lent[path] = (share, f"named as `{seed}` in a sibling folder")
    give_all(lent, add)


def _lend_to_types(evidence, weights, score, add, missing) -> None:
    """In languages of one type per file (``evidence.types``): a best file's kin (the types its header extends
    and those extending it) get the ``kin`` share, its family (type names going on from its own) the
    ``family`` share, and the files writing its type name the ``users`` share."""
    shares = weights.shares
    seeds = best_seeds(evidence, weights, score)[: weights.params["type_seeds"]]
    lent: dict[str, tuple[float, str]] = {}
    for seed in seeds:
        links = links_of(evidence, seed, missing)
        for kind, paths, reason in (("kin", links.kin, "extends or is extended by"),
                                    ("family", links.family, "named after"), ("users", links.users or (), "uses")):
            share = shares[kind] * score[seed]
            for path in paths:
                if path not in seeds and share > lent.get(path, (0.0, ""))[0]:
                    lent[path] = (share, f"{reason} `{seed}`")
    give_all(lent, add)


def _lift_cochanged(evidence, weights, score, add, missing) -> None:
    """A file with evidence of its own that changed together with one of the best ``cochange_lift_seeds`` files:
    its score times 1 + ``cochange_lift`` x the pair's confidence x the seed's score over the best file's, never
    past ``cochange_lift_cap`` of the seed's. Two weak signals agreeing (the text points at the file a little,
    and it moves with the file the text points at most) bring a fix's second and third file into the top five,
    where the additive ``cochange`` share alone stays too small to, and a file the text never touches is not
    lifted (issue 23: the boot finds one fixed file and misses the others)."""
    k = weights.shares["cochange_lift"]
    if k <= 0:
        return
    p = weights.params
    seeds = best_seeds(evidence, weights, score)[: p["cochange_lift_seeds"]]
    if not seeds or score[seeds[0]] <= 0:
        return
    top = score[seeds[0]]
    best: dict[str, tuple[float, str, str]] = {}
    for seed in seeds:
        for path, confidence, reason in links_of(evidence, seed, missing).cochange:
            found = evidence.files.get(path)
            if path in seeds or score.get(path, 0.0) <= 0 or found is None or not found.reasons:
                continue
            strength = confidence * score[seed] / top
            if strength > best.get(path, (0.0, "", ""))[0]:
                best[path] = (strength, seed, reason)
    lent: dict[str, tuple[float, str]] = {}
    for path, (strength, seed, reason) in best.items():
        lift = min(k * strength * score[path], p["cochange_lift_cap"] * score[seed] - score[path])
        if lift > 0:
            lent[path] = (lift, reason)
    give_all(lent, add)


# in this order: each pass finds the best files again, after the shares the one before lent
PASSES = (_lend_to_cochanged, _lend_to_neighbours, _lend_to_overriders, _lend_to_declarations, _lend_to_entry_points,
           _lend_to_siblings, _lend_to_folder, _lend_to_types, _lift_cochanged)
