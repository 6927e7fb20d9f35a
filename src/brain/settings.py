"""The one settings reader: brain.yml, then brain.local.yml, then the environment.

Follows the `.env` pattern: `brain.yml` is versioned and holds project values;
`brain.local.yml` is gitignored and holds what changes per machine (home, backend,
machine name); environment variables win over both. Every key is declared once in
SCHEMA, which is also what `brain settings --docs` prints and the README documents,
so a wrong key or type fails with the file, the key and what was expected.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple
from pathlib import Path

from .errors import SettingsError, UnsafeLink

TYPE_CHECKING = False  # not typing's: importing typing costs 2 ms of a cold CLI start
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Spec", "SCHEMA", "ENVIRONMENT", "Settings", "load_settings", "read_yaml", "brain_home",
           "refuse_linked_state", "VERSIONED_CEILINGS", "refuse_tracked_local_settings"]


class Spec(namedtuple("Spec", "type default doc local_only", defaults=(False,))):
    """One setting: its type (int | str | bool | list[str] | map[str] | map[bool] | services | roles),
    default, what it means, and ``local_only``: a machine value, refused in the versioned brain.yml.
    A named tuple, not a dataclass: the cold boot imports no dataclasses (decision 0038)."""

    __slots__ = ()


SCHEMA: dict[str, Spec] = {
    "version": Spec("int", 1, "Format version of the settings file."),
    "name": Spec("str", None, "Brain name used for broadcasts (`<name>@<machine>`); defaults to the repository folder name."),
    "boot.budget": Spec("int", 8000, "Hard token budget of `brain boot` when `--budget` is not given."),
    "boot.min_budget": Spec("int", 500, "Smallest budget a caller may ask for."),
    "search.enabled": Spec("bool", True, "Use the derived search index (runtime/index.db) for search, boot files and the graph."),
    "search.refresh_on_boot": Spec("bool", True, "A boot with a task brings the code index up to date first (in git: HEAD and `git status`, else a stat of every source file)."),
    "search.boot_files": Spec("int", 40, "How many ranked files the boot's \"Files for this task\" section lists (the first 10 with their reasons, the rest as paths)."),
    "search.boot_beside": Spec("int", 10, "How many files beside the top five (their small folder's files, the files that changed with them) the boot's \"Files for this task\" section names after the ranked ones; 0: none."),
    "search.boot_functions": Spec("int", 20, "How many ranked functions, methods and classes `brain boot --json` lists as `functions`."),
    "boot.code_tokens": Spec("int", 4500, "Most tokens a task boot spends on the source of its ranked functions."),
    "limits.write_bytes": Spec("int", 262144, "Largest memory file a write may produce, in bytes."),
    "limits.now_bytes": Spec("int", 16384, "Largest `now.md`, in bytes: it goes whole into every boot."),
    "modules": Spec("list[str]", [], "Globs of module roots; when set they replace module discovery."),
    "decisions.dir": Spec("str", ".brain/decisions", "Folder of decision records, relative to the repository."),
    "cards.exposes_tokens": Spec("int", 2500, "Token budget of a card's Exposes section; detail is lowered step by step to fit."),
    "cards.max_file_bytes": Spec("int", 1000000, "Files larger than this are listed in their card as not read."),
    "cards.split_bytes": Spec("int", 160000, "A Python/TS package with more source bytes than this is split into module cards..."),
    "cards.split_min_bytes": Spec("int", 12000, "...one card for each subpackage with at least this many source bytes."),
    "cards.workers": Spec("int", 0, "Worker processes that read files on a large `brain map` (0 = one per core, 1 = none)."),
    "features": Spec("map[bool]", {}, "Feature flags, `name: true|false`; agent profiles may require one."),
    "roles": Spec("roles", {}, "Per role: `features` it turns on or off and `tiers` of agent profiles it loads."),
    "services": Spec("services", [], "Services shown by `brain state`: a list of `{name, port, host}`."),
    "coord.stall_seconds": Spec("int", 120, "A session without a heartbeat for this many seconds is Stalled (asks to it resolve as silent)."),
    "coord.gone_seconds": Spec("int", 900, "A session without a heartbeat for this many seconds is Gone (no broadcasts, checkpoint passes to a successor)."),
    "coord.prune_idle_seconds": Spec("int", 3600, "A session that never did anything (no claim, signal, ask, checkpoint or live-state write: a health check, a tool listing) is deleted once it has been gone or ended this many seconds (0 = never)."),
    "coord.prune_gone_seconds": Spec("int", 604800, "Any session gone or ended this many seconds is deleted from the session list (its audit history stays; 0 = never)."),
    "coord.claim_ttl": Spec("int", 1800, "Default lease of a claim, in seconds."),
    "coord.signal_ttl": Spec("int", 604800, "Signals older than this many seconds are pruned."),
    "coord.signal_max": Spec("int", 500, "At most this many signals are kept per recipient (oldest pruned)."),
    "coord.ask_timeout": Spec("int", 600, "Absolute ask timeout in seconds (finite, at most 86400); BRAIN_ASK_TIMEOUT overrides, 0 = no override."),
    "livestate.ttl": Spec("int", 604800, "Live-state entries not written for this many seconds are pruned."),
    "livestate.max_keys": Spec("int", 200, "At most this many live-state keys are kept (least recently written pruned)."),
    "log.rotate_bytes": Spec("int", 8388608, "A conversation's live `log.jsonl` is rotated when it reaches this many bytes (0 = never by size)."),
    "log.rotate_days": Spec("int", 30, "...or when its first turn is this many days old (0 = never by age)."),
    "log.retention_days": Spec("int", 90, "Rotated log segments not written for this many days are deleted (0 = keep forever); `brain log --prune` deletes local handoffs not updated that long too."),
    "handoff.max_bytes": Spec("int", 4096, "Size cap of each thread handoff, `handoffs/local/<thread>.md` (at least 1024); oldest detail is distilled away first."),
    "handoff.max_threads": Spec("int", 2, "How many thread handoffs of the session the boot's handoff slot offers."),
    "secrets.redact": Spec("bool", True, "Replace secret shapes (API keys, tokens, private keys, passwords in URLs, assigned secrets) with [REDACTED:kind] before any store keeps the text (memory files, log lines, commit messages, coordination rows)."),
    "secrets.patterns": Spec("list[str]", [], "Extra regular expressions redacted like the built-in secret shapes (kind `custom`; a group named `secret` narrows the replaced part). Linear by construction: every repeat bounded (`{20,64}`, not `+` or `*`), no back-reference, and at most 4096 steps per match attempt (longest match × backtracking choices; a possessive repeat such as `{20,64}+` gives none); others are refused."),
    "territories": Spec("map[str]", {}, "Scribe territories: `area: role`, an area being a memory path or glob (`kernel:` etc. for a layer); writes by another role are refused."),
    "sync.commit_on_write": Spec("bool", False, "Commit each memory write in the git repository that owns the path (a declared satellite, its layer's repository, or the project), naming the writer and the reason."),
    "sync.satellites": Spec("list[str]", [], "Folders inside the memory that are git repositories of their own (`notes/team`, `.` for `.brain/` itself, `kernel:agents/shared` in a layer); any other `.git` inside the memory is never run."),
    "server.max_request_bytes": Spec("int", 1048576, "Largest HTTP request body the MCP/team server accepts (413 above)."),
    "server.allowed_hosts": Spec("list[str]", [], "Extra Host header names `brain serve --http` and `brain ui` answer (`name` any port, `name:port` that port), e.g. the name a reverse proxy forwards; the bind address and, for loopback binds, localhost/127.0.0.1/[::1] are always allowed."),
    "server.header_timeout": Spec("int", 10, "Seconds an HTTP client has to send a request's line and headers (from the connection's opening or the previous response); slower: 408 and the connection closed (at most 300)."),
    "server.body_timeout": Spec("int", 30, "Seconds an HTTP client has to send a request's whole body once its headers are in (a total, not per byte); slower: 408 and closed (at most 600). An answer the client stops reading this long is abandoned."),
    "server.connections_per_client": Spec("int", 128, "Open HTTP connections one client address may hold on `brain serve --http` and `brain ui` (per server process); more are answered 503 and closed (1 to 1024; behind a reverse proxy every client has the proxy's address)."),
    "server.token_calls": Spec("int", 8, "MCP tool calls one bearer token may have running at once on the team server (per server process; an ask_agent wait counts, and holds no worker thread); more are refused with the error `busy` (1 to 256)."),
    "state.allowed_hosts": Spec("list[str]", [], "Hosts other than loopback that `brain state` may probe for `services` (local only: a versioned brain.yml never chooses where brain connects). Env: BRAIN_STATE_HOSTS (comma-separated).", local_only=True),
    "home": Spec("str", None, "User-level state folder (kernel, instance, personal layers). Env: BRAIN_HOME.", local_only=True),
    "backend": Spec("str", "sqlite", "Coordination backend: `sqlite` or a `postgresql://` URL. Env: BRAIN_BACKEND.", local_only=True),
    "machine": Spec("str", None, "Machine name used in session ids; defaults to the host name. Env: BRAIN_MACHINE.", local_only=True),
}

ENVIRONMENT: dict[str, str] = {
    "BRAIN_HOME": "Relocates all user-level state (default `~/.brain`). Tests point it at a temporary folder.",
    "BRAIN_BACKEND": "Coordination backend, overriding `backend`: `sqlite` or a `postgresql://` URL.",
    "BRAIN_MACHINE": "Machine name used in session ids, overriding `machine`.",
    "BRAIN_ASK_TIMEOUT": "Absolute ask timeout in seconds, 0 to 86400 (one day); 0 means no override (the default stands).",
    "BRAIN_LOG": "Debug logging: a level (`debug`, `info`) to stderr, or `debug:/path/file.log`. Never stdout.",
    "BRAIN_DIR": "The `.brain/` folder to use instead of searching upwards from the current folder.",
    "BRAIN_SESSION": "Default `--session` of the coordination commands (claim, signal, ask, reply...); the writer `brain map` and `report-done` name in their commit (sync.commit_on_write).",
    "BRAIN_ROLE": "Role of the session `brain serve` starts at a connection's handshake (default: the client's name, else `agent`), and of CLI writes without `--role`; the commit writer of `brain map` and `report-done` without BRAIN_SESSION.",
    "BRAIN_STATE_HOSTS": "Comma-separated hosts other than loopback that `brain state` may probe for `services` (added to `state.allowed_hosts`).",
    "BRAIN_PLUGIN_COMMAND": "The command line brain's Claude Code and Codex plugins run brain with, instead of a `brain` on PATH, uvx or pipx (read by the plugin's launcher, plugins/brain/scripts/brain-run).",
}

_TIERS = ("always", "hot", "warm", "cold")
SERVICES_MAX = 64  # entries of `services`: `brain state` probes each


def brain_home(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = env.get("BRAIN_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".brain"


SETTINGS_MAX_BYTES = 1_048_576  # a settings file is a few hundred bytes; a cloned one must not be read whole

# Ceilings of the versioned brain.yml. A cloned repository writes that file, so it must not be able to
# raise a limit that protects the machine (a 2**53-byte request body, ten thousand map workers, a claim
# that never ends): each size, count and time limit stays at most this there. brain.local.yml is the
# user's own and may go higher (still at most 2**53).
VERSIONED_CEILINGS: dict[str, int] = {
    "boot.budget": 200_000,
    "boot.min_budget": 200_000,
    "boot.code_tokens": 200_000,
    "search.boot_files": 1_000,
    "search.boot_functions": 1_000,
    "search.boot_beside": 1_000,
    "limits.write_bytes": 4_194_304,
    "limits.now_bytes": 1_048_576,
    "cards.exposes_tokens": 100_000,
    "cards.max_file_bytes": 16_777_216,
    "cards.workers": 64,
    "coord.stall_seconds": 86_400,
    "coord.gone_seconds": 2_592_000,
    "coord.claim_ttl": 604_800,
    "coord.signal_ttl": 7_776_000,
    "coord.signal_max": 10_000,
    "coord.ask_timeout": 86_400,
    "coord.prune_idle_seconds": 2_592_000,
    "coord.prune_gone_seconds": 31_536_000,
    "livestate.ttl": 7_776_000,
    "livestate.max_keys": 10_000,
    "log.rotate_bytes": 268_435_456,
    "log.rotate_days": 365,
    "log.retention_days": 3_650,
    "handoff.max_bytes": 65_536,
    "handoff.max_threads": 20,
    "server.max_request_bytes": 16_777_216,
    "server.header_timeout": 300,          # these four are also bounded where the server reads them
    "server.body_timeout": 600,
    "server.connections_per_client": 1_024,
    "server.token_calls": 256,
    # how many entries a list or mapping may hold (each is checked on every write, boot or request)
    "modules": 1_000,
    "territories": 1_000,
    "secrets.patterns": 100,
    "sync.satellites": 100,
    "server.allowed_hosts": 100,
    "features": 1_000,
    "roles": 1_000,
}


# Limits where 0 means "never" (no rotation, no pruning, keep forever): above every ceiling.
ZERO_MEANS_UNBOUNDED = frozenset({"log.rotate_bytes", "log.rotate_days", "log.retention_days",
                                  "coord.prune_idle_seconds", "coord.prune_gone_seconds"})


def _check_ceiling(file: str, key: str, value: Any) -> None:
    """Refuse a value of the versioned brain.yml above its ceiling (VERSIONED_CEILINGS), 0 included where
    0 lifts the limit altogether (ZERO_MEANS_UNBOUNDED)."""
    ceiling = VERSIONED_CEILINGS.get(key)
    if ceiling is None or value is None:
        return
    entries = isinstance(value, (list, dict))
    size = len(value) if entries else value
    if isinstance(size, int) and (size > ceiling or (size == 0 and key in ZERO_MEANS_UNBOUNDED)):
        from .errors import SettingAboveCeiling

        raise SettingAboveCeiling(file, key, size, ceiling, entries)


def read_yaml(path: Path) -> dict:
    """Read a YAML mapping; an empty file is an empty mapping. Errors name the file.

    Parsed by the one bounded reader (brain.yamlsafe: no anchors or aliases, bounded nesting and size),
    and read no further than ``SETTINGS_MAX_BYTES``: a cloned repository chooses this file."""
    from .errors import YamlRefused
    from .yamlsafe import load_yaml

    try:
        with open(path, "rb") as handle:
            raw = handle.read(SETTINGS_MAX_BYTES + 1)
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        raise SettingsError(str(path), None, "a settings file", "a folder") from None
    except OSError as exc:
        raise SettingsError(str(path), None, "a readable file", exc.strerror or type(exc).__name__) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(str(path), None, "UTF-8 text", f"invalid byte at offset {exc.start}") from None
    if len(raw) > SETTINGS_MAX_BYTES:
        raise SettingsError(str(path), None, f"a settings file of at most {SETTINGS_MAX_BYTES} bytes", "a larger file")
    try:
        data = load_yaml(text, str(path))
    except YamlRefused as exc:
        if exc.problem == "syntax":
            where = f"line {exc.line}" if exc.line else "unknown position"
            raise SettingsError(str(path), None, "valid YAML", f"a syntax error at {where}") from None
        raise SettingsError(str(path), None, "plain YAML within brain's bounds (no anchors, aliases or tags)",
                            exc.message) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(str(path), None, "a mapping of settings", type(data).__name__)
    return data


def _flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    """Flatten nested mappings to dotted keys, stopping at keys SCHEMA declares whole."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            flat[f"{prefix}{key}"] = value
            continue
        dotted = f"{prefix}{key}"
        if dotted in SCHEMA or not isinstance(value, dict):
            flat[dotted] = value
        else:
            nested = _flatten(value, dotted + ".")
            flat.update(nested if nested else {dotted: value})
    return flat


