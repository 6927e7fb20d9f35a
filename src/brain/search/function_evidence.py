"""The function ranking's evidence, apart from its weights: what ``rank_functions.gather_functions`` measures.

Why: the file ranking's weights can be fitted because its evidence is gathered once at unit weight
and combined many times (``brain.search.ranking``). The function ranking gets the same split, so its
weights (``functions`` in ``weights.json``) can be fitted on the corpus instead of hand-set.

Two parts, both JSON round-trip:

* ``DefEvidence`` per candidate definition: ``(feature, unit value, reason, line)`` in the order found;
  a feature's weighted contribution is ``weights.functions[feature] * value``;
* the structure the combination walks (``Graph``): the definitions of a file, what a definition calls
  (resolved the way a reader would), who calls it, which methods call it through ``self``. While
  gathering, ``LiveGraph`` reads the function index and remembers every answer; a recorded graph
  (``RecordedGraph``) answers from that record alone. Combining under the gathering weights asks the
  same questions, so it is exact; under other weights a question never asked while gathering gets an
  empty answer (counted in ``missing``): the only approximation, as for the files.
"""

from __future__ import annotations


from ..errors import InvalidInput
from ..records import field, record
from .fn_attrs import find_attr_sharers
from .functions import DefRow, FunctionView

__all__ = ["DefEvidence", "FunctionEvidence", "LiveGraph", "RecordedGraph", "FN_EVIDENCE_SCHEMA", "NAMED", "LATE",
           "FN_STRENGTH", "STRENGTH_SHARE", "strength_of"]

FN_EVIDENCE_SCHEMA = 1
NAMED = frozenset({"frame", "frame_last", "qual", "name"})  # evidence that names the definition: seeds the graph
LATE = frozenset({"body", "body_title", "body_size"})
RETIRED = frozenset({"member_word"})  # features earlier code recorded (weight 0, removed): dropped when read back  # added after the call graph (the graph starts from named evidence only)


# the kinds of evidence a definition can have, strongest first (the function ranking's twin of ranking.STRENGTH):
# a traceback frame points into it; the task writes its name; it calls or is called by one of those; it sits
# beside a ranked one (its class, a twin, a self-caller, a shared base); else text match or its file's rank only
FN_STRENGTH = (
    ("frame", frozenset({"frame_last", "frame"})),
    ("named", frozenset({"qual", "name"})),
    ("call", frozenset({"call", "caller"})),
    ("near", frozenset({"member", "co", "self_caller", "base", "twin", "attr"})),
)


STRENGTH_SHARE = 0.25  # a kind of evidence says why a definition ranks when it gives this share of its score


def strength_of(weighed: dict[str, float]) -> str:
    """The strongest kind (``FN_STRENGTH``) that gives at least ``STRENGTH_SHARE`` of a definition's score
    (``weighed``: feature -> weighted contribution): a name sixty definitions share, a sliver beside a strong
    text match, does not make the definition "named"."""
    total = sum(weighed.values())
    for kind, names in FN_STRENGTH:
        if sum(v for f, v in weighed.items() if f in names) >= STRENGTH_SHARE * total > 0:
            return kind
    return "text"


@record
class DefEvidence:
    reasons: list[tuple[str, float, str, int]] = field(default_factory=list)  # (feature, unit value, reason, line)


def _row_json(row: DefRow) -> list:
    return [row.id, row.path, row.qual, row.name, row.kind, row.start, row.end, row.body_start, row.exported,
            row.signature, list(row.bases)]


def _row_from(data) -> DefRow:
    i, path, qual, name, kind, start, end, body_start, exported, signature, bases = data
    return DefRow(int(i), str(path), str(qual), str(name), str(kind), int(start), int(end), int(body_start),
                  bool(exported), str(signature), tuple(str(b) for b in bases))


