"""Bearer tokens of the team server, stored hashed.

A token is ``brn_`` + 32 random bytes (url-safe base64): with that much entropy a
plain sha256 is enough to store it (a slow hash such as scrypt protects guessable
passwords, not random keys), and verifying costs one hash per request. The token
itself is shown once, by ``create``, and never stored.

The store is a small JSON file in ``runtime/`` (gitignored, machine-local: the
server's), replaced atomically under an advisory lock; a running server re-reads
it when it changes, so a revocation takes effect at the next request. Each record
also remembers the coordination sessions started for the token, which are the
only sessions it may act as (besides an optional ``session_prefix``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets as _random
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable

from ..errors import InvalidInput, NotFound

__all__ = ["TokenRecord", "TokenStore", "hash_token", "TOKEN_PREFIX", "MAX_SESSIONS"]

TOKEN_PREFIX = "brn_"
MAX_SESSIONS = 50  # sessions remembered per token (oldest forgotten)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class TokenRecord:
    name: str
    hash: str
    role: str | None = None
    machine: str | None = None
    session_prefix: str | None = None
    created: float = 0.0
    revoked: float | None = None
    sessions: list[str] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)  # user-level layers served to it (instance, personal)

    @property
    def active(self) -> bool:
        return self.revoked is None

    def public(self) -> dict:
        """Everything but the hash."""
        data = asdict(self)
        data.pop("hash")
        data["active"] = self.active
        return data


_FIELDS = tuple(f.name for f in fields(TokenRecord))


def _fields_of(record: TokenRecord) -> dict:
    """A record's fields with its lists copied: ``asdict`` without its deep copy of every value (a bound
    connection rewrites every token's record, 64 tokens each of 64 handshakes in bench/bench_team.py)."""
    data = {name: getattr(record, name) for name in _FIELDS}
    data["sessions"], data["layers"] = list(record.sessions), list(record.layers)
    return data


class _Records(list):
    """The records read under the store's lock; written back when the lock is released unless ``changed``
    was cleared (a handshake that found its session alive changes nothing)."""

    changed = True


class TokenStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._stamp: tuple | None = None
        self._records: list[TokenRecord] = []
        self._by_hash: dict[str, TokenRecord] = {}
        self._guard = threading.Lock()

    # -- file ---------------------------------------------------------------------
    def _stat(self) -> tuple | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> list[TokenRecord]:
        stamp = self._stat()
        with self._guard:
            if stamp == self._stamp and (stamp is not None or not self._records):
                return self._records
            records = []
            if stamp is not None:
                try:
                    raw = json.loads(self.path.read_text(encoding="utf-8"))
                    records = [TokenRecord(**item) for item in raw.get("tokens", [])]
                except (ValueError, TypeError, KeyError) as exc:
                    raise InvalidInput(f"{self.path} is damaged ({exc}); no token is accepted until it is fixed",
                                       field="tokens") from None
            self._records = records
            self._by_hash = {r.hash: r for r in records if r.active}
            self._stamp = stamp
            return records

    @contextlib.contextmanager
    def _locked(self):
        from ..memory.files import file_lock

        with file_lock(self.path.with_name(self.path.name + ".lock")):  # 0600 in a 0700 folder
            self._stamp = None  # re-read under the lock
            records = _Records(TokenRecord(**_fields_of(r)) for r in self._load())
            yield records
            if records.changed:
                self._save(records)

    def _save(self, records: list[TokenRecord]) -> None:
        # one record a line: readable, and json's C encoder (``indent`` takes its pure-Python one, 20 ms for
        # 64 tokens: a server paid it on every connection's handshake that started a session)
        lines = ",\n  ".join(json.dumps(_fields_of(r), sort_keys=True) for r in records)
        data = '{"tokens": [\n  ' + lines + '\n], "version": 1}\n'
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)  # hashes only, still private
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        self._stamp = None

    # -- queries ------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether tokens were ever created here: the server then requires one on every request."""
        return self.path.is_file()

    def list(self) -> list[TokenRecord]:
        return list(self._load())

    def get(self, name: str) -> TokenRecord:
        for record in self._load():
            if record.name == name and record.active:
                return record
        raise NotFound(f"active token {name!r}", hint="`brain token list` shows the tokens")

    def verify(self, token: str | None) -> TokenRecord | None:
        """The active record of ``token``, or None (absent, unknown, malformed or revoked)."""
        if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        self._load()
        return self._by_hash.get(hash_token(token))

    # -- changes ------------------------------------------------------------------
    def create(self, name: str, *, role: str | None = None, machine: str | None = None,
               session_prefix: str | None = None, layers: list[str] | tuple[str, ...] = ()
               ) -> tuple[str, TokenRecord]:
        """A new token for ``name``: returns (the token, shown this once, and its record).

        ``layers`` names the user-level layers (``instance``, ``personal``) the token may read
        and write; without them those layers are never served to it (the kernel is readable by
        every token, writable only by the ``kernel-scribe`` role)."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise InvalidInput(f"token name {name!r} must be 1-64 letters, digits, '.', '_' or '-'", field="name")
        for value, what in ((role, "role"), (machine, "machine")):
            if value is not None and not re.match(r"^[A-Za-z0-9_-]{1,40}$", value):
                raise InvalidInput(f"{what} {value!r} must be 1-40 letters, digits, '-' or '_'", field=what)
        layers = sorted(set(layers or ()))
        for layer in layers:
            if layer not in ("instance", "personal"):
                raise InvalidInput(f"--layer {layer!r}: a token may be given the instance or personal layer",
                                   field="layers")
        if session_prefix is not None and not session_prefix.strip():
            raise InvalidInput("--session-prefix must not be empty", field="session_prefix")
        from ..security.redact import refuse_secret_name

        for value, what in ((name, "name"), (role, "role"), (machine, "machine"), (session_prefix, "session_prefix")):
            refuse_secret_name(None, value, what)  # names kept in tokens.json and in every session id they make
        token = TOKEN_PREFIX + base64.urlsafe_b64encode(_random.token_bytes(32)).decode("ascii").rstrip("=")
        record = TokenRecord(name=name, hash=hash_token(token), role=role, machine=machine or name,
                             session_prefix=session_prefix, created=time.time(), layers=list(layers))
        with self._locked() as records:
            if any(r.name == name and r.active for r in records):
                raise InvalidInput(f"an active token named {name!r} exists", field="name",
                                   hint=f"revoke it first (`brain token revoke {name}`) or choose another name")
            records.append(record)
        return token, record

    def revoke(self, name: str) -> TokenRecord:
        with self._locked() as records:
            for record in records:
                if record.name == name and record.active:
                    record.revoked = time.time()
                    return record
            raise NotFound(f"active token {name!r}", hint="`brain token list` shows the tokens")

    def delete(self, name: str) -> list[TokenRecord]:
        """Forget every record named ``name`` (active or revoked): the token stops working and leaves the list."""
        with self._locked() as records:
            gone = [r for r in records if r.name == name]
            if not gone:
                raise NotFound(f"token {name!r}", hint="`brain token list` shows the tokens")
            records[:] = [r for r in records if r.name != name]
        return gone

    def leave(self) -> list[TokenRecord]:
        """Back to local mode: delete the store, so no token is needed (and none accepted) any more.

        Returns the records that were in it. A server bound beyond loopback keeps requiring a
        token (team_app), so leaving never opens one to the network; restart it on 127.0.0.1."""
        with self._locked() as records:
            gone = list(records)
        self.path.unlink(missing_ok=True)
        self.path.with_name(self.path.name + ".lock").unlink(missing_ok=True)
        self._stamp, self._records, self._by_hash = None, [], {}
        return gone

    def session_for(self, name: str, alive: Callable[[str], bool], start: Callable[[], str]) -> str:
        """The session ``name`` acts as: its last session if ``alive`` says so, else a new one from ``start``.

        Decided under the store's file lock, so the worker processes of one server (each with its
        own cache) agree on one session per token instead of each starting its own.
        """
        with self._locked() as records:
            record = next((r for r in records if r.name == name and r.active), None)
            if record is None:
                raise NotFound(f"active token {name!r}")
            if record.sessions and alive(record.sessions[-1]):
                records.changed = False  # nothing to write back
                return record.sessions[-1]
            session = start()
            record.sessions = record.sessions[-(MAX_SESSIONS - 1):] + [session]
            return session

    def owns(self, name: str, session: str) -> bool:
        for record in self._load():
            if record.name == name and record.active:
                return session in record.sessions or bool(
                    record.session_prefix and session.startswith(record.session_prefix))
        return False
