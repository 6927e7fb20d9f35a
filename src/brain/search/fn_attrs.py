"""Shared attributes: methods of one class that read or write the same attribute (the function ranking's link
through data, beside the call graph's link through calls).

Why: a report names the method it calls (`QuerySet.values`), which sets an attribute (`clone._fields = ...`);
the fix is often in the method of the same class that reads it back: no call joins the two, the attribute
does. Each top-ranked method lends a little to the other methods of its class that use one of its
attributes, more for an attribute few of them use (an attribute every method touches links nothing), and
never lifts one past the method it shares with.

What a method reads and writes comes from the function index: `self.x` read is stored as a call through
`self` (a property is a call too), an attribute written (`self.x = ...`, `clone.x = ...`, `self.a.x = ...`)
as a call of kind ``set``; a name that is a definition of the class is a method or property, not data, and
is left to the call graph.

The graph records, per pair, each shared attribute as ``name:users:flags`` (``users`` how many methods of the
class use it; ``flags`` four 0/1: the top-ranked method writes, reads, the other method writes, reads), so
the link's form is the combination's choice (``attr_*`` weights), not the gathering's.
"""

from __future__ import annotations

from collections import defaultdict

from .functions import DefRow, FunctionView

__all__ = ["find_attr_sharers", "lift_attr_sharers", "attr_link"]


def find_attr_sharers(fview: FunctionView, graph, method: DefRow, F: dict) -> list[tuple[DefRow, str]]:
    """The other methods of ``method``'s class sharing one of its attributes, each with the shared attributes
    (``name:users:flags;...``, rarest first); none when ``method`` uses no attribute of its own or the class
    has more than ``attr_members`` methods."""
    if method.kind != "method" or not method.parent:
        return []
    rows = graph.in_file(method.path)
    members = [r for r in rows if r.parent == method.parent and r.kind == "method"]
    if len(members) < 2 or len(members) > F["attr_members"]:
        return []
    own = {r.name for r in rows if r.parent == method.parent}  # methods, properties, nested classes
    calls = fview.calls_of(r.id for r in members)
    reads: dict[int, set[str]] = {}
    writes: dict[int, set[str]] = {}
    for r in members:
        got = calls.get(r.id, ())
        reads[r.id] = {c.name for c in got if c.via == "self" and c.name not in own}
        writes[r.id] = {c.name for c in got if c.via == "set" and c.name not in own}
    mine = reads[method.id] | writes[method.id]
    if not mine:
        return []
    users: dict[str, int] = defaultdict(int)
    for r in members:
        for name in reads[r.id] | writes[r.id]:
            users[name] += 1
    out = []
    for row in members:
        if row.id == method.id:
            continue
        shared = sorted(mine & (reads[row.id] | writes[row.id]), key=lambda name: (users[name], name))
        if shared:
            out.append((row, ";".join(
                f"{name}:{users[name]}:{int(name in writes[method.id])}{int(name in reads[method.id])}"
                f"{int(name in writes[row.id])}{int(name in reads[row.id])}" for name in shared)))
    return out


def attr_link(shared: str, F: dict) -> tuple[float, str]:
    """The link one recorded pair gives (at most 1) and the attribute that gives most of it: each shared
    attribute adds (1 / (users - 1)) ** ``attr_power``; with ``attr_data`` only an attribute one of the two
    writes links them (two methods that only read the same attribute share an input, not a result)."""
    total, best, best_value = 0.0, "", 0.0
    for item in shared.split(";"):
        name, users, flags = item.rsplit(":", 2)
        if F["attr_data"] and flags[0] != "1" and flags[2] != "1":
            continue
        value = (1.0 / max(int(users) - 1, 1)) ** F["attr_power"]
        total += value
        if value > best_value:
            best, best_value = name, value
    return min(total, 1.0), best


def lift_attr_sharers(graph, s, leaders: list[int], F: dict) -> None:
    """Lift the methods sharing an attribute with a top-ranked method (``leaders``; with ``attr_named`` only one
    the text names, or a frame points to) by ``attr`` times its score and the link, never past ``attr_cap``
    of that score."""
    if F["attr"] <= 0:
        return
    before = {def_id: s.score[def_id] for def_id in leaders}
    for def_id in leaders:
        method = s.rows[def_id]
        if method.kind != "method":
            continue
        if F["attr_named"] and s.evidence.get(def_id, 0.0) <= 0:
            continue  # (asked first, the graph would record every leader's answer: what a sweep of attr_named needs)
        for row, shared in graph.attr_sharers(method):
            link, name = attr_link(shared, F)
            if link <= 0:
                continue
            lift = min(F["attr"] * link * before[def_id], F["attr_cap"] * before[def_id] - s.score.get(row.id, 0.0))
            s.add(row, lift, f"shares `.{name}` with `{method.qual}`", feature="attr")
