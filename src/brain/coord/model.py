"""Plain result records of the coordination API (what CLI and MCP print as JSON)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Worktree", "SessionInfo", "Overlap", "Grant", "ClaimInfo", "OverlapReport", "Signal", "Checkpoint", "AskResult",
           "AuditEvent", "Ask"]


class _Dict:
    def to_dict(self) -> dict:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Worktree:
    """The working tree a process runs in: its short name and branch (shown), its path (this machine only:
    a session whose worktree folder is gone is gone)."""

    name: str
    branch: str | None
    path: str


@dataclass
class SessionInfo(_Dict):
    id: str
    role: str
    machine: str
    brain: str
    started: float
    last_seen: float
    liveness: str
    waiting_on: str | None = None
    worktree: str | None = None   # the working tree's short name (brain.checkout.Checkout.name)
    branch: str | None = None     # its branch when the session started

    def to_dict(self) -> dict:  # every field a scalar: asdict's recursion and deep copy are for nothing
        return dict(self.__dict__)


@dataclass
class Overlap(_Dict):
    session: str
    item: str
    claim: int

    def to_dict(self) -> dict:  # asdict's deep copy costs a claim's audit row and answer more than the rest
        return {"session": self.session, "item": self.item, "claim": self.claim}


@dataclass
class Grant(_Dict):
    claim: int
    fence: int
    item: str
    session: str
    expires: float
    overlaps: list[Overlap] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"claim": self.claim, "fence": self.fence, "item": self.item, "session": self.session,
                "expires": self.expires, "overlaps": [o.to_dict() for o in self.overlaps]}


@dataclass
class ClaimInfo(_Dict):
    claim: int
    session: str
    item: str
    fence: int
    granted: float
    expires: float
    state: str  # held | released | expired


@dataclass
class OverlapReport(_Dict):
    a: ClaimInfo
    b: ClaimInfo
    decision: str | None = None
    decided_by: str | None = None


@dataclass
class Signal(_Dict):
    id: int
    sender: str
    recipient: str
    target: str
    kind: str
    body: str
    created: float


@dataclass
class Checkpoint(_Dict):
    session: str
    role: str
    machine: str
    step: str
    claims: list[dict]
    asks: list[dict]
    signal_cursor: int
    note: str
    created: float
    inherited: bool = False  # read by a successor session rather than the session itself


@dataclass
class Ask(_Dict):
    ticket: str | None    # None: nothing armed (no agent of the role asked for connected in time)
    asker: str
    target: str
    question: str
    state: str
    answer: str | None
    created: float
    deadline: float
    resolved: float | None


@dataclass
class AskResult(_Dict):
    outcome: str          # reply | stalled | timeout | pending (a wait turn ended first)
    answer: str | None
    ticket: str | None    # None: nothing armed (no agent of the role asked for connected in time)

    def to_dict(self) -> dict:
        return {"outcome": self.outcome, "answer": self.answer, "ticket": self.ticket}


@dataclass
class AuditEvent(_Dict):
    id: int
    at: float
    session: str | None
    action: str
    subject: str
    detail: dict