def _check(file: str, key: str, spec: Spec, value: Any) -> Any:
    def bad(expected: str) -> SettingsError:
        return SettingsError(file, key, expected, f"{type(value).__name__} {value!r}"[:80])

    kind = spec.type
    if value is None and spec.default is None:
        return None
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**53:
            raise bad("a non-negative integer up to 2**53")
    elif kind == "str":
        if not isinstance(value, str):
            raise bad("a string")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
    elif kind == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
    elif kind == "map[str]":
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise bad("a mapping of name: text")
    elif kind == "map[bool]":
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
            raise bad("a mapping of name: true|false")
    elif kind == "services":
        if not isinstance(value, list):
            raise bad("a list of {name, port, host}")
        if len(value) > SERVICES_MAX:  # each is a connection `brain state` makes: a clone must not make hundreds
            raise bad(f"at most {SERVICES_MAX} services")
        for i, item in enumerate(value):
            if not isinstance(item, dict) or set(item) - {"name", "port", "host"}:
                raise SettingsError(file, f"{key}[{i}]", "a mapping with keys name, port, host", repr(item)[:80])
            if not isinstance(item.get("name"), str):
                raise SettingsError(file, f"{key}[{i}].name", "a string", repr(item.get("name")))
            port = item.get("port")
            if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                raise SettingsError(file, f"{key}[{i}].port", "a port number 1-65535", repr(port))
            if not isinstance(item.get("host", "127.0.0.1"), str):
                raise SettingsError(file, f"{key}[{i}].host", "a host name", repr(item.get("host")))
    elif kind == "roles":
        if not isinstance(value, dict):
            raise bad("a mapping of role: {features, tiers}")
        for role, conf in value.items():
            if not isinstance(conf, dict) or set(conf) - {"features", "tiers"}:
                raise SettingsError(file, f"{key}.{role}", "a mapping with keys features, tiers", repr(conf)[:80])
            feats = conf.get("features", {})
            if not isinstance(feats, dict) or not all(isinstance(v, bool) for v in feats.values()):
                raise SettingsError(file, f"{key}.{role}.features", "a mapping of name: true|false", repr(feats)[:80])
            tiers = conf.get("tiers", list(_TIERS[:3]))
            if not isinstance(tiers, list) or any(t not in _TIERS for t in tiers):
                raise SettingsError(file, f"{key}.{role}.tiers", f"a list drawn from {', '.join(_TIERS)}", repr(tiers)[:80])
    return value


