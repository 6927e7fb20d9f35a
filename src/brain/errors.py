"""One exception tree for the whole library.

Every error carries typed fields (not just a message) so each surface can map it
once, at its edge: the CLI to an exit code, MCP to a tool error, HTTP to a status.
Callers and tests match on the class and the fields, never on the text.
"""

from __future__ import annotations

__all__ = [
    "BrainError",
    "NotInitialized",
    "SettingsError",
    "SettingAboveCeiling",
    "TrackedLocalSettings",
    "UnsafeLink",
    "InvalidInput",
    "YamlRefused",
    "PathEscape",
    "PathRefused",
    "TooLarge",
    "NotFound",
    "Conflict",
    "BackendError",
    "DamagedStore",
    "ClaimLost",
    "ReplyRefused",
    "WaitCycle",
    "RevisionConflict",
    "IntegrationConflict",
    "TerritoryRefused",
    "Unauthorized",
    "Forbidden",
    "SyncConflict",
    "SyncError",
    "UntrustedRepository",
    "ExportLeak",
    "FileSystemError",
    "InputTooLarge",
    "IncompleteWrite",
    "FrozenRecord",
    "Busy",
    "SessionHandleRefused",

    "DuplicateDecision",
]


class BrainError(Exception):
    """Base of every error brain raises on purpose."""

    exit_code = 1
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict:
        data = {"error": self.kind, "message": self.message}
        if self.hint:
            data["hint"] = self.hint
        for key, value in vars(self).items():
            if key not in ("message", "hint") and not key.startswith("_"):
                data[key] = value
        return data

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class NotInitialized(BrainError):
    """No `.brain/` where one was expected."""

    exit_code = 3
    kind = "not_initialized"

    def __init__(self, start: str, main_brain: str | None = None, branch: str | None = None) -> None:
        if main_brain is None:
            super().__init__(
                f"no .brain/ found in {start} or any parent folder",
                hint="run `brain init` in the repository first",
            )
        else:  # a linked worktree whose branch lacks the memory the main working tree has
            on = f"branch {branch}" if branch else "this worktree's commit"
            super().__init__(
                f"no .brain/ in {start}: this is a linked git worktree, and {on} does not have the .brain/ "
                f"of the repository's main working tree ({main_brain})",
                hint="commit .brain/ in the main working tree (`git add .brain AGENTS.md && git commit`), then "
                     "bring that commit into this branch (`git merge` or `git rebase`); worktrees made after "
                     "it have it. Running `brain init` here would start a second, separate memory",
            )
        self.start = start
        self.main_brain = main_brain
        self.branch = branch


class SettingsError(BrainError):
    """A settings file is unreadable or holds a wrong key or type."""

    exit_code = 4
    kind = "settings"

    def __init__(self, file: str, key: str | None, expected: str, got: str | None = None) -> None:
        where = f"{file}: {key}" if key else file
        detail = f"expected {expected}" + (f", got {got}" if got is not None else "")
        variable = file.startswith("BRAIN_") and "/" not in file  # an environment variable, not a file
        super().__init__(f"{where}: {detail}", hint=f"fix (or unset) {file} and run the command again" if variable
                         else "fix the file and run the command again")
        self.file = file
        self.key = key
        self.expected = expected
        self.got = got


class SettingAboveCeiling(SettingsError):
    """A limit in the versioned ``brain.yml`` above the ceiling a repository may set (settings.VERSIONED_CEILINGS).

    A cloned repository writes that file; ``value`` (a number, or a list's length) above ``ceiling``
    would let it make the machine buffer, keep or fork without bound. brain.local.yml may go higher."""

    kind = "setting_above_ceiling"

    def __init__(self, file: str, key: str, value: int, ceiling: int, entries: bool = False) -> None:
        expected = (f"1 to {ceiling} in the versioned brain.yml (0 means no limit at all)" if value == 0 and not entries
                    else f"at most {ceiling}{' entries' if entries else ''} in the versioned brain.yml")
        super().__init__(file, key, expected + " (a cloned repository writes it)",
                         f"{value}{' entries' if entries else ''}")
        self.hint = f"lower it, or set {key} in brain.local.yml (this machine's own file), which may go higher"
        self.value = value
        self.ceiling = ceiling


