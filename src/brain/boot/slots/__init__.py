"""Boot slots, in their fixed order.

A slot is a name plus a function from (brain, request) to a list of Parts. The boot
asks every slot in DEFAULT_SLOTS order, then packs the parts under the budget. A
new store joins the boot by adding one slot module and one entry in the list, at
the place DESIGN §3.1 gives it: now, checkpoint, live state, handoff, the task's
module card and its dependencies, decisions, search hits, agent profiles. A task boot
also has the ranked files and the code of the ranked functions, before the cards.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a cold CLI start
if TYPE_CHECKING:
    from ...workspace import Brain
    from ..parts import BootRequest, Part

__all__ = ["Slot", "DEFAULT_SLOTS", "slot_names"]

Collect = Callable[["Brain", "BootRequest"], "list[Part]"]


class Slot(namedtuple("Slot", "name collect")):
    """A slot of the boot: its name and its ``collect(brain, request) -> list[Part]`` (a Collect).
    A named tuple, not a dataclass: the cold boot imports no dataclasses (decision 0038)."""

    __slots__ = ()


def _default_slots() -> list[Slot]:
    from . import cards, checkpoint, code, decisions, focus, handoff, livestate, now, profiles, search, task_files, workflows

    return [
        Slot("now", now.collect),
        Slot("checkpoint", checkpoint.collect),
        Slot("livestate", livestate.collect),
        # ranked files for the task, early so they lead BootResult.files (search issue)
        Slot("task_files", task_files.collect),
        Slot("handoff", handoff.collect),
        Slot("focus", focus.collect),
        # the ranked functions and their source, before cards, decisions and search hits (issue 15)
        Slot("code", code.collect),
        Slot("cards", cards.collect),
        Slot("decisions", decisions.collect),
        Slot("search", search.collect),
        Slot("workflows", workflows.collect),
        Slot("profiles", profiles.collect),
    ]


DEFAULT_SLOTS: list[Slot] = _default_slots()


def slot_names() -> list[str]:
    return [slot.name for slot in DEFAULT_SLOTS]
