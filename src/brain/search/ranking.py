"""The file ranking in two steps: ``gather`` the evidence of a task, then ``combine`` it with weights.

``gather(view, text)`` reads the repository (a ``CodeView``) once and measures every kind of
evidence at unit weight: per candidate file a dict ``feature -> value`` (a feature's value is
what the file's score gains per unit of that feature's weight), the reasons in the order they
were found, flags (test, generated, nonproduct, nested...), the features that name the file
outright, and what the neighbour-lending passes need (``Links``: import neighbours, twins,
overriders, siblings, declaration twins, entry points). ``Evidence`` round-trips through
JSON, so a weight fitter measures a task once and combines it many times.

``combine(evidence, weights)`` needs no repository: the weighted sum of the features, then
the lending passes (``lending``: each lends a share of the best few files' scores to their neighbours, the
best recomputed before each pass), then the demotion factors, then the order. For the weights
``gather`` was given (the shipped ones by default) it is exactly the ranking ``locate`` gives.
For other weights it is approximate in one way only: when a file becomes one of the best few
that none of the gathered files' evidence made a candidate (it only received lent shares and
was not among the best under the gathering weights), its own neighbours are not known and it
lends nothing.
"""

from __future__ import annotations

from collections import defaultdict

from ..errors import InvalidInput
from ..records import field, record
from .lending import PASSES as _PASSES, Links, Scores, _paths, lend_to_served as _lend_to_served
from .lending import _lend_to_entry_points, _lend_to_overriders, _lend_to_siblings  # noqa: F401  (their tests)
from .weights import Weights, shipped_weights

__all__ = ["Evidence", "FileEvidence", "Links", "FileHit", "Localization", "gather", "combine", "module_of",
           "strength", "STRENGTH", "BOOST_FEATURES", "LIFT_FEATURES", "EVIDENCE_SCHEMA", "TRAP_FLAGS"]

EVIDENCE_SCHEMA = 1
# features that count only on a file that has other evidence (a module's files are not all candidates)
BOOST_FEATURES = frozenset({"in_module", "scope", "path_words", "type_words"})
# boosts multiplying the file's score by (1 + weight x value): an area lifts its files without reordering them
LIFT_FEATURES = frozenset({"scope", "path_words", "type_words"})
# languages of one type per file name a file after the type it holds (evidence.types)
TYPE_FILE_EXTS = (".java", ".kt", ".cs", ".php", ".rb")
TRAP_FLAGS = frozenset({"amalgamated", "generated_trap", "tool"})  # their factor stacks with `nonproduct` (search.traps)


@record
class FileHit:
    path: str
    score: float
    reasons: list[str] = field(default_factory=list)


@record
class Localization:
    files: list[FileHit]
    modules: list[tuple[str, float]]
    evidence: dict | None = None  # how strong the best file's evidence is (see ``strength``)

    @property
    def paths(self) -> list[str]:
        return [h.path for h in self.files]


# the kinds of evidence, strongest first: the strongest the best file has says how far an agent can trust the
# ranking (a named traceback frame: read that file; a text match only: explore). A feature not listed is text.
STRENGTH = (
    ("frame", ("frame_last", "frame"), "a traceback frame names `{path}`"),
    ("path", ("path",), "the task writes the path `{path}`"),
    ("name", ("module", "qual", "route"), "the task names `{path}` (its module, a `Class.member` in it, or its route)"),
    ("symbol", ("symbol", "stem"), "names the task writes are defined in `{path}`"),
    ("quote", ("quote",), "text the task quotes is in `{path}`"),
    ("entry", ("entry",), "the title is about the command line and `{path}` is the program's entry point"),
)
_TEXT_ONLY = "text match only: no path, frame or name of the task points at a file; explore before trusting the order"


def strength(evidence: "Evidence", weights: Weights, path: str | None) -> dict | None:
    """``{"kind", "path", "text"}``: the strongest kind of evidence of its own ``path`` has (``STRENGTH``), or
    ``"text"`` when only word overlap, the working state or a neighbour's share put it there."""
    if path is None:
        return None
    found = evidence.files.get(path)
    have = {f for f, v, _ in found.reasons if weights.features.get(f, 0.0) * v > 0} if found else set()
    for kind, features, text in STRENGTH:
        if have.intersection(features):
            return {"kind": kind, "path": path, "text": text.format(path=path)}
    return {"kind": "text", "path": path, "text": _TEXT_ONLY}


