"""Every ask/reply pair between two agents is recorded in their conversation log (issue 6, item 1)."""

from __future__ import annotations

import threading


def test_ask_and_reply_land_in_the_pair_thread_and_its_handoff(brain):
    coord = brain.coord
    a = coord.start_session("build").id
    b = coord.start_session("review").id
    result: dict = {}
    asked = threading.Event()

    def asker():
        ticket = coord.arm(a, b, "Is the parser API frozen for release 2?")
        asked.set()
        result["outcome"] = coord.wait(ticket.ticket, turn_timeout=30)

    thread = threading.Thread(target=asker)
    thread.start()
    assert asked.wait(30)
    inbox = coord.inbox(b)
    coord.reply(b, inbox[0]["ticket"], "Yes, frozen; only bug fixes now.")
    thread.join(30)
    assert result["outcome"].outcome == "reply"

    thread_id = brain.thread_between(a, b)
    turns = brain.conversations.page(thread_id, 1).turns
    assert [(t.kind, t.speaker) for t in turns] == [("ask", a), ("reply", b)]
    assert turns[1].ref == turns[0].ref == inbox[0]["ticket"]
    handoff = brain.read(f"handoffs/local/{thread_id}.md").text
    assert "parser API frozen" in handoff
