"""Token store and session binding, through the library (no HTTP)."""

from __future__ import annotations

import pytest

from brain.errors import Forbidden, InvalidInput, NotFound
from brain.team.identity import Principal, bound_session, writer_role, PRINCIPAL


def test_create_verify_revoke_and_names(brain):
    store = brain.tokens
    assert not store.exists() and store.verify("brn_nothing") is None
    token, record = store.create("ci-bot", role="ci", session_prefix="sess-20261130-0900-ci@runner")
    assert store.exists() and store.verify(token).name == "ci-bot" and record.machine == "ci-bot"
    for bad in ("", "../x", "a b", "x" * 65):
        with pytest.raises(InvalidInput):
            store.create(bad)
    with pytest.raises(InvalidInput):
        store.create("other", role="bad role")
    assert store.verify(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.verify("Bearer " + token) is None
    store.revoke("ci-bot")
    assert store.verify(token) is None and store.exists()
    with pytest.raises(NotFound):
        store.revoke("ci-bot")
    again, _ = store.create("ci-bot")  # the name is free again once revoked; the old token stays dead
    assert store.verify(again).name == "ci-bot" and store.verify(token) is None


def test_sessions_are_bound_to_their_token(brain):
    token, _ = brain.tokens.create("alice", role="backend", machine="laptop",
                                   session_prefix="sess-20261130-0900-backend@laptop")
    brain.tokens.create("bob", role="frontend")
    alice, bob = Principal("alice", "backend", "laptop", "sess-20261130-0900-backend@laptop"), Principal("bob", "frontend", "bob")
    mine = bound_session(brain, alice)
    assert mine.endswith("-backend@laptop") and bound_session(brain, alice) == mine
    assert bound_session(brain, alice, mine) == mine
    assert bound_session(brain, alice, "sess-20261130-0900-backend@laptop.2") == "sess-20261130-0900-backend@laptop.2"
    with pytest.raises(Forbidden):
        bound_session(brain, bob, mine)
    theirs = bound_session(brain, bob)
    with pytest.raises(Forbidden) as err:
        bound_session(brain, alice, theirs)
    assert err.value.principal == "alice"
    assert brain.tokens.get("alice").sessions == [mine]
    # a new server process (no cache) resumes the token's live session instead of starting another
    import brain as brainlib

    fresh = brainlib.open_brain(brain.repo)
    assert bound_session(fresh, alice) == mine


def test_writer_role_follows_the_principal(brain):
    assert writer_role(brain) == "agent"  # no role known yet: the default role, never unchecked (None)
    brain.env["BRAIN_ROLE"] = "reviewer"
    assert writer_role(brain) == "reviewer"
    bound = PRINCIPAL.set(Principal("carol", None, "m"))
    try:
        assert writer_role(brain) == "carol"  # a token without a role writes as its name
    finally:
        PRINCIPAL.reset(bound)
