"""Function-level localization: which functions, methods and classes a task text is about.

No model. Each definition collects evidence a reader would use, weighed by how
specific it is, and the file ranking (``locate``) is the prior:

1. traceback frames: the definition of that file enclosing the frame's line (the
   deepest frame inside the repository weighs most);
2. names: ``Class.method`` pairs and dotted paths the text writes, then identifiers
   that equal a definition's name, each weighed by how few definitions share it and
   how code-like the word looks;
3. the call graph: from the definitions the text names (or its frames point to), the
   functions they call, one and two hops down (a report names the public function, the
   fix is often in the internal one it calls); a named class lends a little to its methods;
4. full text: BM25 over each definition's body (identifier-aware tokens), and again scaled by the
   definition's size (BM25 favours short bodies; a fix lands where there are lines to change);
5. the file ranking: a definition in a highly ranked file starts higher.

Pure over two read-only views (``FunctionView``, ``CodeView``): same inputs, same order.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict

from ..records import field, record
from .fn_attrs import lift_attr_sharers
from .function_evidence import FN_STRENGTH, LATE, NAMED, FunctionEvidence, LiveGraph, strength_of
from .functions import DefRow, FunctionView
from .import_walk import imported_files
from .locate import CodeView, Localization, extract_signals
from .weights import Weights, shipped_weights
from ..lazyre import lazy

__all__ = ["FunctionHit", "FN_STRENGTH", "strength_of", "rank_functions", "gather_functions", "combine_functions",
           "locate_functions", "imported_files", "FRAME"]

_PRIOR = "in a ranked file"
FRAME = lazy(r"""File ["']([^"']+)["'], line (\d+)(?:, in ([\w<>.]+))?""")

# the weights and thresholds are data: ``functions`` of ``weights.json`` (each with its why there), read as ``F``


@record
class FunctionHit:
    path: str
    qual: str
    kind: str
    start: int
    end: int
    score: float
    reasons: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # lines the evidence points to (frames, call sites)
    signature: str = ""
    body_start: int = 0
    evidence: str = "text"  # the strongest kind of evidence it has (``FN_STRENGTH``): how far to trust its rank

    @property
    def key(self) -> str:
        return f"{self.path}::{self.qual}"

    def to_dict(self) -> dict:
        return {"id": self.key, "path": self.path, "name": self.qual, "kind": self.kind, "start": self.start,
                "end": self.end, "score": round(self.score, 4), "why": list(self.reasons), "evidence": self.evidence}


class _Scores:
    def __init__(self) -> None:
        self.rows: dict[int, DefRow] = {}
        self.score: dict[int, float] = defaultdict(float)
        self.evidence: dict[int, float] = defaultdict(float)  # everything but the file prior and full text
        self.why: dict[int, list[tuple[float, str, str]]] = defaultdict(list)  # (weight, reason, feature)
        self.lines: dict[int, set[int]] = defaultdict(set)
        self.beyond_prior: set[int] = set()  # definitions with evidence other than their file's rank

    def add(self, row: DefRow, weight: float, reason: str, *, named: bool = False, line: int | None = None,
            feature: str = "") -> None:
        if weight <= 0:
            return
        self.rows[row.id] = row
        self.score[row.id] += weight
        if named:
            self.evidence[row.id] += weight
        self.why[row.id].append((weight, reason, feature))
        if reason != _PRIOR:
            self.beyond_prior.add(row.id)
        if line:
            self.lines[row.id].add(line)

    def kinds(self, def_id: int) -> dict[str, float]:
        """Feature -> summed weight of one definition (for ``strength_of``)."""
        out: dict[str, float] = defaultdict(float)
        for weight, _, feature in self.why[def_id]:
            out[feature] += weight
        return out


def _innermost(rows: list[DefRow], line: int) -> DefRow | None:
    best = None
    for row in rows:
        if row.start <= line <= row.end and (best is None or row.end - row.start < best.end - best.start):
            best = row
    return best


def rank_functions(fview: FunctionView, cview: CodeView, text: str | None, localization: Localization, *,
                   limit: int = 20, weights: Weights | None = None) -> list[FunctionHit]:
    """The definitions a task text is about, most likely first (under ``weights``' function weights; default:
    the shipped ones): ``combine_functions(gather_functions(...))``."""
    return _gather(fview, cview, text, localization, weights, limit)[1]


def gather_functions(fview: FunctionView, cview: CodeView, text: str | None, localization: Localization, *,
                     weights: Weights | None = None) -> FunctionEvidence:
    """Every kind of evidence ``text`` gives about the definitions, at unit weight (``function_evidence``).

    ``weights`` supplies the thresholds (``params``) and the weights under which the call graph and the
    lifts are walked once, so that the graph they need is recorded (default: the shipped ones)."""
    return _gather(fview, cview, text, localization, weights, 20)[0]


def _gather(fview: FunctionView, cview: CodeView, text: str | None, localization: Localization,
            weights: Weights | None, limit: int) -> tuple[FunctionEvidence, list[FunctionHit]]:
    weights = weights or shipped_weights()
    F = weights.functions
    graph = LiveGraph(fview, cview, F)
    ev = FunctionEvidence(graph=graph)
    if not text or not text.strip():
        return ev, []
    sig = extract_signals(text)

    # 5. the file prior
    files = localization.files[:F["files_considered"]]
    prior: dict[str, float] = {}
    if files and files[0].score > 0:
        top = files[0].score
        for rank, hit in enumerate(files):
            prior[hit.path] = (max(hit.score, 0.0) / top) ** F["prior_power"] / (1 + rank) ** F["prior_rank"]
    for path, p in prior.items():
        for row in graph.in_file(path):
            ev.add(row, "file", p * F["kind_factor"].get(row.kind, 1.0), _PRIOR)

    # 1. traceback frames
    frames = []
    for match in FRAME.finditer(text):
        hits = cview.resolve_path(match.group(1).replace("\\", "/"))
        if hits:
            frames.append((hits, int(match.group(2)), match.group(3) or ""))
    for i, (hits, line, fn) in enumerate(frames):
        last = i == len(frames) - 1
        feature, unit = ("frame_last", 1.0) if last else ("frame", 0.5 + 0.5 * (i + 1) / len(frames))
        for path in hits:
            rows = graph.in_file(path)
            row = _innermost(rows, line)
            if row is not None and fn and row.name != fn:
                # the file changed since the trace: trust the function name over the line number
                named = [r for r in rows if r.name == fn]
                row = named[0] if len(named) == 1 else row
            elif row is None and fn:
                named = [r for r in rows if r.name == fn]
                row = named[0] if len(named) == 1 else None
            if row is not None:
                ev.add(row, feature, unit / len(hits), f"traceback frame (line {line})",
                       line=line if row.start <= line <= row.end else None)

    # 2. names: dotted paths and pairs first, then single identifiers
    words = dict(sig.idents)
    dotted_parts: set[str] = set()
    for dotted in sig.dotted:
        dotted_parts.update(dotted.split("."))
    by_name = fview.named(set(words) | dotted_parts)
    seen_pairs: set[tuple[str, str]] = set()
    for dotted in dict.fromkeys(sig.dotted):
        parts = dotted.split(".")
        for a, b in zip(parts, parts[1:]):
            if (a, b) in seen_pairs:
                continue
            seen_pairs.add((a, b))
            rows = [r for r in by_name.get(b.lower(), []) if r.name == b and (r.parent.rsplit(".", 1)[-1] == a or
                    cview.files.get(r.path, ("", False))[0].rsplit(".", 1)[-1] == a)]
            if rows and len(rows) <= 6:
                for row in rows:
                    ev.add(row, "qual", 1.0 / len(rows) ** 0.5, f"`{a}.{b}` in the task")
    for word, weight in sorted(words.items()):
        rows = [r for r in by_name.get(word.lower(), []) if r.name == word]
        if not rows or len(rows) > 60:
            continue
        specificity = 1.0 / len(rows) ** 0.6
        for row in rows:
            ev.add(row, "name", min(weight, 2.0) * specificity * F["kind_factor"].get(row.kind, 1.0), f"named `{word}`")
            if row.kind == "class":
                members = [m for m in graph.in_file(row.path) if m.parent == row.qual]
                for m in members:
                    unit = min(weight, 2.0) * specificity / max(len(members), 1) ** 0.5
                    ev.add(m, "member", unit, f"method of `{word}`")

    # 4. full text over bodies: the whole text, and the title alone (added after the graph: see LATE)
    for terms, feature in ((sig.words, "body"), (sig.title_words, "body_title")):
        ranked = fview.bm25(terms, 300)
        if not ranked:
            continue
        top = ranked[0][1] or 1.0
        rows = fview.by_ids(i for i, _ in ranked)
        cview.files.prefetch(r.path for r in rows.values())
        for def_id, score in ranked:
            row = rows.get(def_id)
            if row is None or cview.is_test(row.path):
                continue
            factor = F["class_body_factor"] if row.kind == "class" else 1.0
            ev.add(row, feature, factor * score / top, "full-text match")
            if feature == "body" and row.kind != "class":
                # BM25 favours short bodies; a fix lands in a definition with lines to change
                size = min(math.log(1 + row.end - row.start + 1) / math.log(1 + F["size_lines"]), 1.0)
                ev.add(row, "body_size", size * score / top, "full-text match")

    # walked once under these weights, the graph records what their combination needs
    return ev, combine_functions(ev, weights, limit=limit)


def combine_functions(evidence: FunctionEvidence, weights: Weights | None = None, *,
                      limit: int = 20) -> list[FunctionHit]:
    """The ranked definitions for ``evidence`` under ``weights`` (default: the shipped ones). Needs no index:
    the call graph and the lifts read ``evidence.graph``."""
    F = (weights or shipped_weights()).functions
    graph = evidence.graph
    s = _Scores()
    if not evidence.defs:
        return []

    # each definition's recorded evidence, split once into what comes before the call graph and after (LATE)
    early: list[tuple[DefRow, list]] = []
    late: list[tuple[DefRow, list]] = []
    for def_id, found in evidence.defs.items():
        row = evidence.rows[def_id]
        before = [r for r in found.reasons if r[0] not in LATE]
        if before:
            early.append((row, before))
        if len(before) < len(found.reasons):
            late.append((row, [r for r in found.reasons if r[0] in LATE]))

    def direct(items: list[tuple[DefRow, list]]) -> None:
        # ``_Scores.add`` inlined (the hot loop: thousands of definitions per task); each sum is accumulated in
        # the same order as one ``add`` per reason would, so the floats are the same to the last bit
        rows, score, named, why, lines, beyond = s.rows, s.score, s.evidence, s.why, s.lines, s.beyond_prior
        for row, reasons in items:
            i = row.id
            total = score.get(i, 0.0)
            by_name = named.get(i, 0.0)
            kept = []
            has_name = False
            for feature, value, reason, line in reasons:
                weight = F[feature] * value
                if weight <= 0:
                    continue
                total += weight
                if feature in NAMED:
                    by_name += weight
                    has_name = True
                kept.append((weight, reason, feature))
                if reason != _PRIOR:
                    beyond.add(i)
                if line:
                    lines[i].add(line)
            if kept:
                rows[i] = row
                score[i] = total
                if has_name:
                    named[i] = by_name
                why[i].extend(kept)

    direct(early)

    # 3. the call graph, from the definitions the evidence names
    seeds = sorted((i for i in s.evidence if s.evidence[i] > 0), key=lambda i: (-s.evidence[i], i))[:F["max_seeds"]]
    if seeds:
        best = s.evidence[seeds[0]]
        frontier = [(s.rows[i], s.evidence[i] / best) for i in seeds]
        visited = set(seeds)
        for hop in range(F["call_hops"]):
            nxt: dict[int, tuple[DefRow, float]] = {}
            for caller, strength in frontier:
                targets = graph.callees(caller)
                if not targets:
                    continue
                reach = strength * (F["hop_decay"] ** hop) / len(targets) ** F["fanout_power"]
                share = F["call"] * reach
                for target, line in targets:
                    if target.id == caller.id:
                        continue
                    s.add(target, share, f"called by `{caller.qual}`", feature="call")
                    s.lines[caller.id].add(line)
                    if target.id not in visited:
                        got = nxt.get(target.id)
                        nxt[target.id] = (target, max(reach, got[1] if got else 0.0))
            visited.update(nxt)
            frontier = sorted(nxt.values(), key=lambda t: (-t[1], t[0].id))[:F["max_seeds"]]
            if not frontier:
                break

    # 3b. callers of what the text names, one hop up
    named = sorted((i for i in s.evidence if s.evidence[i] > 0), key=lambda i: (-s.evidence[i], i))[:F["caller_seeds"]]
    if named:
        _add_callers(graph, s, [(s.rows[i], s.evidence[i] / s.evidence[named[0]]) for i in named], F)

    direct(late)  # 4. full text

    # being in a ranked file is a prior, not evidence: alone it weighs less
    for def_id in s.score.keys() - s.beyond_prior:
        s.score[def_id] *= F["prior_alone"]

    # two or more methods of one class at the very top: the class itself is what changes (a member added)
    leaders = _top(s, F["co_top"], lambda i: (-s.score[i], s.rows[i].path, s.rows[i].start))
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for def_id in leaders:
        row = s.rows[def_id]
        if row.kind == "method":
            groups[(row.path, row.parent)].append(def_id)
    for (path, parent), ids in sorted(groups.items()):
        if len(ids) < 2:
            continue
        owner = next((r for r in graph.in_file(path) if r.qual == parent and r.kind == "class"), None)
        if owner is not None and owner.id not in leaders:
            s.add(owner, F["co"] * min(s.score[i] for i in ids), f"{len(ids)} of its methods rank at the top", feature="co")

    _lift_self_callers(graph, s, leaders, F)
    _lift_shared_bases(graph, s, leaders, F)
    _lift_twins(graph, s, leaders, F)
    lift_attr_sharers(graph, s, leaders, F)

    def key(i: int) -> tuple:
        return -s.score[i], s.rows[i].path, s.rows[i].start, s.rows[i].qual

    order = _top(s, limit, key)
    hits = []
    for def_id in order:
        row = s.rows[def_id]
        reasons: list[str] = []
        for _, reason, _ in sorted(s.why[def_id], key=lambda r: -r[0]):
            if reason not in reasons:
                reasons.append(reason)
        hits.append(FunctionHit(row.path, row.qual, row.kind, row.start, row.end, round(s.score[def_id], 4),
                                reasons[:3], sorted(s.lines[def_id]), row.signature, row.body_start,
                                strength_of(s.kinds(def_id))))
    return hits


def _top(s: _Scores, n: int, key) -> list[int]:
    """``sorted(s.score, key=key)[:n]`` for a key led by the score, without keying every definition: only
    those scoring at least the n-th best score can be among the first n."""
    if n <= 0:
        return []
    if len(s.score) <= n:
        return sorted(s.score, key=key)
    floor = heapq.nlargest(n, s.score.values())[-1]
    return sorted((i for i, v in s.score.items() if v >= floor), key=key)[:n]


def _add_callers(graph, s: _Scores, seeds: list[tuple[DefRow, float]], F: dict) -> None:
    """The definitions that call a seed, its share spread among them."""
    for seed, strength in seeds:
        if seed.kind == "class" or seed.name.startswith("__"):
            continue
        found = graph.callers(seed)
        if not found:
            continue
        share = F["caller"] * strength / len(found) ** F["fanout_power"]
        for row, line in found:
            s.add(row, share, f"calls `{seed.qual}`", line=line, feature="caller")


def _lift_self_callers(graph, s: _Scores, leaders: list[int], F: dict) -> None:
    """Methods that call a top-ranked method of their own class through `self`: the class's behaviour is
    often split between the method a report reaches and the ones leaning on it."""
    if F["self_caller"] <= 0:
        return
    before = {def_id: s.score[def_id] for def_id in leaders}
    for method in [s.rows[i] for i in leaders if s.rows[i].kind == "method"]:
        found = graph.self_callers(method)
        if not found:
            continue
        share = F["self_caller"] * before[method.id] / len(found) ** F["fanout_power"]
        for row, line in found:
            lift = min(share, F["self_caller_cap"] * before[method.id] - s.score.get(row.id, 0.0))
            s.add(row, lift, f"calls `self.{method.name}`", line=line, feature="self_caller")


def _lift_shared_bases(graph, s: _Scores, leaders: list[int], F: dict) -> None:
    """Two top-ranked classes of one file sharing a base class of that file: the base (and its methods) lifted."""
    counts: dict[tuple[str, str], list[float]] = defaultdict(list)
    for def_id in leaders:
        row = s.rows[def_id]
        if row.kind == "class":
            for base in row.bases:
                counts[(row.path, base)].append(s.score[def_id])
    for (path, base), scores in sorted(counts.items()):
        if len(scores) < 2:
            continue
        rows = graph.in_file(path)
        owner = next((r for r in rows if r.kind == "class" and r.qual == base), None)
        if owner is None:
            continue
        lift = F["base"] * min(scores)
        s.add(owner, lift, f"base of {len(scores)} top-ranked classes", feature="base")
        members = [r for r in rows if r.parent == owner.qual and r.kind == "method"]
        for m in members:
            s.add(m, lift / max(len(members), 1) ** F["fanout_power"], f"method of `{base}`, a base of top-ranked classes",
                  feature="base")


_COMPARISON = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"})


def _twin_key(name: str) -> str:
    if name in _COMPARISON:
        return "__eq__"  # equality, ordering and hashing are one contract: one changes with the others
    if name.endswith("_async"):
        return name[: -len("_async")]
    if name.startswith("async_"):
        return name[len("async_"):]
    return name


def _lift_twins(graph, s: _Scores, leaders: list[int], F: dict) -> None:
    """A top-ranked method's twin in the same class (`x` and `x_async`/`async_x`; `__eq__`, `__lt__` and `__hash__`):
    one changes with the other."""
    before = {def_id: s.score[def_id] for def_id in leaders}
    for def_id in leaders:
        row = s.rows[def_id]
        if row.kind != "method":
            continue
        key = _twin_key(row.name)
        for other in graph.in_file(row.path):
            if (other.parent == row.parent and other.kind == "method" and other.id != row.id
                    and _twin_key(other.name) == key):
                # lifted toward the named twin, never past it
                lift = min(F["twin"] * before[def_id], 0.99 * before[def_id] - s.score.get(other.id, 0.0))
                s.add(other, lift, f"twin of `{row.qual}`", feature="twin")


def locate_functions(brain, task: str | None, *, module: str | None = None, session: str | None = None,
                     limit: int = 20, files: int | None = None, view: CodeView | None = None,
                     weights: Weights | None = None) -> tuple[Localization, list[FunctionHit]]:
    """The file ranking (``Brain.locate``, memoized for the boot) and the definitions ranked on it.

    The function index is built on first need when an older index has none."""
    from .functions import refresh_functions

    found = brain.locate(task, module=module, session=session,
                         limit=files or brain.settings.get("search.boot_files") or 20)
    if not found.files or not brain.index.exists:
        return found, []
    index = brain.index
    fview = FunctionView(index.db)
    if fview.empty:
        refresh_functions(index.db, index.repo)
    from .service import boot_code_view

    if view is not None or weights is not None:  # a benchmark's own view or weights: ranked as asked
        return found, rank_functions(fview, view or boot_code_view(index), task, found, limit=limit, weights=weights)
    from .answers import remembered

    return found, remembered(index, ("functions", task, limit, repr(found)),
                             lambda: rank_functions(fview, boot_code_view(index), task, found, limit=limit))
