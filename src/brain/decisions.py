"""Decision records: `NNNN-title.md` files with a status lifecycle, and their one-line index.

A record is markdown; its fields are read from any of the common layouts:

    # 0007. Use PostgreSQL for team mode        <- number and title (or "# ADR 7 — ...")
    - Status: accepted                          <- list item or plain "Status: x" line
    - Modules: coord, backends
    - Supersedes: 0003

or YAML front matter (`status:`, `modules:`, `supersedes:`, `superseded_by:`), or an adr-tools
`## Status` section whose first line is the status. Lifecycle: proposed -> accepted ->
superseded by N (also rejected, deprecated). A superseded record points to its
successor; the index follows the chain to the record that stands, refusing cycles.

`decisions.md` is generated from the records (one line each); records are the truth.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

from .errors import DuplicateDecision, InvalidInput, NotFound
from .memory.files import atomic_write_bytes, file_lock, read_regular_file
from .memory.paths import has_link_between, is_plain_memory_name
from .lazyre import lazy
from .records import field, record

__all__ = ["Decision", "parse_record", "load_decisions", "list_decisions", "render_index", "write_index", "index_is_current",
           "new_decision", "set_status", "STATUSES", "decisions_dir", "duplicate_numbers"]

STATUSES = ("proposed", "accepted", "rejected", "deprecated", "superseded")
_FILE = lazy(r"^(\d{1,5})[-_ ].*\.md$")
_TITLE = lazy(r"^#\s+(?:(?:ADR|Decision|RFC)[\s-]*)?(\d+)?\s*[.:—–-]?\s*(.*?)\s*$", re.I)
_FIELD = lazy(r"^\s*(?:[-*]\s*)?(?:\*\*)?([A-Za-z][A-Za-z _-]{1,20}?)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.*?)\s*$")
_SUPERSEDED = lazy(r"superseded\s*(?:by)?\s*:?\s*(?:adr\s*)?#?\s*(\d+)", re.I)
_STATUS_WORDS = {
    "proposed": "proposed", "proposto": "proposed", "proposé": "proposed", "draft": "proposed",
    "accepted": "accepted", "aceito": "accepted", "accepté": "accepted", "adopted": "accepted",
    "rejected": "rejected", "rejeitado": "rejected", "rejeté": "rejected",
    "deprecated": "deprecated", "obsoleto": "deprecated",
    "superseded": "superseded", "substituído": "superseded", "remplacé": "superseded",
}
MAX_LINE_TITLE = 100


@record
class Decision:
    number: int
    title: str
    status: str                       # one of STATUSES
    path: str                         # relative to the repository
    superseded_by: int | None = None
    supersedes: list[int] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    date: str = ""
    text: str = ""
    current: int | None = None        # the record that stands at the end of the chain
    chain_error: str = ""
    duplicates: list[str] = field(default_factory=list)  # other records with this number (old repos, merged branches)

    @property
    def active(self) -> bool:
        return self.status in ("proposed", "accepted")

    def line(self) -> str:
        status = self.status
        if self.status == "superseded":
            status = f"superseded by {self.superseded_by:04d}" if self.superseded_by is not None else "superseded"
            if self.current is not None and self.current != self.superseded_by:
                status += f" → {self.current:04d}"
        title = self.title if len(self.title) <= MAX_LINE_TITLE else self.title[: MAX_LINE_TITLE - 1] + "…"
        mods = f" — modules: {', '.join(self.modules)}" if self.modules else ""
        dup = f" — duplicate number {self.number:04d}, also {', '.join(self.duplicates)}" if self.duplicates else ""
        return f"- {self.number:04d} [{status}] {title}{mods} ({self.path}){dup}"

    def to_dict(self) -> dict:
        return {"number": self.number, "title": self.title, "status": self.status, "superseded_by": self.superseded_by,
                "supersedes": self.supersedes, "current": self.current, "modules": self.modules, "date": self.date,
                "path": self.path, "duplicates": self.duplicates, "line": self.line()}


def _status_of(value: str) -> tuple[str | None, int | None]:
    low = value.strip().strip("*_`").lower()
    match = _SUPERSEDED.search(low)
    if match:
        return "superseded", int(match.group(1))
    for word, status in _STATUS_WORDS.items():
        if low.startswith(word):
            return status, None
    return None, None


def _numbers(value: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", value)]


def _modules(value) -> list[str]:
    if isinstance(value, list):
        items = [str(v) for v in value]
    else:
        items = re.split(r"[,;]", str(value))
    out = [m.strip().strip("`").strip() for m in items]
    return [m for m in out if m and m.lower() not in ("(none)", "none", "-")]


def parse_record(text: str, filename: str, rel_path: str) -> Decision | None:
    """Parse one record; None when the file name carries no number."""
    match = _FILE.match(filename)
    if not match:
        return None
    number = int(match.group(1))
    title = filename[match.end(1):-3].strip("-_ ").replace("-", " ")
    status, superseded_by = None, None
    supersedes: list[int] = []
    modules: list[str] = []
    when = ""
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            from .errors import YamlRefused
            from .yamlsafe import load_yaml

            try:
                meta = load_yaml(text[4:end], rel_path) or {}
            except YamlRefused:  # bad or unbounded front matter: fall back to the body
                meta = {}
            if isinstance(meta, dict):
                if meta.get("title"):
                    title = str(meta["title"])
                if meta.get("status"):
                    status, superseded_by = _status_of(str(meta["status"]))
                if meta.get("superseded_by") or meta.get("superseded-by"):
                    status = "superseded"
                    superseded_by = (_numbers(str(meta.get("superseded_by") or meta.get("superseded-by"))) or [None])[0]
                if meta.get("supersedes"):
                    supersedes = _numbers(str(meta["supersedes"]))
                if meta.get("modules"):
                    modules = _modules(meta["modules"])
                if meta.get("date"):
                    when = str(meta["date"])
            body = text[end + 4:]
    lines = body.splitlines()
    title_found = False
    status_section = False
    for line in lines[:80]:
        if not title_found and line.startswith("# "):
            m = _TITLE.match(line)
            if m and m.group(2):
                title = m.group(2).strip()
                title_found = True
            continue
        if line.startswith("## "):
            status_section = line[3:].strip().lower() in ("status", "estado", "statut")
            continue
        if status_section and line.strip() and status is None:
            status, superseded_by = _status_of(line)
            status_section = False
            continue
        fm = _FIELD.match(line)
        if not fm:
            continue
        key = fm.group(1).strip().lower().replace(" ", "_").replace("-", "_")
        value = fm.group(2)
        if key in ("status", "estado", "statut") and status is None:
            status, superseded_by = _status_of(value)
        elif key in ("superseded_by", "substituído_por") and value:
            status = "superseded"
            superseded_by = (_numbers(value) or [superseded_by])[0]
        elif key in ("supersedes", "substitui", "remplace") and value:
            supersedes = _numbers(value)
        elif key in ("modules", "module", "módulos", "modulos", "tema") and value and not modules:
            modules = _modules(value)
        elif key in ("date", "data") and not when:
            when = value
    return Decision(number, " ".join(title.split()), status or "proposed", rel_path, superseded_by, supersedes, modules,
                    when, text)


def decisions_dir(brain) -> Path:
    rel = brain.settings.get("decisions.dir") or ".brain/decisions"
    path = Path(os.path.normpath(brain.repo / rel))  # lexical: a link on the way is refused by the readers, not followed
    if path != brain.repo and brain.repo not in path.parents:
        raise InvalidInput(f"decisions.dir {rel!r} is outside the repository", field="decisions.dir")
    return path


def load_decisions(brain) -> list[Decision]:
    """Every record, sorted by number then path, with supersession chains resolved.

    Two records with one number (an old repository, two branches merged) are both listed, each
    naming the other in ``duplicates``: a record is never hidden behind another. Chains follow
    the first record of a number (by path); ``set_status`` refuses a duplicated number."""
    folder = decisions_dir(brain)
    found: list[Decision] = []
    if folder.is_dir() and not has_link_between(brain.repo, folder):
        for path in sorted(folder.glob("*.md")):
            try:
                data = read_regular_file(path)  # a linked record (a cloned repository may carry one) is skipped
            except OSError:
                continue
            if data is None or not is_plain_memory_name(path.name):
                continue
            text = data.decode("utf-8", errors="replace")
            record = parse_record(text, path.name, path.relative_to(brain.repo).as_posix())
            if record is not None:
                found.append(record)
    found.sort(key=lambda r: (r.number, r.path))
    records: dict[int, Decision] = {}
    paths: dict[int, list[str]] = {}
    for record in found:
        records.setdefault(record.number, record)
        paths.setdefault(record.number, []).append(record.path)
    for record in found:
        record.duplicates = [p for p in paths[record.number] if p != record.path]
    # "Supersedes: N" in a newer record marks N superseded even if N was not edited
    for record in found:
        for old in record.supersedes:
            target = records.get(old)
            if target is not None and target.status != "superseded":
                target.status = "superseded"
                target.superseded_by = record.number
    for record in found:
        _follow(record, records)
    return found


def duplicate_numbers(records: list[Decision]) -> dict[int, list[str]]:
    """Each number held by more than one record, with the paths of those records."""
    return {r.number: sorted([r.path, *r.duplicates]) for r in records if r.duplicates}


def _follow(record: Decision, records: dict[int, Decision]) -> None:
    seen = {record.number}
    cur = record
    while cur.status == "superseded" and cur.superseded_by is not None:
        nxt = records.get(cur.superseded_by)
        if nxt is None:
            record.chain_error = f"successor {cur.superseded_by:04d} not found"
            record.current = None
            return
        if nxt.number in seen:
            record.chain_error = "supersession cycle"
            record.current = None
            return
        seen.add(nxt.number)
        cur = nxt
    record.current = cur.number


def _module_match(wanted: str, modules: list[str]) -> bool:
    wanted = wanted.strip("/")
    for m in modules:
        m = m.strip("/")
        if m == wanted or wanted.startswith(m + "/") or m.startswith(wanted + "/"):
            return True
    return False


def _index_only(brain, words: list[str], module: str | None) -> list[dict]:
    """A project with a hand-kept decisions.md and no record files: its lines are the decisions."""
    try:
        text = brain.memory.read("decisions.md").text
    except Exception:  # noqa: BLE001 - no index at all means no decision
        return []
    out = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line.lstrip().startswith(("-", "*")) or not line.strip("-* "):
            continue
        low = line.lower()
        if words and not all(w in low for w in words):
            continue
        if module and module.lower() not in low:
            continue
        nums = re.findall(r"\d{1,5}", line)
        out.append({"number": int(nums[0]) if nums else None, "title": line.strip("-* ").strip(), "status": "unknown",
                    "superseded_by": None, "supersedes": [], "current": None, "modules": [], "date": "",
                    "path": ".brain/decisions.md", "line": line})
    return out


def list_decisions(brain, *, query: str | None = None, module: str | None = None, include_inactive: bool = False) -> list[dict]:
    """Filtered records as dicts; superseded/rejected ones only with ``include_inactive`` or when a query names them.

    Without any record file, the lines of a hand-kept decisions.md stand in for records."""
    records = load_decisions(brain)
    words = [w.lower() for w in re.findall(r"\w+", query or "")]
    if not records:
        return _index_only(brain, words, module)
    out = []
    for record in records:
        if module and not _module_match(module, record.modules):
            continue
        if words:
            hay = f"{record.number:04d} {record.title} {' '.join(record.modules)} {record.text}".lower()
            if not all(w in hay for w in words):
                continue
        elif not include_inactive and not record.active:
            continue
        out.append(record.to_dict())
    return out


def render_index(records: list[Decision]) -> str:
    if not records:
        return "# Decisions\n\nNo decision recorded yet.\n"
    lines = ["# Decisions", "",
             "Generated from the decision records by `brain decisions --reindex` (and `brain decision`); do not edit.", ""]
    lines += [r.line() for r in records]
    return "\n".join(lines) + "\n"


def index_is_current(brain) -> bool:
    """True when decisions.md matches the records (or there is no record to index)."""
    records = load_decisions(brain)
    if not records:
        return True
    current = brain.memory.read_or_none("decisions.md")
    return current is not None and current.text == render_index(records)


def write_index(brain) -> str:
    """Rewrite decisions.md from the records, under the numbering lock: a reindex that read the records
    just before a `decision new` wrote its own must not write its older index after that one."""
    with _numbering_lock(brain):
        return _write_index(brain)


def _write_index(brain) -> str:
    text = render_index(load_decisions(brain))
    brain.write("decisions.md", text)
    return ".brain/decisions.md"


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:60].rstrip("-") or "decision"


TEMPLATE = """# {number:04d}. {title}