class TrackedLocalSettings(SettingsError):
    """``brain.local.yml`` is tracked by git: refused, nothing read from it (``path``; ``rel`` as git names it).

    It holds this machine's values (``backend``, ``home``, ``machine``) and is gitignored; a committed one
    came with a clone and would let the repository choose where brain sends its coordination state."""

    kind = "tracked_local_settings"

    def __init__(self, path: str, rel: str) -> None:
        super().__init__(path, None, "this machine's own file, never tracked by git",
                         "a file git tracks (it came with the repository)")
        self.hint = (f"run `git rm --cached {rel}` (and commit), then check or delete the file: its backend, home "
                     "and machine were chosen by whoever committed it")
        self.path = path
        self.rel = rel


class UnsafeLink(BrainError):
    """brain's own settings file or runtime state is a symbolic link: refused, nothing read or written.

    A cloned repository can commit links; following them would let it choose which file brain
    reads as its settings or where it writes its database, logs and lock (``path`` is the link,
    ``target`` where it points)."""

    exit_code = 4
    kind = "unsafe_link"

    def __init__(self, path: str, target: str, what: str) -> None:
        super().__init__(f"{path} is a symbolic link (to {target}); brain does not use a linked {what}",
                         hint=f"replace the link with a real {'folder' if what.endswith('folder') else 'file'} "
                              f"(e.g. `rm {path}`) and run the command again")
        self.path = path
        self.target = target
        self.what = what


class InvalidInput(BrainError):
    """The caller gave something brain cannot accept (bad encoding, bad name...)."""

    exit_code = 2
    kind = "invalid_input"

    def __init__(self, message: str, *, field: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


class YamlRefused(InvalidInput):
    """A YAML text brain will not build (brain.yamlsafe): not valid YAML, or past a bound that keeps
    its cost linear in its size. ``problem`` is one word: syntax, size, depth, nodes, alias, tag,
    scalar, keys; ``source`` names the file or input; ``limit`` is the bound passed (None for syntax, tag).

    A repository or a writer sends the YAML (front matter, contracts, brain.yml), so a few hundred
    bytes of nested aliases must not cost gigabytes: it is refused before anything is built."""

    kind = "yaml_refused"

    def __init__(self, source: str, problem: str, detail: str, limit: int | None = None,
                 line: int | None = None) -> None:
        super().__init__(f"{source}: {detail}", field="yaml",
                         hint="write plain YAML: no anchors or aliases (&a, *a), no tags (!!python...), "
                              "nesting and sizes within the bounds docs/security.md lists")
        self.source = source
        self.problem = problem
        self.limit = limit
        self.line = line


class PathEscape(InvalidInput):
    """A memory path that would leave the brain (absolute, `..`, or a symlink out)."""

    kind = "path_escape"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"path {path!r} is outside the brain",
            field="path",
            hint="use a path relative to .brain/, such as notes/setup.md, without '..'",
        )
        self.path = path


class PathRefused(PathEscape):
    """A memory path the confinement rule refuses (brain.memory.paths): a hidden or settings
    file, runtime/, a symlink, an invisible character, a name too long, a folder, or outside
    the memory areas. ``reason`` is one word: forbidden, hidden, symlink, characters,
    too_long, folder, special, not_memory, empty."""

    kind = "path_refused"

    def __init__(self, path: str, reason: str, detail: str) -> None:
        InvalidInput.__init__(
            self,
            f"memory path {path!r} refused: {detail}",
            field="path",
            hint="memory paths are relative to .brain/, e.g. now.md or notes/setup.md",
        )
        self.path = path
        self.reason = reason