def _validate(file: str, data: dict, *, local: bool) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in _flatten(data).items():
        spec = SCHEMA.get(key)
        if spec is None:
            known = ", ".join(sorted(SCHEMA))
            raise SettingsError(file, key, f"one of the known keys ({known})", "an unknown key")
        if spec.local_only and not local:
            raise SettingsError(file, key, "this machine value in brain.local.yml or the environment, not the versioned brain.yml")
        values[key] = _check(file, key, spec, value)
        if not local:
            _check_ceiling(file, key, values[key])
    return values


class Settings:
    """Validated settings of one brain, with the source of each value kept for `brain doctor`.
    (A plain class, not a dataclass: the cold boot imports no dataclasses, decision 0038.)"""

    def __init__(self, values: dict[str, Any] | None = None, sources: dict[str, str] | None = None):
        self.values: dict[str, Any] = {} if values is None else values
        self.sources: dict[str, str] = {} if sources is None else sources

    def __eq__(self, other) -> bool:
        if not isinstance(other, Settings):
            return NotImplemented
        return (self.values, self.sources) == (other.values, other.sources)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Settings(values={self.values!r}, sources={self.sources!r})"

    def get(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        return SCHEMA[key].default

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def bounded(self, key: str, low: int, high: int) -> int:
        """An int setting that must lie in [low, high] where it is used (a limit a server depends on):
        outside it, ``SettingsError`` naming the file or variable it came from."""
        value = self.get(key)
        if not low <= value <= high:
            raise SettingsError(self.sources.get(key, "default"), key, f"an integer from {low} to {high}", repr(value))
        return value

    @property
    def home(self) -> Path:
        return Path(self.get("home")).expanduser() if self.get("home") else brain_home({})

    @property
    def machine(self) -> str:
        raw = self.get("machine") or os.uname().nodename.split(".")[0] or "localhost"
        return re.sub(r"[^A-Za-z0-9_-]+", "-", raw)

    def feature(self, name: str, role: str | None = None) -> bool:
        flags = dict(self.get("features"))
        if role:
            flags.update(self.get("roles").get(role, {}).get("features", {}))
        return bool(flags.get(name, False))

    def tiers_for(self, role: str | None) -> tuple[str, ...]:
        conf = self.get("roles").get(role or "", {})
        return tuple(conf.get("tiers", ("always", "hot", "warm")))


SETTINGS_FILES = ("brain.yml", "brain.local.yml")


def refuse_linked_state(brain_dir: Path) -> None:
    """Refuse a brain whose settings files, ``runtime/`` folder or anything directly in it is a link.

    A cloned repository may commit symbolic links: a linked ``brain.yml`` would choose what brain
    reads as its settings (``/etc/passwd``, a file the repository does not own), a linked
    ``runtime/`` or ``runtime/brain.db``, ``write.lock``, ``logs``... where brain writes its
    database, lock and conversation logs. Checked with ``lstat`` before anything is read or
    written (three stats and one listing of runtime/)."""
    for name in SETTINGS_FILES:
        _refuse_link(brain_dir / name, "settings file")
    runtime = brain_dir / "runtime"
    _refuse_link(runtime, "runtime folder")
    try:
        entries = list(os.scandir(runtime))
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise SettingsError(str(runtime), None, "a folder (brain's runtime state) or nothing", "a file") from None
    except OSError:
        return  # unreadable: the command that needs it reports it
    for entry in entries:
        if entry.is_symlink():
            _refuse_link(Path(entry.path), "runtime file")


def _refuse_link(path: Path, what: str) -> None:
    if path.is_symlink():
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        raise UnsafeLink(str(path), target, what)


def _git_index_stamp(brain_dir: Path) -> list:
    """[size, mtime] of the git index of the work tree holding ``brain_dir`` ([None, None] without one):
    two stats, so a boot whose settings are cached learns that nothing was staged since the last check."""
    from .gitsafe import find_worktree_root

    root = find_worktree_root(brain_dir)
    if root is None:
        return [None, None]
    dot_git = root / ".git"
    index = dot_git / "index"
    if dot_git.is_file():  # a linked worktree or submodule: `gitdir: <path>`
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return [None, None]
        if line.startswith("gitdir:"):
            index = (root / line[len("gitdir:"):].strip()) / "index"
    try:
        st = index.stat()
    except OSError:
        return [None, None]
    return [st.st_size, st.st_mtime_ns]


def refuse_tracked_local_settings(brain_dir: Path) -> None:
    """Refuse a ``brain.local.yml`` that git tracks: it came with a clone, written by someone else.

    The file holds this machine's values — ``backend`` (where every signal, ask, checkpoint and claim
    is sent), ``home``, ``machine`` — and is gitignored; a committed one (``git add -f``) would let the
    repository choose them. One ``git ls-files`` through the pinned runner (brain.gitsafe), run only when
    the file exists and the index changed since the last check (the settings cache keeps the answer)."""
    from .errors import BrainError, TrackedLocalSettings
    from .gitsafe import project_repo

    path = brain_dir / "brain.local.yml"
    try:
        repo = project_repo(brain_dir, timeout=10.0)
        if repo is None:
            return
        rel = os.path.relpath(path.resolve(), repo.root)
        found = repo.run("ls-files", "-z", "--cached", "--", rel, check=False)
    except (BrainError, OSError, ValueError):
        return  # no git to ask: the file is the user's as far as anyone can tell
    if found.returncode == 0 and found.stdout.strip("\0").strip():
        raise TrackedLocalSettings(str(path), rel)


def _read_files(brain_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """Validated values of brain.yml and brain.local.yml, in that order.

    Parsing YAML costs more than the rest of a CLI boot, so the validated values are
    cached in runtime/ keyed by each file's size and mtime; any change re-reads them.
    The cache is derived: deleting it (or all of runtime/) loses nothing.
    """
    refuse_linked_state(brain_dir)
    names = (("brain.yml", False), ("brain.local.yml", True))
    stamps = []
    for name, _ in names:
        try:
            st = (brain_dir / name).stat()
            stamps.append([name, st.st_size, st.st_mtime_ns])
        except FileNotFoundError:
            stamps.append([name, None, None])
    if stamps[1][1] is not None:  # a brain.local.yml: whether git tracks it is known for this index state
        stamps.append(["git-index", *_git_index_stamp(brain_dir)])
    stamps.append(["ceilings", VERSIONED_CEILINGS])  # values cached under other ceilings are checked again
    cache = brain_dir / "runtime" / "settings.cache.json"
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("stamps") == stamps and cached.get("schema") == sorted(SCHEMA):
            return [(name, values) for name, values in cached["files"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    if stamps[1][1] is not None:
        refuse_tracked_local_settings(brain_dir)
    files = [(name, _validate(str(brain_dir / name), read_yaml(brain_dir / name), local=local)) for name, local in names]
    try:
        from .memory.private import open_private

        tmp = cache.with_name(f".settings.cache.{os.getpid()}.tmp")
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as handle:  # 0600
            handle.write(json.dumps({"stamps": stamps, "schema": sorted(SCHEMA), "files": files}))
        os.replace(tmp, cache)
    except OSError:
        pass  # no runtime/ yet, or read-only: just parse next time
    return files


def load_settings(brain_dir: Path | None, env: dict[str, str] | None = None) -> Settings:
    """Read brain.yml, brain.local.yml and the environment into one validated Settings."""
    env = dict(os.environ) if env is None else env
    settings = Settings()
    if brain_dir is not None:
        for name, values in _read_files(brain_dir):
            settings.values.update(values)
            settings.sources.update({k: name for k in values})
    if env.get("BRAIN_HOME"):
        settings.values["home"] = env["BRAIN_HOME"]
        settings.sources["home"] = "BRAIN_HOME"
    if not settings.values.get("home"):
        settings.values["home"] = str(brain_home(env))
        settings.sources.setdefault("home", "default")
    for var, key in (("BRAIN_BACKEND", "backend"), ("BRAIN_MACHINE", "machine")):
        if env.get(var):
            settings.values[key] = env[var]
            settings.sources[key] = var
    if env.get("BRAIN_STATE_HOSTS"):  # a machine's choice, like state.allowed_hosts in brain.local.yml
        extra = [h.strip() for h in env["BRAIN_STATE_HOSTS"].split(",") if h.strip()]
        settings.values["state.allowed_hosts"] = [*settings.get("state.allowed_hosts"), *extra]
        settings.sources["state.allowed_hosts"] = "BRAIN_STATE_HOSTS"
    backend = settings.get("backend")
    if backend != "sqlite" and not str(backend).startswith(("postgresql://", "postgres://")):
        from .security.redact import mask_dsn

        raise SettingsError(settings.sources.get("backend", "brain.local.yml"), "backend", "`sqlite` or a postgresql:// URL",
                            repr(mask_dsn(backend)))
    return settings