- Status: {status}
- Date: {date}
- Modules: {modules}
{supersedes}
## Context

What forces this decision: the problem, the constraints, the facts.

## Decision

What we decided, in a few sentences.

## Consequences

What becomes easier, what becomes harder, what to watch.
"""


def _check_territories(brain, paths: list[Path], role: str | None) -> None:
    """Refuse (TerritoryRefused) before anything is written when ``role`` may not write one of the records
    under .brain/ (a folder outside the memory has no territory); the index is derived and not checked."""
    for path in paths:
        try:
            rel = path.relative_to(brain.dir).as_posix()
        except ValueError:
            continue
        brain.check_territory(rel, role=role)


def _write_repo_file(brain, path: Path, text: str, role: str | None = None) -> None:
    """Records under .brain/ go through the brain's write path; a configured folder elsewhere is written atomically."""
    try:
        rel = path.relative_to(brain.dir).as_posix()
    except ValueError:
        if has_link_between(brain.repo, path.parent) or path.is_symlink():
            from .errors import PathRefused

            raise PathRefused(path.relative_to(brain.repo).as_posix(), "symlink",
                              "the decisions folder or the record is a symbolic link: links are never written through")
        atomic_write_bytes(path, brain.redactor(text).encode("utf-8"))  # the same redaction as brain.write
        return
    brain.write(rel, text, role=role)


