"""The task module's card, then what each module it depends on exposes.

The task's module comes from ``request.module`` (given by the caller, or inferred
upstream from the task text). Its full card is one Part; each internal dependency,
most imported first, is a separate Part carrying only Exposes, How to use and Contract,
so the packer keeps what fits and names the rest. A dependency's Exposes keeps only the
blocks of the Python modules the task module imports from it (the others are named). A
card whose code changed since it was built says so in its title.

In a task boot whose module was inferred, the cards are cut to what the ranking touches:
for each card owning one of the top-ranked files (or a file whose functions the boot
shows), the Exposes entries of those files, its How to use and its Contract; each whole
card is named in the manifest (listed only), one `brain read` away.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "MAX_DEPENDENCIES", "TOUCHED_FILES"]

MAX_DEPENDENCIES = 12
TOUCHED_FILES = 5  # a task boot's cards keep the entries of this many top-ranked files (and the shown functions' files)


def _stale_note(card) -> str:
    if card.stale:
        return f" — STALE: the code changed since this card was built (`brain map --module {card.module}`)"
    return ""


def _nothing_to_integrate(card) -> bool:
    """A dependency that exposes nothing by its language's rule (a Rust crate-private module such as tokio's
    `util`), with no How to use and no contract, would spend the boot's budget on one empty line."""
    exposes = (card.section("Exposes") or "").strip()
    return (not exposes or exposes.startswith("_Nothing public found")) and not card.human and not card.section("Contract")


def _unknown_module(given: str, mapper) -> Part:
    """A module name no module of the repository has (a typo, a guess): the boot goes on without a card, like
    with a profile that does not parse, and names it in the manifest with a command that works (`brain map
    --module` of a name that is not a module fails)."""
    close = mapper.close_names(given)
    detail = ("did you mean " + ", ".join(f"`{c}`" for c in close) + "?") if close else \
        f"{len(mapper.modules())} module(s) in this repository"
    return Part("cards", f"module {given}", f"Module card: `{given}`",
                f"No module `{given}` ({detail}).",
                "brain map --list", listed_only=True, why="unknown_module", detail=detail)


def collect(brain, request) -> list[Part]:
    if not request.module:
        return []
    from ...cards import _mapper, _normalize_module, card_body, integration_text, load_card
    from ...errors import BrainError

    mapper = _mapper(brain)  # one scan of the tree for the module and all its dependencies
    name = request.module
    cutting = bool(getattr(request, "module_inferred", False) and request.task)  # (the cut checks its own cards' staleness)
    try:
        card = load_card(brain, request.module, mapper=mapper, check_stale=not cutting)
        if card is None and (brain.repo / request.module.strip("/")).exists():
            # a file or folder path was given: use the module it belongs to
            owner = mapper.owner(request.module.strip("/").rstrip("/") + ("/x" if (brain.repo / request.module.strip("/")).is_dir() else ""))
            if owner is not None:
                name = owner
                card = load_card(brain, owner, mapper=mapper, check_stale=not cutting)
        if card is None and not request.module_inferred and not mapper.has_module(_normalize_module(name)):
            return [_unknown_module(request.module, mapper)]
    except BrainError as exc:
        return [Part("cards", f"module {request.module}", f"Module card: `{request.module}`",
                     f"No card: {exc.message}", "brain map --list")]
    if card is None:
        return [Part("cards", f"module {name}", f"Module card: `{name}`",
                     f"No card for `{name}` yet: run `brain map --module {name}` "
                     "(or `brain map` for every module).", f"brain map --module {name}")]
    inferred = " (inferred from the task)" if getattr(request, "module_inferred", False) else ""
    if cutting:
        cut = _cut_to_ranking(brain, request, mapper)
        if cut:
            mapper.save_caches()
            return cut
        card = load_card(brain, name, mapper=mapper)  # the whole card after all: with its staleness
    parts = [Part("cards", f".brain/{card.path}", f"Module card: `{card.module}`{inferred}{_stale_note(card)}", card_body(card),
                  f"brain read {card.path}", files=tuple(card.files))]
    for dep in card.dependencies[:MAX_DEPENDENCIES]:
        try:
            dep_card = load_card(brain, dep, mapper=mapper)
        except BrainError:
            continue
        if dep_card is None or _nothing_to_integrate(dep_card):
            continue
        parts.append(Part("cards", f".brain/{dep_card.path}#integration",
                          f"Dependency `{dep_card.module}`: exposes, how to use, contract{_stale_note(dep_card)}",
                          integration_text(dep_card, card.uses.get(dep)), f"brain read {dep_card.path}",
                          files=tuple(dep_card.files)))
    mapper.save_caches()
    return parts


def _cut_to_ranking(brain, request, mapper) -> list[Part]:
    from ...cards import _exposes_for, _demote, load_card
    from ...errors import BrainError
    from ..call import current_memo
    from .code import code_view_for, ranked_for

    localization, hits = ranked_for(brain, request)
    if localization is None or not localization.files:
        return []
    memo = current_memo() or {}
    touched = [h.path for h in localization.files[:TOUCHED_FILES]]
    touched += [key.split("::", 1)[0] for key in memo.get("code_shown", {})]
    by_card: dict[str, list[str]] = {}
    for path in dict.fromkeys(touched):
        owner = mapper.owner(path)
        if owner is not None:
            by_card.setdefault(owner, []).append(path)
    if not by_card:
        return []
    try:
        view_files = code_view_for(brain).files
    except Exception:  # noqa: BLE001 - the dotted names only sharpen the cut
        view_files = {}
    parts: list[Part] = []
    for module, paths in by_card.items():
        try:
            card = load_card(brain, module, mapper=mapper)
        except BrainError:
            continue
        if card is None:
            continue
        names = []
        for path in paths:
            dotted = view_files.get(path, ("", False))[0]
            rel = path[len(module) + 1:] if module not in (".", "") and path.startswith(module + "/") else path
            # a folder-grouped block (a Go package) is headed by the folder: `./` or `sub/`
            folder = rel.rpartition("/")[0] or "."
            names += [n for n in (dotted, path, rel, rel.rsplit(".", 1)[0], folder + "/") if n]
        kept, others = _exposes_for(card.section("Exposes"), names)
        body = []
        if kept:
            body.append("### Exposes (the ranked files' entries)\n\n" + "\n".join(_demote(x) for x in kept.splitlines()))
        if others:
            body.append("Also in this card: " + ", ".join(f"`{o}`" for o in others[:20]) + (" …" if len(others) > 20 else ""))
        if card.human:
            body.append("### How to use\n\n" + card.human.strip("\n"))
        if card.section("Contract"):
            body.append("### Contract\n\n" + card.section("Contract"))
        if body:
            inferred = " (inferred from the task)" if card.module == request.module else ""
            parts.append(Part("cards", f".brain/{card.path}#ranked", f"Module card: `{card.module}`{inferred}, cut to the "
                              f"ranked files' entries{_stale_note(card)}", "\n\n".join(body) + "\n", f"brain read {card.path}", files=tuple(paths)))
        parts.append(Part("cards", f".brain/{card.path}", f"Module card `{card.module}`", card_body_of(card),
                          f"brain read {card.path}", listed_only=True, why="whole_card"))
    return parts


def card_body_of(card) -> str:
    from ...cards import card_body

    return card_body(card)
