"""The Claude Code hook events brain answers, by both of their names (no imports: the CLI parser reads it).

Claude Code spells an event `SessionStart`; the hooks `brain install claude-code` writes call brain's
spelling, `session-start`. A user wiring a hook by hand copies Claude Code's name, so `brain hook
claude-code EVENT` takes either and answers the same.
"""

from __future__ import annotations

__all__ = ["HOOK_EVENTS", "EVENT_OF", "SUBCOMMAND_OF", "HOOK_NAMES", "subcommand"]

HOOK_EVENTS = {  # Claude Code's event -> (matcher or None, brain's subcommand, timeout seconds)
    "SessionStart": ("startup|resume|clear|compact", "session-start", 30),
    "PreCompact": ("manual|auto", "pre-compact", 30),
    "Stop": (None, "stop", 30),
    "SessionEnd": (None, "session-end", 60),
}
EVENT_OF = {sub: event for event, (_, sub, _) in HOOK_EVENTS.items()}
SUBCOMMAND_OF = {event: sub for event, (_, sub, _) in HOOK_EVENTS.items()}
HOOK_NAMES = (*EVENT_OF, *SUBCOMMAND_OF)  # what `brain hook claude-code` accepts: brain's spelling, then Claude Code's


def subcommand(name: str) -> str:
    """brain's spelling of an event given in either spelling (unknown names are the parser's to refuse)."""
    return SUBCOMMAND_OF.get(name, name)