def new_decision(brain, title: str, *, status: str = "proposed", modules: list[str] | None = None,
                 supersedes: str | int | None = None, body: str | None = None, today: str | None = None,
                 role: str | None = None) -> dict:
    if not isinstance(title, str) or not title.strip() or "\n" in title:
        raise InvalidInput("a decision needs a one-line title", field="title")
    if status not in ("proposed", "accepted"):
        raise InvalidInput("a new decision is proposed or accepted", field="status")
    with _numbering_lock(brain):  # the number is read and its record written by one writer at a time
        records = load_decisions(brain)
        by_number = {r.number: r for r in records}
        old = None
        if supersedes not in (None, ""):
            nums = _numbers(str(supersedes))
            if not nums or nums[0] not in by_number:
                raise NotFound(f"decision {supersedes}", hint="`brain decisions --all` lists the records")
            old = _only_record(records, nums[0])
        number = (max(by_number) + 1) if by_number else 1
        folder = decisions_dir(brain)
        path = folder / f"{number:04d}-{_slug(brain.redactor(title))}.md"  # no key survives in a file name
        text = TEMPLATE.format(number=number, title=" ".join(title.split()), status=status,
                               date=today or date.today().isoformat(), modules=", ".join(modules or []) or "(none)",
                               supersedes=f"- Supersedes: {old.number:04d}\n" if old else "")
        if body:
            head = text[: text.index("## Context")]
            text = head + body.lstrip("\n") + ("" if body.endswith("\n") else "\n")
        _check_territories(brain, [path] + ([brain.repo / old.path] if old is not None else []), role)
        _write_repo_file(brain, path, text, role)
        if old is not None:
            _set_status_text(brain, old, f"superseded by {number:04d}", role)
        _write_index(brain)
        rel = path.relative_to(brain.repo).as_posix()
        return next(r.to_dict() for r in load_decisions(brain) if r.path == rel)


