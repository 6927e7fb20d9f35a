"""Every place brain keeps something on disk, and how a secret is kept out of it.

Why a registry: "every store redacts on its write path" is a property, and a property
needs the list it holds over. ``tests/test_stores_every_store.py`` writes a known secret
through each public write path, then scans every file under `.brain/` and `$BRAIN_HOME`
and every database row; a file under `runtime/` that no entry here names fails that
test, so a new store must be registered (and say how it keeps secrets out) before it
can ship. ``brain.memory.private`` keeps the same stores' modes private.

``how`` is one of:

- ``redacted``: text passes the brain's redactor on the store's own write path, and the
  names it keeps (files, threads, session ids, keys) are refused when they hold a secret
  shape (``security.redact.refuse_secret_name``);
- ``derived``: rebuilt from files already on disk (memory files, which are redacted, the
  repository's code, the settings files); deleting it loses nothing;
- ``copy``: an exact copy of a file of the user's own (a client's configuration, kept so
  uninstall restores it byte for byte): private, never redacted, never shown to an agent;
- ``no text``: locks, stamps and hashes.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

__all__ = ["Store", "STORES", "store_of"]


@dataclass(frozen=True)
class Store:
    name: str
    root: str                   # "runtime" (.brain/runtime/), "brain" (.brain/ outside runtime/), "home" ($BRAIN_HOME)
    patterns: tuple[str, ...]   # POSIX paths relative to the root, fnmatch patterns (``*`` crosses folders)
    how: str                    # redacted | derived | copy | no text
    writer: str                 # the module whose write path keeps it


_TEMP = (".*.tmp", "*/.*.tmp")  # an atomic write's temporary file (its data is the store's, redacted the same)

STORES: tuple[Store, ...] = (
    Store("memory files", "brain", ("*",), "redacted", "memory.files.MemoryStore.write (Brain.write), decisions"),
    Store("layers", "home", ("*",), "redacted", "memory.files.MemoryStore.write (Brain.write layer=...), memory.layers"),
    Store("coordination", "runtime", ("brain.db", "brain.db-wal", "brain.db-shm", "brain.db-journal"), "redacted",
          "coord.service.Coordinator._clean / _audit, livestate.store.LiveState.set_in"),
    Store("conversation logs", "runtime",
          ("conversations/index.json", "conversations/.index.lock", "conversations/*/index.json",
           "conversations/*/.index.lock", "conversations/*/log.jsonl",
           "conversations/*/log.*.jsonl", "conversations/*/.lock", "conversations/*/parties.json",
           "conversations/*/handoff.json", "conversations/*/checkout.json", "conversations/*/.migrate.lock",
           "conversations/*/.migrate-*.tmp", *(f"conversations/{t}" for t in _TEMP)), "redacted",
          "log.store.ConversationLog.redacted / append, log.handoff, log.shared (the shared store's "
          "conversations/<checkout id>/: the same files, moved or written there, and the worktree's name, "
          "branch and path)"),
    Store("boot records", "runtime", ("boots.jsonl", "boots.jsonl.1"), "redacted", "boot.record.record_boot"),
    Store("memory uses", "runtime", ("uses.jsonl", "uses.jsonl.1"), "no text",
          "memory.usage.record_use (memory paths, which the path rule keeps free of secret shapes, and times)"),
    Store("reports", "runtime", ("reports.jsonl",), "redacted", "cards.report_done"),
    Store("hook states", "runtime", ("hooks/claude-*.json", "hook-locks/claude-*.lock", *(f"hooks/{t}" for t in _TEMP)), "redacted",
          "hooks.claude._save_state"),
    Store("tokens", "runtime", ("tokens.json", "tokens.json.lock", ".tokens.json.*.tmp"), "no text",
          "team.tokens.TokenStore (hashes; names with a secret shape are refused)"),
    Store("search index", "runtime", ("index.db", "index.db-wal", "index.db-shm", "index.db-journal", "index.db.lock",
                                      "index.db.rebuild-*"), "derived", "search.index.SearchIndex"),
    Store("git status index", "runtime", ("git-status.index.*",), "derived",
          "search.gitstatus (a copy of .git/index, where git keeps its untracked cache: paths and stat data, no file text)"),
    Store("card caches", "runtime", ("cards/files.json", "cards/layout.json", "cards/facts/*.pkl",
                                     *(f"cards/{t}" for t in _TEMP)), "derived", "cards.mapper.Mapper"),
    Store("settings cache", "runtime", ("settings.cache.json", ".settings.cache.*.tmp"), "derived",
          "settings.load_settings"),
    Store("install manifests", "runtime", ("installs/*.json", *(f"installs/{t}" for t in _TEMP)), "copy",
          "hooks.claude_install, hooks.codex"),
    Store("import markers", "runtime", ("imports/*.json", "imports/*.lock", *(f"imports/{t}" for t in _TEMP)), "no text",
          "cli.log (a transcript's path and offset)"),
    Store("locks and stamps", "runtime", ("write.lock", "decisions.lock", "git.lock", "handoffs-pruned", ".doctor",
                                           "checkout-id", ".checkout-id.*.tmp"),
          "no text", "memory.files.file_lock, sync, workspace.tidy_after_session_start, doctor, log.shared (a random id)"),
)


def store_of(root: str, rel: str) -> Store | None:
    """The registered store a file belongs to (``rel`` relative to ``root``), or None for an unknown file."""
    for store in STORES:
        if store.root == root and any(fnmatch.fnmatchcase(rel, p) for p in store.patterns):
            return store
    return None
