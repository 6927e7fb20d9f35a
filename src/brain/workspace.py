"""The composition root: one place that opens a brain and wires its parts.

Every surface (CLI, MCP server, hooks, later the web UI) calls ``open_brain`` and
then methods of Brain; none of them holds logic of its own. Heavy parts (the
coordination backend, the search index) are created on first use, so a boot that
does not need them never imports them.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterator

from .boot import BootRequest, BootResult, assemble
from .boot.call import boot_call
from .errors import InvalidInput, NotInitialized
from .logs import debug
from .memory.files import Document, MemoryStore
from .memory.layers import AgentProfile, Layers
from .security.redact import redactor_from_settings, refuse_secret_name
from .settings import Settings, load_settings, refuse_linked_state

__all__ = ["Brain", "open_brain", "init_brain", "find_brain_dir", "NAMED_TARGETS"]


def _debug(message: str, *args) -> None:
    debug("brain", message, *args)


# `brain write now|focus|note NAME|workflow NAME` -> the memory path it writes
NAMED_TARGETS = {"now": "now.md", "focus": "focus.md", "note": "notes/{}.md", "workflow": "workflows/{}.md",
                 "profile": "agents/{}.md"}


def find_brain_dir(start: Path, env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("BRAIN_DIR"):
        path = Path(env["BRAIN_DIR"]).expanduser().resolve()
        if not os.path.lexists(path / "brain.yml"):
            raise NotInitialized(str(path))
        return path
    start = start.resolve()
    for folder in (start, *start.parents):
        # lexists: a brain.yml that is a folder or a link is this brain's, reported by the settings reader
        if os.path.lexists(folder / ".brain" / "brain.yml"):
            refuse_linked_brain(folder / ".brain")
            return folder / ".brain"
    from .checkout import main_worktree_brain

    found = main_worktree_brain(start)
    if found is not None:
        raise NotInitialized(str(start), main_brain=str(found[1]), branch=found[0].branch())
    raise NotInitialized(str(start))


def refuse_linked_brain(brain_dir: Path) -> None:
    """A `.brain` found in a repository is the repository's own folder, never a link: a cloned repository
    could commit `.brain -> ~/somewhere` and make brain read and write there. (`BRAIN_DIR` names a folder
    on purpose and may be anything the user chooses.)"""
    if brain_dir.is_symlink():
        from .errors import UnsafeLink

        try:
            target = os.readlink(brain_dir)
        except OSError:
            target = "?"
        raise UnsafeLink(str(brain_dir), target, "`.brain` folder")


def _stays_inside(path: Path, root: Path) -> bool:
    """``path``, symlinks resolved, is inside ``root`` (a profile linked to another layer is skipped)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