class TooLarge(InvalidInput):
    """A write or request above its size limit.

    ``setting`` is the brain.yml key that governs this limit (the hint names it); None for
    a fixed bound, which the hint then says cannot be raised."""

    kind = "too_large"

    def __init__(self, what: str, size: int, limit: int, setting: str | None = None) -> None:
        super().__init__(
            f"{what} is {size} bytes, above the limit of {limit} bytes",
            field="size",
            hint=(f"shorten it, split it into several notes, or raise {setting} in brain.yml" if setting
                  else "shorten it: this limit is fixed"),
        )
        self.what = what
        self.size = size
        self.limit = limit
        self.setting = setting


class NotFound(BrainError):
    exit_code = 5
    kind = "not_found"

    def __init__(self, what: str, *, hint: str | None = None) -> None:
        super().__init__(f"{what} not found", hint=hint)
        self.what = what


class Conflict(BrainError):
    """A write carried an expected hash that no longer matches the file on disk."""

    exit_code = 6
    kind = "conflict"

    def __init__(self, path: str, expected: str, actual: str | None) -> None:
        super().__init__(
            f"{path} changed since you read it (expected {expected[:12]}, found {(actual or 'no file')[:12]})",
            hint="read the file again, merge your change into the new version, and write with the new hash",
        )
        self.path = path
        self.expected = expected
        self.actual = actual


class BackendError(BrainError):
    """The coordination backend cannot be reached or refused an operation."""

    exit_code = 7
    kind = "backend"


class DamagedStore(BackendError):
    """A SQLite file of brain is damaged (truncated, overwritten, broken pages): says which and how to recover."""

    kind = "damaged_store"

    def __init__(self, path: str, store: str, detail: str, recovery: str) -> None:
        super().__init__(f"the {store} {path} is damaged ({detail})", hint=recovery)
        self.path = path
        self.store = store  # "coordination store" | "search index"
        self.detail = detail


class ClaimLost(BrainError):
    """A claim that is no longer held (expired, released, or its fence moved on): renew refused."""

    exit_code = 6
    kind = "claim_lost"

    def __init__(self, claim: int, state: str) -> None:
        super().__init__(f"claim {claim} is {state}, no longer held",
                         hint="claim the item again: a lost claim is never revived")
        self.claim = claim
        self.state = state


class ReplyRefused(BrainError):
    """A reply to an ask that is already answered or resolved, or that was not asked of this session."""

    exit_code = 6
    kind = "reply_refused"

    def __init__(self, ticket: str, state: str) -> None:
        reason = {"replied": "was already answered", "not_target": "was not asked of this session"}.get(
            state, f"was already resolved ({state}): the asker has moved on")
        super().__init__(f"ask {ticket} {reason}", hint="see `brain inbox` for the asks still waiting on you")
        self.ticket = ticket
        self.state = state


class WaitCycle(BrainError):
    """An ask that would close a cycle of waits (A waits on B waits on A)."""

    exit_code = 6
    kind = "wait_cycle"

    def __init__(self, cycle: list[str]) -> None:
        super().__init__("this ask would close a cycle of waits: " + " -> ".join(cycle),
                         hint="answer the asks waiting on you first (`brain inbox`), or signal instead of asking")
        self.cycle = cycle


class RevisionConflict(BrainError):
    """A live-state write whose expected revision is no longer the current one."""

    exit_code = 6
    kind = "revision_conflict"

    def __init__(self, key: str, expected: int, actual: int | None) -> None:
        super().__init__(f"live state {key!r} is at revision {actual}, not {expected}",
                         hint="read it again and write with the new revision")
        self.key = key
        self.expected = expected
        self.actual = actual


class IntegrationConflict(BrainError):
    """A client config already holds an entry brain would write, and it is not brain's: left untouched."""

    exit_code = 6
    kind = "integration_conflict"

    def __init__(self, file: str, key: str) -> None:
        super().__init__(f"{file} already has a {key!r} entry that brain did not write; nothing was changed",
                         hint="remove or rename that entry yourself, then install again")
        self.file = file
        self.key = key


