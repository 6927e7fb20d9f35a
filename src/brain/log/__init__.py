"""Conversation log, handoff summaries and usage figures (DESIGN §3.8, §3.10).

The log (`<thread>/log.jsonl` in the shared store's `conversations/<checkout id>/`, or in
runtime/conversations/ outside git: ``shared``) is for humans only; agents get the distilled
handoff (`handoffs/local/<thread>.md`) and nothing else of it.
"""

from __future__ import annotations

from .fold import HandoffState, Limits, fold, render
from .handoff import PROMOTED_MARK, Conversations, Recorded, handoff_path, mark_promoted, promoted_path
from .store import ConversationLog, Page, ThreadInfo
from .summarizer import AsyncSummarizer, HeuristicSummarizer, LLMSummarizer, Summarizer
from .turns import Turn, thread_between

__all__ = ["Conversations", "ConversationLog", "Recorded", "Page", "ThreadInfo", "Turn", "HandoffState", "Limits",
           "fold", "render", "handoff_path", "promoted_path", "mark_promoted", "PROMOTED_MARK", "thread_between",
           "Summarizer", "AsyncSummarizer", "HeuristicSummarizer", "LLMSummarizer", "open_conversations"]


def open_conversations(brain) -> Conversations:
    """Wire the conversations of ``brain`` from its settings, in the folder ``shared.conversations_root`` readies."""
    from .shared import conversations_root

    settings = brain.settings
    day = 86400
    log = ConversationLog(conversations_root(brain), rotate_bytes=settings["log.rotate_bytes"],
                          rotate_seconds=settings["log.rotate_days"] * day,
                          retention_seconds=settings["log.retention_days"] * day,
                          redactor=getattr(brain, "redactor", None))
    limits = Limits(max_bytes=max(settings["handoff.max_bytes"], 1024))
    return Conversations(log, brain.memory, limits=limits)
