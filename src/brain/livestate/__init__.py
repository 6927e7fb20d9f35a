"""Live state: lean, keyed, last-writer-wins coordination facts (intent, progress, last delegation).

Never appended: a write replaces the key's entry and bumps its revision. Busy and
queue are computed from pending asks at read time, never stored.
"""

from .store import LiveEntry, LiveLimits, LiveState, render_lean

__all__ = ["LiveState", "LiveEntry", "LiveLimits", "render_lean"]
