"""The task module's card, then what each module it depends on exposes.

The task's module comes from ``request.module`` (given by the caller, or inferred
upstream from the task text). Its full card is one Part; each internal dependency,
most imported first, is a separate Part carrying only Exposes, How to use and Contract,
so the packer keeps what fits and names the rest. A dependency's Exposes keeps only the
blocks of the Python modules the task module imports from it (the others are named). A
card whose code changed since it was built says so in its title.
"""

from __future__ import annotations

from ..parts import Part

__all__ = ["collect", "MAX_DEPENDENCIES"]

MAX_DEPENDENCIES = 12


def _stale_note(card) -> str:
    if card.stale:
        return f" — STALE: the code changed since this card was built (`brain map --module {card.module}`)"
    return ""


def _nothing_to_integrate(card) -> bool:
    """A dependency that exposes nothing by its language's rule (a Rust crate-private module such as tokio's
    `util`), with no How to use and no contract, would spend the boot's budget on one empty line."""
    exposes = (card.section("Exposes") or "").strip()
    return (not exposes or exposes.startswith("_Nothing public found")) and not card.human and not card.section("Contract")


def collect(brain, request) -> list[Part]:
    if not request.module:
        return []
    from ...cards import _mapper, card_body, integration_text, load_card
    from ...errors import BrainError

    mapper = _mapper(brain)  # one scan of the tree for the module and all its dependencies
    try:
        card = load_card(brain, request.module, mapper=mapper)
        if card is None and (brain.repo / request.module.strip("/")).exists():
            # a file or folder path was given: use the module it belongs to
            owner = mapper.owner(request.module.strip("/").rstrip("/") + ("/x" if (brain.repo / request.module.strip("/")).is_dir() else ""))
            if owner is not None:
                card = load_card(brain, owner, mapper=mapper)
    except BrainError as exc:
        return [Part("cards", f"module {request.module}", f"Module card: `{request.module}`",
                     f"No card: {exc.message}", "brain map --list")]
    if card is None:
        return [Part("cards", f"module {request.module}", f"Module card: `{request.module}`",
                     f"No card for `{request.module}` yet: run `brain map --module {request.module}` "
                     "(or `brain map` for every module).", f"brain map --module {request.module}")]
    inferred = " (inferred from the task)" if getattr(request, "module_inferred", False) else ""
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
