"""Module cards: one markdown file per module, generated mechanically, read at boot.

Public functions (the boot, the search and the MCP surfaces call these):

* ``build_map(brain, module=None, check=False, force=False, progress=None) -> MapReport``
* ``load_card(brain, module, check_stale=True) -> Card | None`` (``load_cards`` for several at once)
* ``module_of_path(brain, path) -> str | None``: the module a file belongs to
* ``list_modules(brain) -> list[Module]``
* ``report_done(brain, module, how_to_use=None, summary=None) -> dict``

See docs/cards.md for the card format and the discovery rules.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from ..errors import Conflict, InvalidInput
from ..records import field, record
from .discovery import Module, card_rel_path
from .markers import PLACEHOLDER, join_card, parse_card
from .mapper import CARD_WRITE_ATTEMPTS, MapReport, Mapper
from ..lazyre import lazy

__all__ = ["Card", "MapReport", "Module", "build_map", "load_card", "load_cards", "module_of_path", "list_modules", "report_done",
           "card_rel_path", "integration_text", "card_body"]

_DEP_LINE = lazy(r"^- `([^`]+)` \((\d+) files?:", re.M)
_USES_LINE = lazy(r"^<!-- brain:uses (.+) ([\w.,]+) -->$", re.M)


@record
class Card:
    module: str
    path: str                     # relative to .brain/
    text: str
    sections: dict[str, str]
    human: str                    # the How to use text ("" when not written yet)
    source_hash: str | None
    stale: bool | None = None     # None: not checked
    files: tuple[str, ...] = ()   # repository-relative source files
    dependencies: list[str] = field(default_factory=list)   # internal modules, most imported first
    intact: bool = True
    uses: dict[str, list[str]] = field(default_factory=dict)  # dependency -> Python modules used from it

    def section(self, name: str) -> str:
        return self.sections.get(name, "")


def _mapper(brain) -> Mapper:
    """A mapper for this run; inside a boot, the boot's one (its layout is loaded once), never shared
    with another boot."""
    from ..boot.call import current_memo

    memo = current_memo()
    if memo is None:
        return Mapper(brain)
    mapper = memo.get("mapper")
    if mapper is None or mapper.brain is not brain:
        mapper = memo["mapper"] = Mapper(brain)
    return mapper


def command_writer(brain, writer: str | None, command: str) -> str:
    """Who a card refresh is committed as (``sync.commit_on_write``): the writer given (an MCP session),
    else ``$BRAIN_SESSION`` or ``$BRAIN_ROLE``, else the command's name."""
    return writer or brain.env.get("BRAIN_SESSION") or brain.env.get("BRAIN_ROLE") or command


def build_map(brain, module: str | None = None, *, check: bool = False, force: bool = False, progress=None,
              writer: str | None = None) -> MapReport:
    """Build or refresh the cards (all, or one module's); with ``check``, only report what is stale.

    A full run also keeps decisions.md in step with the decision records. With ``sync.commit_on_write``
    every card it refreshed or removed goes into one commit naming ``writer`` (``command_writer``)."""
    with brain.commit_batch(writer=command_writer(brain, writer, "brain map"), reason="refresh the module cards",
                            action="refresh"):
        report = _mapper(brain).build(module, check=check, force=force, progress=progress)
        if module is None:
            from ..decisions import index_is_current, write_index

            if not index_is_current(brain):
                if check:
                    report.decisions_index = "stale"
                else:
                    write_index(brain)
                    report.decisions_index = "rewritten"
    return report


def list_modules(brain) -> list[Module]:
    return list(_mapper(brain).modules())


