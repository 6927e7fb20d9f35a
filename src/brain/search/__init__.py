"""Search and graph: the derived index of the memory and the code, and task localization.

Everything here is derived from files (``runtime/index.db``) and can be deleted and
rebuilt; the boot keeps working without it. ``SearchIndex`` owns the database,
``locate`` ranks a task's files, ``graph`` answers "what is related to X".
"""

from __future__ import annotations

from .index import INDEX_FILE, MEMORY_KINDS, SearchHit, SearchIndex, kind_of
from .tokenize import split_identifier, token_text, tokens

__all__ = ["SearchIndex", "SearchHit", "INDEX_FILE", "MEMORY_KINDS", "kind_of", "tokens", "token_text",
           "split_identifier"]