def module_of(path: str) -> str:
    """The folder a file's score counts toward in the ranking's modules (``.`` at the top)."""
    return path.rsplit("/", 1)[0] if "/" in path else "."


@record
class FileEvidence:
    """Everything the ranking knows about one file, at unit weight."""

    features: dict[str, float] = field(default_factory=dict)
    reasons: list[tuple[str, float, str]] = field(default_factory=list)  # (feature, unit value, text), as found
    flags: list[str] = field(default_factory=list)
    named_by: list[str] = field(default_factory=list)  # features whose evidence names the file outright
    links: Links | None = None  # None: not read (the file was not a candidate)
    parts: list[str] = field(default_factory=list)  # an amalgamated copy's parts (it gets a share of the best one's)

    def to_json(self) -> dict:
        out: dict = {"features": dict(self.features), "reasons": [list(r) for r in self.reasons]}
        if self.flags:
            out["flags"] = list(self.flags)
        if self.parts:
            out["parts"] = list(self.parts)
        if self.named_by:
            out["named_by"] = list(self.named_by)
        if self.links is not None:
            out["links"] = self.links.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict) -> "FileEvidence":
        if not isinstance(data, dict):
            raise InvalidInput("each file's evidence must be an object")
        try:
            features = {str(k): float(v) for k, v in data.get("features", {}).items()}
            reasons = [(str(f), float(v), str(t)) for f, v, t in data.get("reasons", [])]
            flags = [str(f) for f in data.get("flags", [])]
            named_by = [str(f) for f in data.get("named_by", [])]
            parts = _paths(data.get("parts", []))
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"file evidence of the wrong shape: {exc}") from None
        links = data.get("links")
        if links is not None and not isinstance(links, dict):
            raise InvalidInput("evidence links must be an object")
        return cls(features, reasons, flags, named_by, Links.from_json(links) if links is not None else None, parts)


