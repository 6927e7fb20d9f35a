"""The shape of each tool's structured content, declared once: every tool's ``outputSchema``.

Why: a client (and the model behind it) can rely on a result's fields only when the tool says
what they are; the MCP SDK client validates every ``structuredContent`` against the declared
``outputSchema``. Each tool names one ``TypedDict`` here (``ToolRegistry.tool(output=...)``); the
registry refuses a tool without one, so a new tool cannot forget it, and ``schema_of`` turns it
into the JSON Schema the server lists. Fields a result may leave out are ``NotRequired``; the
library objects' ``to_dict`` give these shapes (a test calls every tool and validates).

SDK-free (pydantic only), like the tool declarations.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

__all__ = ["schema_of", "Boot", "MemoryFile", "Written", "Notes", "Removed", "Moved", "Workflows", "Decisions",
           "State", "Sessions", "Grant", "Released", "Sent", "Signals", "CheckpointOut", "AskOutcome", "Replied",
           "Inbox", "LiveItems", "LiveEntry", "Hits", "CardReport", "SessionStarted", "SessionEnded"]


class Omitted(TypedDict):
    source: str
    tokens: int
    fetch: str
    reason: str
    detail: NotRequired[str]


class BootSection(TypedDict):
    slot: str
    source: str
    tokens: int


class Boot(TypedDict):
    text: str
    tokens: int
    budget: int
    sections: list[BootSection]
    files: list[str]
    omitted: list[Omitted]
    functions: list[dict[str, Any]]


class MemoryFile(TypedDict):
    path: str
    hash: str
    text: str
    name: NotRequired[str]  # brain_workflows with a name


class Redaction(TypedDict):
    kind: str
    count: int


class Written(TypedDict):
    path: str
    hash: str
    bytes: int
    redacted: list[Redaction]


class Note(TypedDict):
    path: str
    title: str
    bytes: int


class Notes(TypedDict):
    notes: list[Note]


class Removed(TypedDict):
    removed: str
    linked_from: list[str]


class Moved(TypedDict):
    moved: str
    to: str
    hash: str
    linked_from: list[str]


class Workflows(TypedDict, total=False):
    """The list of names, or (with a name) one workflow's file."""

    workflows: list[str]
    name: str
    path: str
    hash: str
    text: str


class Decisions(TypedDict):
    decisions: list[dict[str, Any]]


class Git(TypedDict):
    repository: bool
    branch: NotRequired[str | None]
    head: NotRequired[str | None]
    changed_files: NotRequired[int]
    recent_commits: NotRequired[list[str]]


class Service(TypedDict):
    name: str
    host: str
    port: int
    listening: bool | None
    skipped: NotRequired[str]


class State(TypedDict):
    git: Git
    services: list[Service]


class Session(TypedDict):
    id: str
    role: str
    machine: str
    brain: str
    started: float
    last_seen: float
    liveness: Literal["alive", "stalled", "gone"]
    waiting_on: str | None
    worktree: str | None
    branch: str | None
    you: bool


class Sessions(TypedDict):
    you: str
    sessions: list[Session]


class Overlap(TypedDict):
    session: str
    item: str
    claim: int


class Grant(TypedDict):
    claim: int
    fence: int
    item: str
    session: str
    expires: float
    overlaps: list[Overlap]


class Released(TypedDict):
    released: list[int]


class Sent(TypedDict):
    signals: list[int]
    recipients: list[str]


class SignalItem(TypedDict):
    id: int
    sender: str
    recipient: str
    target: str
    kind: str
    body: str
    created: float


class Signals(TypedDict):
    items: list[SignalItem]


class CheckpointOut(TypedDict, total=False):
    """A checkpoint, or ``{"checkpoint": null}`` when there is none to resume from."""

    checkpoint: None
    session: str
    role: str
    machine: str
    step: str
    claims: list[dict[str, Any]]
    asks: list[dict[str, Any]]
    signal_cursor: int
    note: str
    created: float
    inherited: bool


class AskOutcome(TypedDict):
    outcome: Literal["reply", "stalled", "timeout", "pending"]
    answer: str | None
    ticket: str | None


class Replied(TypedDict):
    ticket: str
    replied: bool


InboxItem = TypedDict("InboxItem", {"ticket": str, "from": str, "question": str})  # "from": a Python keyword


class Inbox(TypedDict):
    items: list[InboxItem]


class LiveEntry(TypedDict):
    key: str
    intent: str
    progress: str
    delegation: str
    status: str
    revision: int
    writer: str | None
    updated: float
    busy: bool
    queue: int


class LiveItems(TypedDict):
    items: list[LiveEntry]


class Hit(TypedDict):
    path: str
    kind: str
    title: NotRequired[str | None]
    snippet: NotRequired[str | None]
    score: NotRequired[float]


class Hits(TypedDict):
    hits: list[Hit]


class CardReport(TypedDict):
    module: str
    card: str
    refreshed: bool
    how_to_use_replaced: bool
    summary: str | None


class SessionStarted(TypedDict):
    session: str
    handle: str
    role: str


class SessionEnded(TypedDict):
    session: str
    released: list[int]


@lru_cache(maxsize=None)
def schema_of(shape: type) -> dict[str, Any]:
    """The JSON Schema (an object) of ``shape``, as the server lists it in ``outputSchema``."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(shape).json_schema()
    if schema.get("type") != "object":
        raise TypeError(f"an output shape must be an object, not {schema.get('type')!r} ({shape!r})")
    return schema