def _normalize_module(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("a module name is required", field="module")
    name = name.strip().strip("/")
    if name.endswith(".md"):
        name = name[:-3]
    if name.startswith("modules/"):
        name = name[len("modules/"):]
    if name in ("", "_root"):
        return "."
    if ".." in name.split("/") or name.startswith("~") or "\\" in name:
        raise InvalidInput(f"module name {name!r} is not a repository folder", field="module")
    return name


def module_of_path(brain, path: str) -> str | None:
    """The module a file or folder belongs to (absolute or repository-relative path), or None."""
    p = Path(path)
    if p.is_absolute():
        try:
            path = p.resolve().relative_to(brain.repo).as_posix()
        except ValueError:
            return None
    path = path.strip().lstrip("./") if path not in (".", "./") else ""
    mapper = _mapper(brain)
    if (brain.repo / path).is_dir():
        path = path.rstrip("/") + "/__probe__"
    owner = mapper.owner(path)
    mapper.save_caches()  # a layout discovered again, or noted with this boot's git answer, is kept for the next boot
    return owner


def load_cards(brain, modules: list[str], *, check_stale: bool = True) -> list[Card | None]:
    """Several cards with one scan of the tree (the boot loads a module and its dependencies)."""
    mapper = _mapper(brain)
    cards = [load_card(brain, m, check_stale=check_stale, mapper=mapper) for m in modules]
    mapper.save_caches()
    return cards


def load_card(brain, module: str, *, check_stale: bool = True, mapper: Mapper | None = None) -> Card | None:
    """The card of ``module`` parsed, with its staleness when ``check_stale``; None when no card exists."""
    name = _normalize_module(module)
    rel = card_rel_path(name)
    doc = brain.memory.read_or_none(rel)
    if doc is None:
        return None
    parsed = parse_card(doc.text)
    deps_text = parsed.sections.get("Dependencies", "")
    deps = [m.group(1) for m in _DEP_LINE.finditer(deps_text)]
    uses = {m.group(1): m.group(2).split(",") for m in _USES_LINE.finditer(deps_text)}
    card = Card(name, rel, doc.text, parsed.sections, parsed.human if parsed.human_written else "", parsed.source_hash,
                None, (), deps, parsed.intact, uses)
    own = mapper is None
    mapper = mapper or _mapper(brain)
    mod = next((m for m in mapper.modules() if m.name == name), None)
    if mod is not None:
        card.files = mod.files
    if check_stale:
        if mod is None or not parsed.intact:
            card.stale = True
        else:
            card.stale = mapper.module_hash(mod) != parsed.source_hash
        if own:
            mapper.save_caches()
    return card


def card_body(card: Card) -> str:
    """The card as the boot shows it: markers and the title dropped, headings one level down."""
    lines = []
    for line in card.text.splitlines():
        if line.startswith("<!-- brain:") or line.startswith("# Module `"):
            continue
        lines.append(_demote(line))
    text = "\n".join(lines).strip("\n") + "\n"
    if not card.human:
        text = text.replace(PLACEHOLDER.rstrip("\n"), "_Not written yet._")
    return text


def _demote(line: str) -> str:
    return "#" + line if line.startswith("## ") or line.startswith("### ") else line


_BLOCK_HEAD = lazy(r"^### `([^`]+)`")
_LINE_BLOCK = lazy(r"^- `([^`]+)`(?: \(\d+ modules alike\))?: ")


def _exposes_for(exposes: str, used: list[str]) -> tuple[str, list[str]]:
    """(blocks of the Exposes section about the used Python modules, dotted names of the other blocks)."""
    blocks: list[tuple[str | None, list[str]]] = []
    for line in exposes.splitlines():
        head = _BLOCK_HEAD.match(line) or _LINE_BLOCK.match(line)
        if head:
            blocks.append((head.group(1), [line]))
        elif line.startswith("_") or not blocks:
            blocks.append((None, [line]))
        else:
            blocks[-1][1].append(line)
    wanted = set(used)
    kept, others = [], []
    for dotted, lines in blocks:
        if dotted is None:
            continue
        if dotted in wanted:
            kept.append("\n".join(lines).strip("\n"))
        else:
            others.append(dotted)
    return "\n\n".join(kept), others


def integration_text(card: Card, used: list[str] | None = None) -> str:
    """What a dependent module needs to integrate: Exposes, How to use, Contract.

    With ``used`` (the Python modules the dependent imports from this one), Exposes keeps
    only their blocks and names the others, so more dependencies fit in a boot."""
    parts = []
    exposes = card.section("Exposes")
    if exposes:
        if used:
            kept, others = _exposes_for(exposes, used)
            if kept:
                body = "\n".join(_demote(x) for x in kept.splitlines())
                if others:
                    body += "\n\nAlso exposes (not used here): " + ", ".join(f"`{o}`" for o in others[:30]) + \
                        (" …" if len(others) > 30 else "")
                parts.append("### Exposes (the parts used)\n\n" + body)
            else:
                parts.append("### Exposes\n\n" + "\n".join(_demote(x) for x in exposes.splitlines()))
        else:
            parts.append("### Exposes\n\n" + "\n".join(_demote(x) for x in exposes.splitlines()))
    if card.human:
        parts.append("### How to use\n\n" + card.human.strip("\n"))
    if card.section("Contract"):
        parts.append("### Contract\n\n" + card.section("Contract"))
    return "\n\n".join(parts) + "\n"


def report_done(brain, module: str, *, how_to_use: str | None = None, summary: str | None = None,
                writer: str | None = None, role: str | None = None) -> dict:
    """Refresh ``module``'s card now (so it lands in the same commit as the code) and, when
    ``how_to_use`` is given, replace only its How to use section. ``summary`` is appended to
    runtime/reports.jsonl for the audit and returned. With ``sync.commit_on_write`` the refresh and the
    new section are one commit naming ``writer`` (``command_writer``). ``role`` (the caller's) must be
    allowed to write the card when a territory covers it: checked before anything, the card included,
    is written."""
    with brain.commit_batch(writer=command_writer(brain, writer, "report-done"),
                            reason=f"report done: {summary}" if isinstance(summary, str) and summary.strip()
                            else "report done", action="refresh"):
        return _report_done(brain, module, how_to_use=how_to_use, summary=summary, role=role)


def _report_done(brain, module: str, *, how_to_use: str | None, summary: str | None, role: str | None) -> dict:
    name = _normalize_module(module)
    if how_to_use is not None and not isinstance(how_to_use, str):
        raise InvalidInput("how_to_use must be text", field="how_to_use")
    if summary is not None and not isinstance(summary, str):
        raise InvalidInput("summary must be text", field="summary")
    if how_to_use is not None and not how_to_use.strip():
        raise InvalidInput("the How to use text is empty", field="how_to_use",
                           hint="pass the text of the section, or leave it out to keep the current one")
    mapper = _mapper(brain)
    mapper.module(name)  # raises NotFound before anything is written
    rel = card_rel_path(name)
    brain.check_territory(rel, role=role)  # a no-op without territories (or for brain's own runs: role None)
    report = mapper.build(name)
    replaced = False
    if how_to_use is not None:
        text = how_to_use if how_to_use.endswith("\n") else how_to_use + "\n"
        for attempt in range(CARD_WRITE_ATTEMPTS):  # a map that rewrote the card meanwhile: read again, re-apply
            doc = brain.memory.read(rel)
            parsed = parse_card(doc.text)
            if not parsed.intact:
                raise InvalidInput(f"{rel} has damaged markers; run `brain map --module {name} --force` first",
                                   field="module")
            new = join_card(parsed.generated, text)
            if new == doc.text:
                break
            try:
                brain.write(rel, new, expected_hash=doc.hash, role=role)
                break
            except Conflict:
                if attempt == CARD_WRITE_ATTEMPTS - 1:
                    raise
        replaced = True
    summary = brain.redactor(summary) if summary else summary  # the audit line and the echo hold no secret
    result = {"module": name, "card": ".brain/" + rel, "refreshed": bool(report.written), "how_to_use_replaced": replaced,
              "summary": summary or None}
    if summary:
        try:
            from ..appendonly import append_line  # here: a boot reads cards, it reports none
            from ..memory.private import ensure_private_dir
            from ..security.redact import redact_fields

            ensure_private_dir(brain.runtime)
            line = json.dumps(redact_fields({"at": time.time(), "module": name, "summary": summary}, brain.redactor),
                              ensure_ascii=False) + "\n"
            append_line(brain.runtime / "reports.jsonl", line.encode("utf-8"))  # whole or IncompleteWrite, 0600
        except OSError:
            pass
    return result