@record
class Evidence:
    """A task's evidence over the repository's files, independent of the weights (see the module doc)."""

    files: dict[str, FileEvidence] = field(default_factory=dict)

    def file(self, path: str) -> FileEvidence:
        found = self.files.get(path)
        if found is None:
            found = self.files[path] = FileEvidence()
        return found

    def add(self, path: str, feature: str, value: float, reason: str, *, name: bool = False) -> None:
        """Record ``value`` (at unit weight) of ``feature`` for ``path``; nothing for a value <= 0."""
        if value <= 0:
            return
        found = self.file(path)
        found.features[feature] = found.features.get(feature, 0.0) + value
        found.reasons.append((feature, value, reason))
        if name and feature not in found.named_by:
            found.named_by.append(feature)

    @property
    def candidates(self) -> list[str]:
        """Files with any evidence of their own (not only lent shares)."""
        return [p for p, f in self.files.items() if f.reasons]

    def to_json(self) -> dict:
        return {"schema": EVIDENCE_SCHEMA, "files": {p: f.to_json() for p, f in self.files.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "Evidence":
        if not isinstance(data, dict) or data.get("schema") != EVIDENCE_SCHEMA or not isinstance(data.get("files"), dict):
            raise InvalidInput(f"evidence is a JSON object with \"schema\": {EVIDENCE_SCHEMA} and \"files\"")
        return cls({str(p): FileEvidence.from_json(f) for p, f in data["files"].items()})


def gather(view, text: str | None, *, changed=(), claimed=(), module: str | None = None,
           weights: Weights | None = None, links: str = "all") -> Evidence:
    """Every kind of evidence ``text`` gives about the repository's files, at unit weight.

    ``weights`` supplies the thresholds of the gathering (``params``) and the weights under
    which the best files are found (default: the shipped ones). ``links="all"`` reads the
    neighbours of every candidate (what a fitter combining other weights needs);
    ``links="best"`` only those of the files that are the best under ``weights`` (what one
    ranking needs: ``combine`` with ``weights`` is the same, for less reading), and only the kinds of
    link some share of ``weights`` lends along."""
    from .evidence import collect_links, gather_direct

    if links not in ("all", "best"):
        raise InvalidInput("links must be \"all\" or \"best\"", field="links")
    weights = weights or shipped_weights()
    evidence, context = gather_direct(view, text, changed=changed, claimed=claimed, module=module, weights=weights)
    every = links == "all"
    if every:
        collect_links(view, evidence, evidence.candidates, context, weights, every)
    for _ in range(32):  # the files that are the best (also those that became so only through lent shares)
        missing: set[str] = set()
        _rank(evidence, weights, missing)
        if not missing:
            break
        collect_links(view, evidence, sorted(missing), context, weights, every)
    return evidence


def combine(evidence: Evidence, weights: Weights | None = None, limit: int = 20) -> Localization:
    """The ranked files for ``evidence`` under ``weights`` (default: the shipped ones). Pure."""
    weights = weights or shipped_weights()
    score, why = _rank(evidence, weights, None)
    order = sorted(score, key=lambda p: (-score[p], p))[:limit]
    hits = []
    for path in order:
        reasons: list[str] = []
        for _, reason in sorted(why[path], key=lambda r: -r[0]):
            if reason not in reasons:
                reasons.append(reason)
        hits.append(FileHit(path, round(score[path], 4), reasons[:3]))
    modules: dict[str, float] = defaultdict(float)
    for hit in hits:
        modules[module_of(hit.path)] += hit.score
    return Localization(hits, sorted(modules.items(), key=lambda kv: (-kv[1], kv[0])),
                        strength(evidence, weights, hits[0].path if hits else None))


def _typed_title(evidence: Evidence, scale: float) -> float:
    """The title's BM25 scale of a task: ``scale`` when most files the title matches are of languages of one
    type per file (``TYPE_FILE_EXTS``), else 1. Per task, not per file, so a mixed repository keeps its
    languages' balance."""
    matched = typed = 0
    for path, found in evidence.files.items():
        if found.features.get("bm25_title", 0.0) > 0:
            matched += 1
            typed += path.endswith(TYPE_FILE_EXTS)
    return scale if typed * 2 > matched else 1.0


def _rank(evidence: Evidence, weights: Weights, missing: set[str] | None):
    """(score, reasons) of every file: features weighed, shares lent, factors applied."""
    feats = weights.features
    typed_title = _typed_title(evidence, weights.params["typed_title"])
    score: dict[str, float] = Scores()  # a dict counting its writes (lending.best_seeds keeps its answer)
    why: dict[str, list[tuple[float, str]]] = defaultdict(list)
    named: set[str] = set()
    for path, found in evidence.files.items():
        total, some = 0.0, False
        for boost in (False, True):
            if boost and not some:
                break
            for feature, value, reason in found.reasons:
                if (feature in BOOST_FEATURES) != boost:
                    continue
                try:
                    weight = feats[feature] * value
                except KeyError:
                    raise InvalidInput(f"the evidence has a feature `{feature}` the weights do not know",
                                       hint="gather and combine with the same version of brain") from None
                if weight <= 0:
                    continue
                if feature == "bm25_title":
                    weight *= typed_title
                if feature in LIFT_FEATURES:
                    weight = total * weight  # boosts come after the evidence they lift
                total += weight
                some = True
                why[path].append((weight, reason))
        if some:
            score[path] = total
        if any(feats.get(f, 0.0) > 0 for f in found.named_by):
            named.add(path)

    def add(path: str, weight: float, reason: str) -> None:
        if weight <= 0:
            return
        score[path] = score.get(path, 0.0) + weight
        why[path].append((weight, reason))

    for lend in _PASSES:
        lend(evidence, weights, score, add, missing)
    factors = weights.factors
    for path in list(score):
        flags = evidence.files[path].flags if path in evidence.files else ()
        for name, factor in factors.items():
            if name in flags and (name in weights.named_too or path not in named):
                score[path] *= factor
                if name in TRAP_FLAGS and "nonproduct" in flags:
                    score[path] *= factors["nonproduct"]  # a copy or a tool script among examples or docs: both
                break
    _lend_to_served(evidence, weights, score, add, missing)
    return score, why
