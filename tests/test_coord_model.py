"""Stateful property test: claims against a plain model under random claim / renew / release /
clock moves (SQLite, fake clock). Holds: renew never revives, fences never repeat, the held set
and every grant's overlaps match the model."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from brain.backends.sqlite import SqliteBackend
from brain.backends.testing import FakeClock
from brain.coord import Coordinator
from brain.coord.overlap import items_overlap
from brain.errors import ClaimLost

ITEMS = st.sampled_from(["src", "src/a.py", "src/*.py", "src/b/c.py", "docs", "docs/**/*.md", "name:deploy"])


class ClaimsMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.backend = SqliteBackend(Path(self.tmp.name) / "brain.db")
        self.clock = FakeClock()
        self.c = Coordinator(self.backend, brain_name="p", machine="m", clock=self.clock)
        self.sessions = [self.c.start_session(f"r{i}").id for i in range(3)]
        self.model: dict[int, dict] = {}  # claim -> {session, item, expires, state}
        self.fences: set[int] = set()

    def teardown(self):
        if hasattr(self, "backend"):
            self.backend.close()
            self.tmp.cleanup()

    def _live(self):
        now = self.clock()
        return {k: v for k, v in self.model.items() if v["state"] == "held" and v["expires"] > now}

    def _beat(self):
        for s in self.sessions:
            self.c.heartbeat(s)

    @rule(who=st.integers(0, 2), item=ITEMS, ttl=st.integers(1, 100))
    def claim(self, who, item, ttl):
        session = self.sessions[who]
        expected = sorted(k for k, v in self._live().items() if v["session"] != session and items_overlap(v["item"], item))
        g = self.c.claim(session, item, ttl=ttl)
        assert sorted(o.claim for o in g.overlaps) == expected
        assert g.fence not in self.fences
        self.fences.add(g.fence)
        self.model[g.claim] = {"session": session, "item": g.item, "expires": self.clock() + ttl, "state": "held"}

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), ttl=st.integers(1, 100))
    def renew(self, data, ttl):
        cid = data.draw(st.sampled_from(sorted(self.model)))
        entry = self.model[cid]
        if cid in self._live():
            g = self.c.renew(entry["session"], cid, ttl=ttl)
            entry["expires"] = self.clock() + ttl
            assert g.expires == entry["expires"]
        else:
            try:
                self.c.renew(entry["session"], cid, ttl=ttl)
            except ClaimLost:
                pass
            else:
                raise AssertionError("a lost claim was revived")

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def release(self, data):
        cid = data.draw(st.sampled_from(sorted(self.model)))
        entry = self.model[cid]
        released = self.c.release(entry["session"], cid)
        assert released == ([cid] if cid in self._live() else [])
        if cid in self._live():
            entry["state"] = "released"

    @rule(seconds=st.integers(1, 60))
    def tick(self, seconds):
        self.clock.advance(seconds)
        self._beat()

    @invariant()
    def held_set_matches(self):
        if hasattr(self, "c"):
            assert {c.claim for c in self.c.claims()} == set(self._live())


ClaimsMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=25, deadline=None)
test_claims_match_the_model = ClaimsMachine.TestCase