class Brain:
    """One project's brain: memory files, layers, settings, and the derived parts."""

    def __init__(self, brain_dir: Path, settings: Settings, env: dict[str, str] | None = None) -> None:
        self.dir = brain_dir.resolve()
        self.repo = self.dir.parent
        self.settings = settings
        self.env = dict(os.environ) if env is None else env
        self.runtime = self.dir / "runtime"
        refuse_linked_state(self.dir)  # a cloned repository never chooses where brain writes
        self.redactor = redactor_from_settings(settings)  # secrets never touch disk (memory files, log lines)
        self.memory = MemoryStore(
            self.dir,
            write_limit=settings["limits.write_bytes"],
            limits={"now.md": settings["limits.now_bytes"]},
            lock_path=self.runtime / "write.lock",
            redactor=self.redactor,
            areas=self._write_areas(),
        )
        self.layers = Layers(settings.home)
        self._write_listeners: list[Callable[[str], None]] = [self._index_on_write]
        self._profiles: tuple[list, list[AgentProfile]] | None = None
        self._profile_problems: list[dict] = []
        self._commit_batches = threading.local()  # per thread: the memory paths of an open commit_batch

    def _write_areas(self):
        """The project's memory areas, plus the decisions folder when brain.yml moves it inside .brain/."""
        from .memory.paths import PROJECT_AREAS

        folder = os.path.normpath(str(self.settings.get("decisions.dir") or ".brain/decisions")).replace(os.sep, "/")
        parts = folder.split("/")
        if len(parts) >= 2 and parts[0] == ".brain" and not parts[1].startswith("."):
            return PROJECT_AREAS.with_folder(parts[1])  # the rule still refuses runtime/, hidden names, links
        return PROJECT_AREAS

    @property
    def name(self) -> str:
        """The brain's name (broadcasts go to `<name>@<machine>`): the `name` setting, else the repository's
        name, the same in every worktree (a `.brain` below the top of the tree: its folder's name)."""
        if self.settings.get("name"):
            return self.settings.get("name")
        checkout = self.checkout
        return checkout.repository_name if checkout is not None and checkout.root == self.repo else self.repo.name

    # -- the repository: one coordination store for all its worktrees (brain.checkout) ----------
    @property
    def checkout(self):
        """The working tree this brain sits in and its repository's common git dir (brain.checkout.Checkout),
        or None outside git or in a layout brain does not trust to share (then everything stays in runtime/)."""
        if not hasattr(self, "_checkout"):
            from .checkout import locate_checkout

            self._checkout = locate_checkout(self.repo)
        return self._checkout

    @property
    def store_dir(self) -> Path:
        """The folder of the embedded coordination store (brain.db): in the repository's common git dir, the
        same for every worktree (docs/coordination.md, Worktrees); this checkout's runtime/ outside git."""
        checkout = self.checkout
        return checkout.store_dir(self.repo) if checkout is not None else self.runtime

    @property
    def conversations_dir(self) -> Path:
        """Where this checkout's conversation logs are (nothing is created here: ``brain.log.shared`` makes and
        fills it): `<store>/conversations/<checkout id>/` in a git checkout that has its id, else the working
        tree's runtime/conversations/ (outside git, or before the first brain of this version moved them)."""
        checkout = self.checkout
        if checkout is not None:
            from .checkout import CONVERSATIONS_FOLDER, read_checkout_id

            checkout_id = read_checkout_id(self.runtime)
            if checkout_id is not None:
                return self.store_dir / CONVERSATIONS_FOLDER / checkout_id
        return self.runtime / "conversations"

    def worktree(self):
        """This working tree as the sessions started here record it (brain.coord.model.Worktree), or None."""
        checkout = self.checkout
        if checkout is None:
            return None
        from .coord.model import Worktree

        return Worktree(checkout.name, checkout.branch(), str(checkout.root))

    # -- memory ----------------------------------------------------------------
    def _store(self, layer: str | None) -> MemoryStore:
        if layer in (None, "", "project"):
            return self.memory
        from .memory.layers import PRIVATE_LAYERS

        return MemoryStore(self.layers.path(layer), write_limit=self.settings["limits.write_bytes"],
                           lock_path=self.runtime / "write.lock", redactor=self.redactor,
                           private=layer in PRIVATE_LAYERS)  # one person's notes and machine paths: 0600

    def read(self, path: str, *, layer: str | None = None) -> Document:
        """One memory file. The path rule (brain.memory.paths) refuses runtime/ (the conversation
        logs never reach an agent, DESIGN §1), brain.local.yml, hidden files and symlinks."""
        return self._store(layer).read(path)

    def write(self, path: str, text: str, *, expected_hash: str | None = None, layer: str | None = None,
              role: str | None = None, reason: str | None = None, durable: bool = True) -> Document:
        """The one write path of memory: territory check, secret redaction, atomic write, listeners,
        and (``sync.commit_on_write``) a commit in the repository owning the path.

        ``role`` is the writer's role (CLI ``--role``, MCP: the session's); ``None`` is an
        unidentified local writer, not checked against territories. ``reason`` goes into the commit.
        The returned Document's ``redacted`` lists (kind, count) of the secrets taken out.
        """
        store = self._store(layer)
        path = store.confine(path, write=True)  # the one path rule; the normalized path from here on
        refuse_secret_name(self.redactor, path, "path")  # a file name outlives any redaction of its text
        if role is not None:
            self.check_territory(path, layer=layer, role=role)
        if isinstance(text, str):
            from .yamlsafe import check_yaml_write

            check_yaml_write(path, text)  # a YAML bomb in front matter or a contract: YamlRefused, nothing written
        doc = store.write(path, text, expected_hash=expected_hash, durable=durable)  # durable=False: derived files only
        _debug("wrote %s (%s bytes, %s)", path, doc.size, doc.hash[:12])
        for listener in self._write_listeners:
            listener(path)
        self.commit_memory([path], writer=role, reason=reason, layer=layer)
        return doc

    def commit_memory(self, paths: list[str], *, writer: str | None, reason: str | None, layer: str | None = None,
                      action: str = "") -> None:
        """With ``sync.commit_on_write`` on, commit a memory change (a write, ``delete`` or ``move`` of
        ``paths``, relative to the layer) naming the writer and the reason (brain.sync.commit_change).
        The change stands if the commit fails; `brain sync` commits what is pending."""
        if not self.settings.get("sync.commit_on_write"):
            return
        pending = getattr(self._commit_batches, "pending", None)
        if pending is not None:  # a commit_batch is open in this thread: it commits once, when it closes
            pending.append((layer, list(paths)))
            return
        from .errors import BrainError
        from .sync import commit_change

        root = self._store(layer).root
        try:
            commit_change(self, [root / p for p in paths], writer=writer, reason=reason, layer=layer, action=action)
        except BrainError as exc:
            import logging

            logging.getLogger("brain").warning("memory changed but not committed: %s", exc)

    @contextmanager
    def commit_batch(self, *, writer: str | None, reason: str | None, action: str = "",
                     commit: bool = True) -> Iterator[None]:
        """Gather the memory commits (``sync.commit_on_write``) of one command into one commit.

        `brain map` and `report-done` write one card per module: a commit per card buries the history,
        and a commit made while git is committing breaks the user's commit. The writes this thread makes
        while the batch is open are committed once, when it closes, naming ``writer`` (a session or a
        role) and ``reason``; inside a git operation that one commit becomes staging (brain.sync).
        ``commit=False`` commits nothing (the pre-commit hook stages its cards into git's own commit).
        A batch opened inside another joins it."""
        if getattr(self._commit_batches, "pending", None) is not None:
            yield
            return
        self._commit_batches.pending = []
        try:
            yield
        finally:
            pending, self._commit_batches.pending = self._commit_batches.pending, None
            by_layer: dict[str | None, list[str]] = {}
            for layer, paths in pending if commit else ():
                known = by_layer.setdefault(layer or None, [])
                known.extend(p for p in paths if p not in known)
            for layer, paths in by_layer.items():
                self.commit_memory(paths, writer=writer, reason=reason, layer=layer, action=action)

    def tidy_after_session_start(self, *, every_seconds: float = 3600.0) -> list[str]:
        """Prune the local handoffs of gone threads past ``log.retention_days`` (``Conversations.prune_local``)
        and the Claude hook states as old (`runtime/hooks/`), at most once per ``every_seconds`` across
        processes; called when a session starts (the hook, the
        MCP server, `brain session start`), as the session list is pruned, so a week of use needs no
        manual step. The cost is one stat of `runtime/handoffs-pruned` per start, and a pass (one stat per
        local handoff) an hour. Never raises: tidying must not fail a session start."""
        stamp = self.runtime / "handoffs-pruned"
        try:
            if time.time() - stamp.stat().st_mtime < every_seconds:
                return []
        except FileNotFoundError:
            pass
        except OSError:
            return []
        try:
            from .memory.private import ensure_private_dir, open_private

            ensure_private_dir(self.runtime)
            fd = open_private(stamp, os.O_WRONLY)  # claim this pass before doing it
            os.close(fd)
            os.utime(stamp)
            live: set[str] = set()
            if self.has_coordination_store():
                live = {s.id for s in self.coord.sessions()}
            retention = self.settings["log.retention_days"] * 86400
            if retention > 0:
                from .hooks.claude import prune_states

                prune_states(self, retention)  # the per-session hook states of Claude sessions long over
            return self.conversations.prune_local(keep=live)
        except Exception as exc:  # noqa: BLE001
            _debug("handoff pruning skipped: %s", exc)
            return []

    def notify_write(self, path: str) -> None:
        """Tell the write listeners (the search index...) that ``path`` changed or went away."""
        for listener in self._write_listeners:
            listener(path)

    def notes(self, *, everything: bool = False) -> list:
        """Memory files with title and size (brain.notes.NoteInfo); ``everything`` adds cards and local handoffs."""
        from .notes import list_notes

        return list_notes(self, everything=everything)

    def remove(self, path: str, *, expected_hash: str | None = None, role: str | None = None,
               reason: str | None = None) -> dict:
        """Delete a memory file: territory of ``role`` checked, ``expected_hash`` honoured, the index updated,
        and (``sync.commit_on_write``) the deletion committed like a write, naming ``role`` and ``reason``."""
        from .notes import remove_note

        return remove_note(self, path, expected_hash=expected_hash, role=role, reason=reason)

    def move(self, source: str, dest: str, *, expected_hash: str | None = None, role: str | None = None,
             reason: str | None = None, rewrite_links: bool = True) -> dict:
        """Rename a memory file (the destination must not exist); territories of both paths checked; both
        paths committed in one commit with ``sync.commit_on_write``; the [[links]] to it follow
        (brain.notes.move_note)."""
        from .notes import move_note

        return move_note(self, source, dest, expected_hash=expected_hash, role=role, reason=reason,
                         rewrite_links=rewrite_links)

    def edit(self, path: str, operation: str, *, value: str = "", heading: str | None = None, new: str = "",
             count: int | None = 1, expected_hash: str | None = None, layer: str | None = None,
             role: str | None = None, reason: str | None = None):
        """Change one memory file in place (brain.memory.edit: append, prepend, section, replace) over the
        version read now, or over ``expected_hash``'s: the write carries that hash, so an edit never lands
        on a file that changed meanwhile (Conflict). Territories and redaction are the write's.
        Append and prepend create a missing file. Returns (Document, number of changes)."""
        from .errors import Conflict, NotFound
        from .memory.edit import apply

        store = self._store(layer)
        rel = store.confine(path, write=True)
        current = store.read_or_none(rel)
        if current is None:
            if operation not in ("append", "prepend"):
                raise NotFound(f"memory file {rel}", hint="append or prepend create a file; the other edits need one")
            if expected_hash:
                raise Conflict(rel, expected_hash, None)
            text, base = "", ""
        else:
            if expected_hash is not None and not current.hash.startswith(expected_hash.lower()):
                raise Conflict(rel, expected_hash, current.hash)
            text, base = current.text, current.hash
        result = apply(text, operation, value=value, heading=heading, new=new, expected=count)
        doc = self.write(rel, result.text, expected_hash=base, layer=layer, role=role, reason=reason)
        return doc, result.changes

    def remember(self, text: str, *, role: str | None = None, reason: str | None = None) -> dict:
        """File a one-line memory in the note about it, else notes/inbox.md (brain.memory.remember)."""
        from .memory.remember import remember

        return remember(self, text, role=role, reason=reason)

    def record_use(self, kind: str, paths: list[str]) -> None:
        """Note that a read or a search returned memory ``paths`` (for `brain notes --stale`); never raises."""
        from .memory.usage import record_use

        record_use(self.runtime, kind, [p for p in paths if isinstance(p, str)])

    def stale_notes(self, days: float = 90) -> list[dict]:
        """Memory unused and unwritten for ``days``, or naming code that is gone (brain.memory.usage)."""
        from .errors import InvalidInput
        from .memory.usage import stale_notes

        if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 < days <= 36500:
            raise InvalidInput(f"days must be a number from 1 to 36500, not {days!r}", field="days")
        return stale_notes(self, days)

    # -- territories (scribes) ----------------------------------------------------
    @property
    def territories(self):
        """The territory map of brain.yml (brain.security.Territories; empty when none is configured)."""
        if getattr(self, "_territories", None) is None:
            from .security.territories import territories_from_settings

            self._territories = territories_from_settings(self.settings)
        return self._territories

    def check_territory(self, path: str, *, layer: str | None = None, role: str | None = None) -> None:
        """Raise TerritoryRefused when ``role`` may not write ``path`` (a no-op without territories)."""
        if role is None or not self.settings.get("territories"):
            return
        allowed, owner = self.territories.allows(path, role, None if layer in (None, "", "project") else layer)
        if allowed:
            return
        from .errors import TerritoryRefused

        sessions: list[str] = []
        if self.has_coordination_store():
            try:
                sessions = [s.id for s in self.coord.sessions() if s.role == owner.owner and s.liveness == "alive"]
            except Exception as exc:  # the refusal must not depend on the backend being up
                _debug("could not list the owner's sessions: %s", exc)
        raise TerritoryRefused(path, owner.layer, owner.area, owner.owner, role, sessions)

    def target_path(self, target: str, name: str | None = None) -> str:
        """Map `now`, `focus`, `note NAME`, `workflow NAME`, `profile NAME` to a memory path."""
        pattern = NAMED_TARGETS.get(target)
        if pattern is None:
            raise InvalidInput(f"unknown target {target!r}; use one of {', '.join(NAMED_TARGETS)}", field="target")
        if "{}" in pattern:
            if not name:
                raise InvalidInput(f"`{target}` needs a NAME, e.g. `brain write {target} setup`", field="name")
            if "/" in name or name.startswith(".") or name != name.strip():
                raise InvalidInput(f"{target} name {name!r} must be a plain file name", field="name")
            return pattern.format(name[:-3] if name.endswith(".md") else name)
        if name:
            raise InvalidInput(f"`{target}` takes no NAME", field="name")
        return pattern

    def workflows(self) -> list[str]:
        """Names of the project's workflows (`workflows/NAME.md`), sorted."""
        return [Path(rel).stem for rel in self.memory.list("workflows")]

    def workflow(self, name: str) -> Document:
        """One workflow by name (`release` or `release.md`)."""
        return self.read(self.target_path("workflow", name))

    def on_write(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(path)`` after every memory write (the search index hooks in here)."""
        self._write_listeners.append(listener)

    def profiles(self) -> list[AgentProfile]:
        """Agent profiles of the kernel layer, overridden by name by the project's .brain/agents/.

        Parsed once and kept while no profile file changes (a long-lived server boots often).
        A profile that does not parse (unknown tier, broken front matter) is skipped, never
        fatal: one bad file must not make every boot fail. ``profile_problems()`` names them
        (the boot's manifest and `brain doctor` report them).
        """
        kernel = self.layers.path("kernel")
        sources = [(f"kernel:agents/{p.name}", p) for p in self.layers.kernel_profile_files()
                   if _stays_inside(p, kernel)]  # a link out of the kernel (say to personal/) is never served
        sources += [(rel, self.dir / rel) for rel in self.memory.list("agents")
                    if _stays_inside(self.dir / rel, self.dir)]
        stamp = []
        for source, path in sources:
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            stamp.append((source, st.st_mtime_ns, st.st_size))
        if self._profiles is not None and self._profiles[0] == stamp:
            return self._profiles[1]
        from .memory.files import read_regular_file

        found: dict[str, AgentProfile] = {}
        problems: list[dict] = []
        for source, path in sources:
            try:
                data = read_regular_file(path)  # None for a link swapped in since the listing
            except FileNotFoundError:
                continue
            if data is None:
                continue
            text = data.decode("utf-8", errors="replace")
            try:
                profile = AgentProfile.parse(text, source, path.stem)
            except InvalidInput as exc:
                problems.append({"source": source, "problem": exc.message.removeprefix(f"{source}: ")})
                continue
            found[profile.name] = profile
        profiles = [found[name] for name in sorted(found)]
        self._profiles = (stamp, profiles)
        self._profile_problems = problems
        return profiles

    def profile_problems(self) -> list[dict]:
        """The agent profiles skipped because they do not parse: [{source, problem}]."""
        self.profiles()
        return list(self._profile_problems)

    # -- boot ------------------------------------------------------------------
    def boot(self, task: str | None = None, *, module: str | None = None, role: str | None = None,
             session: str | None = None, budget: int | None = None, record: bool = True) -> BootResult:
        budget = self.settings["boot.budget"] if budget is None else budget
        minimum = self.settings["boot.min_budget"]
        from .bounds import MAX_BUDGET

        if isinstance(budget, bool) or not isinstance(budget, int) or not minimum <= budget <= MAX_BUDGET:
            shown = repr(budget) if len(repr(budget)) <= 40 else repr(budget)[:37] + "..."
            raise InvalidInput(f"budget must be an integer from {minimum} to {MAX_BUDGET} tokens, not {shown}",
                               field="budget", hint="the minimum is the setting boot.min_budget")
        if task is not None and not isinstance(task, str):
            raise InvalidInput("task must be text", field="task")
        if isinstance(task, str):
            task = self.redactor(task)  # echoed in the boot text and kept (hashed) in the boot record
        if isinstance(module, str):
            module = self.redactor(module)  # a module holding a key names no card; shown in the header
        if not role and session:  # a session id names its role: its profiles come in (`--role` overrides)
            from .coord.rules import role_of_session

            role = role_of_session(session)
        inferred = False
        with boot_call():  # this boot's rankings, shared by module inference and the slots, by no other boot
            if not module and task and task.strip():
                module = self._infer_module(task, session)  # the card of the module the task text points to
                inferred = module is not None
            request = BootRequest(task=task or None, module=module or None, role=role or None,
                                  session=session or None, budget=budget, module_inferred=inferred)
            result = assemble(self, request)
        if record:
            from .boot.record import record_boot  # a `--no-record` boot (an agent's check) never loads it

            try:
                record_boot(self.runtime, request, result, self.redactor)
            except OSError as exc:  # an unwritable runtime/ must not cost the agent its boot
                _debug("could not record the boot: %s", exc)
        return result

    # -- derived environment -----------------------------------------------------
    def state(self) -> dict:
        from .state import derive_state

        return derive_state(self.repo, self.settings.get("services"), allowed_hosts=self.settings.get("state.allowed_hosts"))

    def doctor(self) -> list[dict]:
        from .doctor import run_checks

        return run_checks(self)

    # -- module cards and decisions (lazy: brain.cards, brain.decisions) ---------
    def map(self, module: str | None = None, *, check: bool = False, force: bool = False, progress=None,
            writer: str | None = None):
        """Build or refresh the module cards (brain.cards.MapReport); ``check`` writes nothing; with
        ``sync.commit_on_write`` what it refreshed is one commit naming ``writer``."""
        from .cards import build_map

        return build_map(self, module, check=check, force=force, progress=progress, writer=writer)

    def card(self, module: str, *, check_stale: bool = True):
        """The parsed card of ``module`` (brain.cards.Card) with its staleness, or None."""
        from .cards import load_card

        return load_card(self, module, check_stale=check_stale)

    def module_of_path(self, path: str) -> str | None:
        """The module (card name) a file belongs to, or None."""
        from .cards import module_of_path

        return module_of_path(self, path)

    def report_done(self, module: str, *, how_to_use: str | None = None, summary: str | None = None,
                    writer: str | None = None, role: str | None = None) -> dict:
        """Refresh ``module``'s card; replace only its How to use section when ``how_to_use`` is given
        (one commit naming ``writer`` with ``sync.commit_on_write``; a write by ``role``, checked against
        the territories before anything is written)."""
        from .cards import report_done

        return report_done(self, module, how_to_use=how_to_use, summary=summary, writer=writer, role=role)

    def decisions(self, query: str | None = None, module: str | None = None, *, include_inactive: bool = False) -> list[dict]:
        """Decision records as dicts (number, title, status, current, modules, path, line), filtered.

        ``"\n".join(d["line"] for d in ...)`` is the filtered one-line index (MCP `brain_decisions`)."""
        from .decisions import list_decisions

        return list_decisions(self, query=query, module=module, include_inactive=include_inactive)

    def new_decision(self, title: str, *, status: str = "proposed", modules: list[str] | None = None,
                     supersedes: str | int | None = None, body: str | None = None, role: str | None = None) -> dict:
        """Create the next decision record (a write by ``role``: territories checked before anything is written)."""
        from .decisions import new_decision

        return new_decision(self, title, status=status, modules=modules or [], supersedes=supersedes, body=body,
                            role=role)

    def set_decision_status(self, number: str | int, status: str, *, role: str | None = None) -> dict:
        from .decisions import set_status

        return set_status(self, number, status, role=role)

    def renumber_decisions(self, *, dry_run: bool = False, role: str | None = None) -> dict:
        """Give records sharing a number (merged branches or clones) numbers of their own; see decision_numbers."""
        from .decision_numbers import renumber_duplicates

        return renumber_duplicates(self, dry_run=dry_run, role=role)

    def reindex_decisions(self) -> str:
        """Rewrite decisions.md from the records; returns its path relative to the repository."""
        from .decisions import write_index

        return write_index(self)

    # -- search index, graph and task localization (lazy: brain.search) ----------
    @property
    def index(self):
        """The derived search index and graph in runtime/index.db (brain.search.SearchIndex)."""
        if getattr(self, "_index", None) is None:
            from .search import SearchIndex

            self._index = SearchIndex(self.dir, self.repo, self.runtime, self.settings.get("decisions.dir"))
        return self._index

    def _index_on_write(self, path: str) -> None:
        # only an index that exists is kept up to date; a write never creates one
        if self.settings.get("search.enabled") and (self.runtime / "index.db").is_file():
            try:
                self.index.update_memory(path)
            except Exception as exc:  # the index is derived: a failure must not fail the write
                _debug("index update of %s failed: %s", path, exc)

    def _infer_module(self, task: str, session: str | None) -> str | None:
        if not self.settings.get("search.enabled"):
            return None
        try:
            from .search.service import infer_module

            return infer_module(self, task, session=session)
        except Exception as exc:  # derived help: never cost the agent its boot
            _debug("module inference failed: %s", exc)
            return None

    def reindex(self, *, rebuild: bool = False, code: bool = True) -> dict:
        """Bring runtime/index.db up to date with the files (or rebuild it from nothing)."""
        if rebuild:
            return self.index.rebuild()
        try:
            return self.index.refresh(code=code)
        except Exception as exc:  # noqa: BLE001 - a damaged index (derived) is rebuilt, anything else raised
            from .search.index import is_corruption

            if not is_corruption(exc):
                raise
            return self.index.rebuild()

    def search(self, query: str, *, kind: str | None = None, limit: int = 10) -> list[dict]:
        """Bounded search hits (path, kind, title, snippet, score) over memory and code symbols."""
        from .search.service import search

        return search(self, query, kind=kind, limit=limit)

    def related(self, target: str, *, limit: int = 30) -> dict:
        """What the graph links to ``target`` (a file, module, card, decision or contract)."""
        from .search.service import related

        return related(self, target, limit=limit)

    def locate(self, task: str | None, *, module: str | None = None, session: str | None = None, limit: int = 20):
        """The files (and modules) a task text is about, most likely first (brain.search.locate.Localization)."""
        from .search.service import locate

        return locate(self, task, module=module, session=session, limit=limit)

    # -- coordination (lazy: sqlite3/psycopg are imported on first use) -----------
    @property
    def backend(self):
        """The coordination backend named by the `backend` setting (SQLite file in runtime/ by default)."""
        if getattr(self, "_backend", None) is None:
            from .backends import open_backend

            spec = self.settings.get("backend")
            store = self.store_dir
            if spec == "sqlite" and store != self.runtime:
                from .checkout import prepare_store_dir

                prepare_store_dir(store)
                backend = open_backend(spec, store)
                self._import_worktree_store(backend)
                self._backend = backend
            else:
                self._backend = open_backend(spec, self.runtime)
        return self._backend

    def _import_worktree_store(self, backend) -> None:
        """Fold this checkout's own runtime/brain.db (earlier versions kept one per checkout) into the shared
        store, once (brain.coord.imports). A failure leaves the old file for the next open and `brain doctor`."""
        legacy = self.runtime / "brain.db"
        if not legacy.is_file():
            return
        from .coord.imports import import_worktree_store
        from .errors import BrainError

        try:
            import_worktree_store(backend, legacy, self.worktree())
        except (BrainError, OSError) as exc:
            import logging

            logging.getLogger("brain").warning("could not import %s into the shared coordination store: %s",
                                               legacy, exc)

    @property
    def coord(self):
        """Sessions, claims, signals, checkpoints, audit and ask/reply (brain.coord.Coordinator)."""
        if getattr(self, "_coord", None) is None:
            from .coord.factory import coordinator_for

            self._coord = coordinator_for(self, self.backend)
        return self._coord

    @property
    def livestate(self):
        """Lean last-writer-wins live state (brain.livestate.LiveState), sharing the coordination backend."""
        return self.coord.livestate

    def has_coordination_store(self) -> bool:
        """Whether coordination was ever used here (the boot skips its slots otherwise, creating nothing)."""
        return self.settings.get("backend") != "sqlite" or (self.store_dir / "brain.db").exists() \
            or (self.runtime / "brain.db").exists()  # an old per-checkout store, imported at the first use

    # -- conversation log and handoffs (lazy: brain.log) ---------------------------
    @property
    def conversations(self):
        """Conversation logs (humans only) and their handoff summaries (brain.log.Conversations)."""
        if getattr(self, "_conversations", None) is None:
            from .log import open_conversations

            self._conversations = open_conversations(self)
        return self._conversations

    def record_turn(self, thread: str | None, speaker: str, text: str, *, to: str | None = None,
                    kind: str = "message", files=(), ref: str | None = None, at: float | None = None):
        """Append one turn to a thread's log and fold it into `handoffs/local/<thread>.md`.

        ``thread=None`` with ``to=`` names the thread of the two parties (thread_between).
        Coordination records every ask (kind="ask") and reply (kind="reply", ref=ticket) here."""
        conv = self.conversations
        text = self.redactor(text) if isinstance(text, str) else text  # before the log and the handoff fold
        return conv.record(conv.make_turn(thread, speaker, text, to=to, kind=kind, files=files, ref=ref, at=at))

    # -- team mode: tokens and git sync (lazy: brain.team, brain.sync) ---------------
    @property
    def tokens(self):
        """Bearer tokens of the team server, stored hashed in runtime/tokens.json (brain.team.TokenStore)."""
        if getattr(self, "_tokens", None) is None:
            from .team.tokens import TokenStore

            self._tokens = TokenStore(self.runtime / "tokens.json")
        return self._tokens

    def sync(self, *, push: bool = True, dry_run: bool = False):
        """Pull and push every memory repository (project, satellites, layers) against its remote."""
        from .sync import sync_all

        return sync_all(self, push=push, dry_run=dry_run)

    @staticmethod
    def thread_between(a: str, b: str) -> str:
        """The stable thread id of two parties (sessions, or a person and a session)."""
        from .log.turns import thread_between

        return thread_between(a, b)


def open_brain(path: str | Path | None = None, *, env: dict[str, str] | None = None) -> Brain:
    """Open the brain of the repository containing ``path`` (default: the current folder)."""
    env = dict(os.environ) if env is None else env
    start = Path(path) if path is not None else Path.cwd()
    if (start / "brain.yml").is_file() and start.name == ".brain":
        brain_dir = start
    else:
        brain_dir = find_brain_dir(start, env)
    return Brain(brain_dir, load_settings(brain_dir, env), env)


def init_brain(path: str | Path | None = None, *, env: dict[str, str] | None = None) -> tuple[Brain, list[str]]:
    """Create `.brain/` in ``path`` (default: the current git repository's root) and open it."""
    env = dict(os.environ) if env is None else env
    if path is None:
        cwd = Path.cwd()
        from .gitsafe import discover_toplevel

        repo = discover_toplevel(cwd) or cwd
    else:
        repo = Path(path)
        repo.mkdir(parents=True, exist_ok=True)
    repo = repo.resolve()
    brain_dir = repo / ".brain"
    refuse_linked_brain(brain_dir)
    if brain_dir.exists():
        load_settings(brain_dir, env)  # a broken brain.yml is reported, not papered over
    from .memory.scaffold import scaffold  # only `init` creates files

    created = scaffold(repo)
    brain = Brain(brain_dir, load_settings(brain_dir, env), env)
    brain.layers.ensure()
    brain.layers.register_project(repo)
    return brain, created
