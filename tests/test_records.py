"""``brain.records.record`` behaves as the ``@dataclass`` it replaced on the task boot's path (decision 0043):
the same constructor, defaults, per-instance factories, repr, equality, hashing and frozen refusal."""

from __future__ import annotations

import dataclasses

import pytest

from brain.errors import FrozenRecord
from brain.records import field, record, record_fields


def _pair(frozen: bool):
    """The same class made by dataclasses and by record."""
    def body():
        class Hit:
            path: str
            score: float = 0.0
            reasons: list = dataclasses.field(default_factory=list) if made_by == "dc" else field(default_factory=list)
            note: str | None = None

            def top(self) -> str:
                return self.path
        return Hit

    made_by = "dc"  # read by body() when it runs
    dc = dataclasses.dataclass(frozen=frozen)(body())
    made_by = "rec"
    rec = record(frozen=frozen)(body())
    return dc, rec


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_constructs_compares_and_prints_as_the_dataclass(frozen):
    dc, rec = _pair(frozen)
    for args, kwargs in [(("a",), {}), (("a", 2.5), {}), (("a",), {"note": "n", "reasons": ["x"]}),
                         ((), {"path": "b", "score": 1.0})]:
        d, r = dc(*args, **kwargs), rec(*args, **kwargs)
        assert repr(d) == repr(r) and vars(d) == vars(r) and r.top() == d.top()
        assert (r == rec(*args, **kwargs)) == (d == dc(*args, **kwargs)) is True
        assert (r == rec("other")) == (d == dc("other")) is False
        assert r.__eq__(d) is NotImplemented  # another class is never equal, as for dataclasses
    assert rec("a").reasons is not rec("a").reasons  # a fresh list per instance
    assert record_fields(rec) == tuple(f.name for f in dataclasses.fields(dc))
    assert "reasons" not in rec.__dict__  # the factory is not left as a class attribute
    for bad in [(), ("a", 1.0, [], None, "extra")]:
        with pytest.raises(TypeError):
            dc(*bad)
        with pytest.raises(TypeError):
            rec(*bad)


def test_hashing_and_assignment_follow_frozen():
    dc, rec = _pair(False)
    with pytest.raises(TypeError):
        hash(dc("a"))
    with pytest.raises(TypeError):
        hash(rec("a"))
    r = rec("a")
    r.score = 3.0
    assert r.score == 3.0

    dc, rec = _pair(True)
    assert hash(rec("a", 1.0, ())) == hash(dc("a", 1.0, ())) == hash(("a", 1.0, (), None))
    r = rec("a")
    with pytest.raises(FrozenRecord):
        r.score = 3.0
    with pytest.raises(AttributeError):  # where code caught dataclasses.FrozenInstanceError's base
        del r.path
    with pytest.raises(dataclasses.FrozenInstanceError):
        dc("a").extra = 1
    with pytest.raises(FrozenRecord):  # not a field, refused as the frozen dataclass refuses it
        r.extra = 1
