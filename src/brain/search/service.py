"""The library calls behind `Brain.search`, `Brain.related` and `Brain.locate`.

Input checks live here (one place for CLI, MCP and boot); the index is created on
first need and refreshed incrementally, and a brain with search disabled answers
with nothing rather than an error.
"""

from __future__ import annotations

import functools

from ..errors import DamagedStore, InvalidInput
from .index import MEMORY_KINDS, is_corruption
from .locate import Localization, locate as rank_files

__all__ = ["search", "related", "locate", "infer_module", "ensure_index", "changed_files", "boot_code_view", "SEARCH_KINDS", "MAX_LIMIT"]

SEARCH_KINDS = (*MEMORY_KINDS, "code")
MAX_LIMIT = 100
MAX_QUERY_CHARS = 2000


def _check_limit(limit) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, not {limit!r}", field="limit")
    return limit


def _self_healing(fn):
    """Run ``fn(brain, ...)``; when the derived index turns out damaged, delete it, rebuild, and retry once.

    The index holds nothing canonical (runtime/index.db is rebuilt from the files), so a
    truncated or overwritten file costs one rebuild, never a traceback in search or boot."""

    @functools.wraps(fn)
    def wrapper(brain, *args, **kwargs):
        seen = brain.index.generation
        brain.index.reopen_if_replaced()
        try:
            return fn(brain, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - only corruption is handled; anything else is re-raised
            if not is_corruption(exc):
                raise
            import logging  # lazy: most runs never log

            logging.getLogger("brain").warning("the search index %s is damaged (%s): rebuilding it",
                                               brain.index.path, exc)
            brain.index.reopen_if_replaced()
            try:
                brain.index.heal(seen)  # the first thread rebuilds; the others wait for it, then reopen
            except Exception as again:  # noqa: BLE001
                if not is_corruption(again):
                    raise
            _forget_located()
        brain.index.reopen_if_replaced()
        try:
            return fn(brain, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            if not is_corruption(exc):
                raise
            raise DamagedStore(str(brain.index.path), "search index", f"{exc}; rebuilding did not help",
                               "run `brain index --rebuild` (it is derived: nothing is lost)") from None

    return wrapper


def _forget_located() -> None:
    """After a heal, the current boot's file rankings read the damaged file: rank again."""
    from ..boot.call import current_call

    call = current_call()
    if call is not None:
        call.located.clear()
        call.memo.pop("code_view", None)
        call.memo.pop("index_fresh", None)


def boot_code_view(index):
    """The current boot's one read-only view of the code tables (``CodeView``), made on first use.

    Building it reads every file row and its lazily built maps (the import graph) are the
    ranking's largest cost: module inference, the files slot and the function ranking of
    one boot share it. Outside a boot (a plain ``Brain.locate``) every call gets its own."""
    from ..boot.call import current_memo

    memo = current_memo()
    if memo is None:
        return index.code_view()
    view = memo.get("code_view")
    if view is None:
        view = memo["code_view"] = index.code_view()
    return view


def ensure_index(brain, *, code: bool = True):
    """The brain's index, built when missing; memory (and code, when asked) brought up to date."""
    from .progress import DelayedProgress

    index = brain.index
    # on stderr when the code index takes more than a second (a first boot before `brain map`, a big pull)
    progress = DelayedProgress("updating the code index (`brain map` builds it ahead)") if code else None
    if not index.exists:
        index.refresh(code=code, progress=progress)
        return index
    index.refresh_memory(quick=True)
    if code:
        index.refresh_code(progress=progress)
    from .graph import update_graph

    update_graph(index, counts=False)  # what the refreshes changed or a killed refresh left pending; else nothing
    return index


@_self_healing
def search(brain, query: str, *, kind: str | None = None, limit: int = 10) -> list[dict]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("the search query is empty", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the search query is longer than {MAX_QUERY_CHARS} characters", field="query")
    if kind is not None and kind not in SEARCH_KINDS:
        raise InvalidInput(f"unknown kind {kind!r}; use one of {', '.join(SEARCH_KINDS)}", field="kind")
    _check_limit(limit)
    if not brain.settings.get("search.enabled"):
        return []
    index = ensure_index(brain, code=kind in (None, "code"))
    return [hit.to_dict() for hit in index.search(query, kind=kind, limit=limit)]


@_self_healing
def related(brain, target: str, *, limit: int = 30) -> dict:
    from ..errors import NotFound
    from .graph import related as graph_related

    if not isinstance(target, str) or not target.strip():
        raise InvalidInput("name a file, module, card, decision or contract", field="target")
    _check_limit(limit)
    index = ensure_index(brain)
    found = graph_related(index.db, target, limit=limit)
    if not found["nodes"]:
        raise NotFound(f"{target!r} in the graph", hint="give a file path, a module folder, a card name or a decision number")
    return found


def changed_files(repo) -> list[str]:
    """Files changed in the working tree (modified, added, untracked), repository-relative.

    One ``git status`` (``gitstamp.git_state``, kept for the boot: the code refresh's no-op check
    reads the same answer); the memory is not code, ``.brain/`` is left out of git's walk."""
    from .gitstamp import git_state

    state = git_state(repo)
    if state is None:
        return []
    return sorted(p for p, status in state.paths.items() if "D" not in status and not p.startswith(".brain/"))


def _claimed(brain, session: str | None) -> list[str]:
    if not session or not brain.has_coordination_store():
        return []
    try:
        return [c.item for c in brain.coord.claims(session=session)]
    except Exception:  # coordination trouble must not cost the boot its files
        return []


@_self_healing
def locate(brain, task: str | None, *, module: str | None = None, session: str | None = None,
           limit: int = 20) -> Localization:
    if task is not None and not isinstance(task, str):
        raise InvalidInput("task must be text", field="task")
    _check_limit(limit)
    if not brain.settings.get("search.enabled"):
        return Localization([], [])
    if not (task and task.strip()) and not module:
        return Localization([], [])  # a boot without a task stays cheap: no git, no index
    key = (task, module, session, limit)
    from ..boot.call import current_call

    call = current_call()  # a boot's own memo: one boot asks twice (module inference, then the files slot)
    if call is not None and key in call.located:
        return call.located[key]
    changed = changed_files(brain.repo)
    claimed = _claimed(brain, session)
    index = brain.index
    fresh = call is not None and call.memo.get("index_fresh")  # one refresh per boot, before its view
    if not fresh and (not index.exists or brain.settings.get("search.refresh_on_boot")):
        index = ensure_index(brain)
        if call is not None:
            call.memo.pop("code_view", None)  # a view made before the refresh reads the old rows
            call.memo["index_fresh"] = True
    from .answers import remembered

    # a repeated boot with the same task, tree and claims ranks once while the index is unchanged
    found = remembered(index, ("locate", task, module, tuple(changed), tuple(claimed), limit),
                       lambda: rank_files(boot_code_view(index), task, changed=changed, claimed=claimed,
                                          module=module, limit=limit))
    if call is not None:
        call.located[key] = found
    return found


def infer_module(brain, task: str, *, session: str | None = None) -> str | None:
    """The module (as the cards name it) of the best-ranked file, when the text gives real evidence for it.

    Only when cards exist (a card is what the module buys the boot), and only on
    evidence beyond plain full-text similarity: a path, a traceback frame, a symbol
    the file defines, a module or file name.
    """
    if not any((brain.dir / "modules").glob("*.md")):
        return None
    found = locate(brain, task, session=session, limit=brain.settings.get("search.boot_files") or 40)
    if not found.files:
        return None
    top = found.files[0]
    from .locate import is_text_evidence

    if not any(is_text_evidence(r) for r in top.reasons):
        return None
    from ..cards import module_of_path

    return module_of_path(brain, top.path)