class TerritoryRefused(BrainError):
    """A memory write by a role that does not own the area (territories in brain.yml): nothing written."""

    exit_code = 8
    kind = "territory"

    def __init__(self, path: str, layer: str, area: str, owner: str, role: str,
                 owner_sessions: list[str] | None = None) -> None:
        where = path if layer == "project" else f"{layer}:{path}"
        owner_sessions = list(owner_sessions or [])
        target = owner_sessions[0] if owner_sessions else f"<a {owner} session>"
        signal = f"brain signal {target} 'please change {where}: ...'"
        super().__init__(f"{where} belongs to the {owner!r} territory ({area}); role {role!r} may not write it",
                         hint=f"ask its owner to make the change with a signal (MCP brain_signal), e.g. {signal}"
                              + ("" if owner_sessions else f"; `brain session list` shows the {owner} sessions"))
        self.path = path
        self.layer = layer
        self.area = area
        self.owner = owner
        self.role = role
        self.owner_sessions = owner_sessions
        self.signal = signal


class Unauthorized(BrainError):
    """A team-server request without a valid bearer token (absent, unknown or revoked)."""

    exit_code = 9
    kind = "unauthorized"

    def __init__(self, reason: str) -> None:
        super().__init__(f"authentication required: {reason}",
                         hint="send `Authorization: Bearer <token>`; `brain token create NAME` makes one")
        self.reason = reason


