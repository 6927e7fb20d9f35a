"""Markdown memory: confined paths, atomic writes, layers and the project scaffold."""

from .files import Document, MemoryStore, content_hash

__all__ = ["Document", "MemoryStore", "content_hash"]