class RecordedGraph:
    """The call-graph and file answers a gathering read, answered again without the index."""

    def __init__(self) -> None:
        self.rows: dict[int, DefRow] = {}
        self.files: dict[str, list[int]] = {}
        self.callees_of: dict[int, list[tuple[int, int]]] = {}
        self.callers_of: dict[int, list[tuple[int, int]] | None] = {}  # None: more callers than max_callers
        self.self_callers_of: dict[int, list[tuple[int, int]] | None] = {}
        self.attr_sharers_of: dict[int, list[tuple[int, str]]] = {}  # fn_attrs: (method, shared attributes)
        self.missing: set[str] = set()

    def _keep(self, row: DefRow) -> int:
        self.rows.setdefault(row.id, row)
        return row.id

    def in_file(self, path: str) -> list[DefRow]:
        ids = self.files.get(path)
        if ids is None:
            self.missing.add(f"file {path}")
            return []
        return [self.rows[i] for i in ids]

    def _pairs(self, table: dict, row: DefRow, what: str):
        found = table.get(row.id, ...)
        if found is ...:
            self.missing.add(f"{what} {row.id}")
            return []
        return None if found is None else [(self.rows[i], line) for i, line in found]

    def callees(self, row: DefRow) -> list[tuple[DefRow, int]]:
        return self._pairs(self.callees_of, row, "callees")

    def callers(self, row: DefRow) -> list[tuple[DefRow, int]] | None:
        return self._pairs(self.callers_of, row, "callers")

    def self_callers(self, row: DefRow) -> list[tuple[DefRow, int]] | None:
        return self._pairs(self.self_callers_of, row, "self-callers")

    def attr_sharers(self, row: DefRow) -> list[tuple[DefRow, str]]:
        found = self.attr_sharers_of.get(row.id)
        if found is None:
            self.missing.add(f"attr-sharers {row.id}")
            return []
        return [(self.rows[i], shared) for i, shared in found]

    def to_json(self) -> dict:
        pairs = lambda table: {str(k): None if v is None else [list(p) for p in v] for k, v in table.items()}  # noqa: E731
        return {"rows": [_row_json(r) for _, r in sorted(self.rows.items())], "files": dict(self.files),
                "callees": pairs(self.callees_of), "callers": pairs(self.callers_of),
                "self_callers": pairs(self.self_callers_of),
                "attr_sharers": {str(k): [list(t) for t in v] for k, v in self.attr_sharers_of.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "RecordedGraph":
        g = cls()
        try:
            g.rows = {row.id: row for row in map(_row_from, data.get("rows", []))}
            g.files = {str(p): [int(i) for i in ids] for p, ids in data.get("files", {}).items()}
            for key, table in (("callees", g.callees_of), ("callers", g.callers_of), ("self_callers", g.self_callers_of)):
                for k, v in data.get(key, {}).items():
                    table[int(k)] = None if v is None else [(int(i), int(line)) for i, line in v]
            g.attr_sharers_of = {int(k): [(int(i), str(shared)) for i, shared in v]
                                 for k, v in data.get("attr_sharers", {}).items()}
            known = set(g.rows)
            if any(i not in known for ids in g.files.values() for i in ids):
                raise ValueError("a file lists a definition the record does not hold")
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise InvalidInput(f"function graph of the wrong shape: {exc}") from None
        return g


class LiveGraph(RecordedGraph):
    """Answers from the function index (``params`` the function ranking's thresholds), each answer recorded."""

    def __init__(self, fview: FunctionView, cview, params: dict) -> None:
        super().__init__()
        self.fview = fview
        self._resolve = lambda row: _resolve_calls(fview, cview, row, fview.calls_of([row.id]).get(row.id, []))
        self._find_callers = lambda row: _find_callers(fview, row, params)
        self._find_self = lambda row: _find_self_callers(fview, self, row, params)
        self._params = params

    def in_file(self, path: str) -> list[DefRow]:
        if path not in self.files:
            self.files[path] = [self._keep(r) for r in self.fview.in_file(path)]
        return [self.rows[i] for i in self.files[path]]

    def _ask(self, table: dict, row: DefRow, find):
        if row.id not in table:
            self._keep(row)
            found = find(row)
            table[row.id] = None if found is None else [(self._keep(r), line) for r, line in found]
        found = table[row.id]
        return None if found is None else [(self.rows[i], line) for i, line in found]

    def callees(self, row: DefRow) -> list[tuple[DefRow, int]]:
        return self._ask(self.callees_of, row, self._resolve)

    def callers(self, row: DefRow) -> list[tuple[DefRow, int]] | None:
        return self._ask(self.callers_of, row, self._find_callers)

    def self_callers(self, row: DefRow) -> list[tuple[DefRow, int]] | None:
        return self._ask(self.self_callers_of, row, self._find_self)

    def attr_sharers(self, row: DefRow) -> list[tuple[DefRow, str]]:
        if row.id not in self.attr_sharers_of:
            self._keep(row)
            found = find_attr_sharers(self.fview, self, row, self._params)
            self.attr_sharers_of[row.id] = [(self._keep(r), shared) for r, shared in found]
        return [(self.rows[i], shared) for i, shared in self.attr_sharers_of[row.id]]


def _find_callers(fview: FunctionView, seed: DefRow, F: dict) -> list[tuple[DefRow, int]]:
    """The definitions that call ``seed`` (resolved as a reader would: `self.f()` in the seed's class, `f()` in
    its file or a file importing it, `obj.f()` only when the name is rare); none when more than max_callers."""
    if seed.kind == "class" or seed.name.startswith("__"):
        return []
    sites = fview.callers_of({seed.name}).get(seed.name, [])
    if not sites:
        return []
    callers = fview.by_ids({def_id for def_id, _ in sites})
    rare = fview.count_named(seed.name.lower()) <= 3
    found: dict[int, int] = {}
    for def_id, call in sites:
        row = callers.get(def_id)
        if row is None or row.id == seed.id or call.via == "set":
            continue
        if call.via == "self":
            ok = row.path == seed.path and (row.parent == seed.parent or rare)
        elif call.via == "name":
            ok = seed.kind == "function" and (row.path == seed.path or rare)
        else:
            ok = rare
        if ok:
            found.setdefault(row.id, call.line)
    if len(found) > F["max_callers"]:
        return []
    return [(callers[def_id], line) for def_id, line in sorted(found.items())]


def _find_self_callers(fview: FunctionView, graph, method: DefRow, F: dict) -> list[tuple[DefRow, int]]:
    """The methods of ``method``'s class calling it through `self` (none when more than max_callers)."""
    siblings = {r.id: r for r in graph.in_file(method.path) if r.parent == method.parent and r.id != method.id}
    found = {def_id: call.line for def_id, call in fview.callers_of({method.name}).get(method.name, [])
             if def_id in siblings and call.via == "self"}
    if len(found) > F["max_callers"]:
        return []
    return [(siblings[def_id], line) for def_id, line in sorted(found.items())]


def _resolve_calls(fview: FunctionView, cview: CodeView, caller: DefRow, calls) -> list[tuple[DefRow, int]]:
    """The definitions ``caller``'s calls reach (first call site of each), resolved the way a reader would."""
    out: dict[int, tuple[DefRow, int]] = {}
    same_file = fview.in_file(caller.path)
    klass = caller.qual if caller.kind == "class" else caller.parent
    imports = None
    calls = [c for c in calls if c.via != "set"]  # an attribute written, not a call
    names = {c.name.lower() for c in calls if c.via != "self"}
    global_rows = fview.named(names) if names else {}
    for call in calls:
        found: list[DefRow] = []
        if call.via == "self":
            found = [r for r in same_file if r.parent == klass and r.name == call.name]
            if klass:
                # overrides in the file's subclasses of this class answer `self.x` too
                short = klass.rsplit(".", 1)[-1]
                subclasses = {r.qual for r in same_file if r.kind == "class" and short in r.bases}
                found += [r for r in same_file if r.parent in subclasses and r.name == call.name]
            if not found:
                found = [r for r in same_file if r.name == call.name and r.kind == "method"]
            if not found:
                rows = [r for r in fview.named([call.name]).get(call.name.lower(), []) if r.name == call.name]
                found = rows if len(rows) <= 3 else []
        elif call.via == "name":
            found = [r for r in same_file if r.qual == call.name]
            if not found:
                if imports is None:
                    imports = cview.imports_of(caller.path)
                for target in imports:
                    if target.endswith("." + call.name):
                        path = cview.by_module.get(target[: -len(call.name) - 1])
                        if path:
                            found = [r for r in fview.in_file(path) if r.qual == call.name]
                            if found:
                                break
            if not found:
                rows = [r for r in global_rows.get(call.name.lower(), []) if r.name == call.name and r.kind != "method"]
                found = rows if len(rows) <= 2 else []
        else:
            rows = [r for r in global_rows.get(call.name.lower(), []) if r.name == call.name]
            found = rows if len(rows) <= 3 else []
        for row in found:
            if row.id not in out and not cview.is_test(row.path):
                out[row.id] = (row, call.line)
    return list(out.values())


@record
class FunctionEvidence:
    """A task's evidence over the definitions (see the module doc)."""

    rows: dict[int, DefRow] = field(default_factory=dict)
    defs: dict[int, DefEvidence] = field(default_factory=dict)
    graph: RecordedGraph = field(default_factory=RecordedGraph)

    def add(self, row: DefRow, feature: str, value: float, reason: str, line: int | None = None) -> None:
        """Record ``value`` (at unit weight) of ``feature`` for ``row``; nothing for a value <= 0."""
        if value <= 0:
            return
        found = self.defs.get(row.id)
        if found is None:
            self.rows[row.id] = row
            found = self.defs[row.id] = DefEvidence()
        found.reasons.append((feature, value, reason, line or 0))

    def to_json(self) -> dict:
        return {"schema": FN_EVIDENCE_SCHEMA, "rows": [_row_json(self.rows[i]) for i in self.defs],
                "defs": {str(i): [list(r) for r in d.reasons] for i, d in self.defs.items()},
                "graph": self.graph.to_json()}

    @classmethod
    def from_json(cls, data: dict) -> "FunctionEvidence":
        if not isinstance(data, dict) or data.get("schema") != FN_EVIDENCE_SCHEMA:
            raise InvalidInput(f"function evidence is a JSON object with \"schema\": {FN_EVIDENCE_SCHEMA}")
        try:
            rows = {row.id: row for row in map(_row_from, data.get("rows", []))}
            defs = {int(i): DefEvidence([(str(f), float(v), str(t), int(line)) for f, v, t, line in reasons
                                         if f not in RETIRED])
                    for i, reasons in data.get("defs", {}).items()}
            if set(defs) - set(rows):
                raise ValueError("evidence for a definition the record does not hold")
        except (TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"function evidence of the wrong shape: {exc}") from None
        return cls(rows, defs, RecordedGraph.from_json(data.get("graph", {})))