class Forbidden(BrainError):
    """An authenticated caller acting as someone else (another token's session)."""

    exit_code = 9
    kind = "forbidden"

    def __init__(self, what: str, principal: str, *, argument: str | None = None, tool: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(f"{what} does not belong to token {principal!r}",
                         hint=hint or "leave the session argument empty to act as your own session")
        self.what = what
        self.principal = principal
        self.argument = argument
        self.tool = tool


class SyncConflict(BrainError):
    """`brain sync` met a real merge conflict: stopped with both sides kept, nothing pushed."""

    exit_code = 6
    kind = "sync_conflict"

    def __init__(self, repo: str, files: list[str], local: str, remote: str) -> None:
        super().__init__(f"{repo}: local and remote changes conflict in {', '.join(files)}; "
                         f"nothing was merged or pushed (local {local[:10]}, remote {remote[:10]} both kept)",
                         hint=f"merge by hand: `git -C {repo} merge {remote[:10]}`, resolve, commit, then `brain sync`")
        self.repo = repo
        self.files = files
        self.local = local
        self.remote = remote


class SyncError(BrainError):
    """A git command brain ran (`brain sync`, a commit-on-write, a read for boot or state) failed."""

    exit_code = 7
    kind = "sync"

    def __init__(self, repo: str, command: str, detail: str) -> None:
        super().__init__(f"{repo}: `git {command}` failed: {detail.strip()[:400]}")
        self.repo = repo
        self.command = command
        self.detail = detail.strip()[:2000]


class UntrustedRepository(BrainError):
    """brain refused to run git in a repository it does not know (e.g. a `.git` found inside `.brain/`)."""

    exit_code = 7
    kind = "untrusted_repository"

    def __init__(self, repo: str, reason: str) -> None:
        super().__init__(f"{repo}: not running git here: {reason}",
                         hint="a git repository inside the memory is used only when declared in `sync.satellites` "
                              "(brain.yml); otherwise remove its .git")
        self.repo = repo
        self.reason = reason


class ExportLeak(BrainError):
    """`brain export-template` found an instance or personal value in the kernel: nothing exported."""

    exit_code = 8
    kind = "export_leak"

    def __init__(self, file: str, layer: str) -> None:
        super().__init__(f"kernel file {file} carries a value of the {layer} layer; nothing was exported",
                         hint="move that value to the instance or personal layer and export again")
        self.file = file
        self.layer = layer


class FileSystemError(BrainError):
    """A file or folder brain was told to use cannot be used: missing, a file where a folder is
    needed (or the reverse), unwritable. Mapped at the CLI's edge from the operating system's error,
    so a mistaken path is one line naming it, never a traceback."""

    exit_code = 10
    kind = "file_system"

    def __init__(self, path: str | None, detail: str) -> None:
        super().__init__(f"{path}: {detail}" if path else detail,
                         hint="check the path: it must exist, be a folder where a folder is expected, and be "
                              "writable where brain writes")
        self.path = path
        self.detail = detail


class InputTooLarge(TooLarge):
    """An input (a file, standard input, a FIFO, a request body) refused while it was read, once it
    passed ``limit`` bytes: nothing beyond the limit is held. ``size`` is the exact size when the
    input is a regular file, else None (a stream is not read to its end to learn it)."""

    def __init__(self, what: str, limit: int, setting: str | None = None, *, size: int | None = None) -> None:
        super().__init__(what, size if size is not None else limit + 1, limit, setting)
        if size is None:
            self.message = f"{what} is more than {limit} bytes, above the limit"
        self.size = size


class IncompleteWrite(FileSystemError):
    """An append to one of brain's append-only files (a conversation log, runtime/reports.jsonl,
    runtime/boots.jsonl) that did not complete (disk full, file-size limit, I/O error): the file was
    cut back to its previous length, so no torn line is left and nothing is reported as written."""

    kind = "incomplete_write"

    def __init__(self, path: str, wrote: int, expected: int, reason: str) -> None:
        super().__init__(path, f"wrote {wrote} of {expected} bytes ({reason}); the file was left as it was")
        self.hint = "free space on the disk (or raise the file-size limit) and run the command again"
        self.wrote = wrote
        self.expected = expected
        self.reason = reason


class Busy(BrainError):
    """A caller has as many calls running as it may (``server.token_calls`` per bearer token): refused at once,
    nothing done, so one token's flood cannot hold the workers every other token needs. Retry when one ends."""

    exit_code = 11
    kind = "busy"

    def __init__(self, principal: str, running: int, limit: int) -> None:
        super().__init__(f"token {principal!r} already has {running} calls running (at most {limit} at once)",
                         hint="wait for one of your calls (an ask_agent wait counts) to end, then call again; "
                              "the limit is the setting server.token_calls")
        self.principal = principal
        self.running = running
        self.limit = limit

class DuplicateDecision(BrainError):
    """Several decision records carry one number (an old repository, two branches merged): a change
    to "decision N" is refused rather than made to one of them chosen silently."""

    exit_code = 6
    kind = "duplicate_decision"

    def __init__(self, number: int, files: list[str]) -> None:
        super().__init__(f"decision {number:04d} is held by {len(files)} records: {', '.join(files)}",
                         hint="`brain decisions --renumber` gives all but one of them new numbers (the one "
                              "the upstream or this branch already holds keeps its number)")
        self.number = number
        self.files = list(files)


class SessionHandleRefused(BrainError):
    """A request named its session by a handle (``brain_session_start``) that cannot be used: ``unknown`` (not a
    handle this repository minted, or altered), ``foreign`` (minted for another token: a token acts only as its
    own session) or ``expired`` (its session ended or is gone). Nothing was done."""

    exit_code = 9
    kind = "session_handle"
    _HINTS = {
        "unknown": "pass the handle brain_session_start gave you, unchanged (or leave it out)",
        "foreign": "a handle works only for the token that minted it: call brain_session_start with your own token",
        "expired": "its session has ended: call brain_session_start again for a new session and handle",
    }

    def __init__(self, reason: str) -> None:
        super().__init__(f"session handle refused: {reason}", hint=self._HINTS.get(reason))
        self.reason = reason


class FrozenRecord(AttributeError):
    """An assignment to a field of a frozen record (``brain.records``): a programming error, raised where
    ``dataclasses.FrozenInstanceError`` was, and an ``AttributeError`` as that one is."""
