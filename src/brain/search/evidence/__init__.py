"""The kinds of evidence the file ranking reads, each measured at unit weight into an ``Evidence``.

``gather_direct`` records what the text points at (paths, frames, names, full text,
quotes, the working state); ``collect_links`` reads, for the files that may be among the
best, what the neighbour-lending passes of ``ranking.combine`` need.
"""

from __future__ import annotations

from .gather import Context, gather_direct
from .links import collect_links

__all__ = ["Context", "gather_direct", "collect_links"]