def _numbering_lock(brain):
    """``runtime/decisions.lock``: held while a writer picks the next number and writes its record (and
    while a status changes), so concurrent `brain decision new` never reuse a number. A lock of its own,
    not the memory write lock, which ``brain.write`` takes inside it."""
    return file_lock(brain.runtime / "decisions.lock")


def _only_record(records: list[Decision], number: int) -> Decision:
    """The one record holding ``number``; DuplicateDecision naming the files when several do."""
    holding = [r for r in records if r.number == number]
    if len(holding) > 1:
        raise DuplicateDecision(number, [r.path for r in holding])
    return holding[0]


def _set_status_text(brain, record: Decision, status_text: str, role: str | None = None) -> None:
    path = brain.repo / record.path
    text = path.read_bytes().decode("utf-8")
    pattern = re.compile(r"^(\s*(?:[-*]\s*)?(?:\*\*)?Status(?:\*\*)?\s*:\s*(?:\*\*)?\s*).*$", re.M | re.I)
    if pattern.search(text):
        new = pattern.sub(lambda m: m.group(1) + status_text, text, count=1)
    elif text.startswith("---\n") and re.search(r"^status\s*:.*$", text, re.M):
        new = re.sub(r"^status\s*:.*$", f"status: {status_text}", text, count=1, flags=re.M)
    else:
        lines = text.splitlines(keepends=True)
        idx = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
        new = "".join(lines[:idx]) + f"\n- Status: {status_text}\n" + "".join(lines[idx:])
    _write_repo_file(brain, path, new, role)


def set_status(brain, number: str | int, status: str, *, role: str | None = None) -> dict:
    if status not in ("proposed", "accepted", "rejected", "deprecated"):
        raise InvalidInput("status must be proposed, accepted, rejected or deprecated "
                           "(supersede with `brain decision new TITLE --supersedes N`)", field="status")
    nums = _numbers(str(number))
    with _numbering_lock(brain):
        records = load_decisions(brain)
        if not nums or nums[0] not in {r.number for r in records}:
            raise NotFound(f"decision {number}", hint="`brain decisions --all` lists the records")
        record = _only_record(records, nums[0])
        _set_status_text(brain, record, status, role)
        _write_index(brain)
        return next(r.to_dict() for r in load_decisions(brain) if r.path == record.path)
