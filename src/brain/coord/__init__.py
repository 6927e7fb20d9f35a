"""Coordination between sessions: sessions, claims, signals, checkpoints, audit, ask/reply.

``Coordinator`` is the API (``brain.coord`` on an opened Brain); pure rules are in
``overlap`` (glob-aware claim overlap) and ``rules`` (liveness, lease expiry,
timeouts). Storage is a ``brain.backends`` backend: SQLite or PostgreSQL.
"""

from .model import Ask, AskResult, Checkpoint, ClaimInfo, Grant, Overlap, OverlapReport, SessionInfo, Signal
from .rules import CoordConfig
from .service import Coordinator

__all__ = ["Coordinator", "CoordConfig", "Ask", "AskResult", "Checkpoint", "ClaimInfo", "Grant", "Overlap",
           "OverlapReport", "SessionInfo", "Signal"]
