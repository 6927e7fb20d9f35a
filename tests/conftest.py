"""Shared fixtures: every test gets its own BRAIN_HOME and its own git repository.

PostgreSQL tests run when BRAIN_TEST_POSTGRES holds a URL (CI sets it); without it
they are skipped, so the embedded suite runs anywhere.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_URL = os.environ.get("BRAIN_TEST_POSTGRES")


def _session_home() -> None:
    """A brain home for what the test process does before any test's own (``brain_home``): importing brain
    builds its records, whose compiled code ``brain.kept`` keeps in the home of that moment (written at the
    process's exit), which must not be the user's."""
    import atexit
    import shutil
    import tempfile

    home = tempfile.mkdtemp(prefix="brain-test-home-")
    os.environ["BRAIN_HOME"] = home
    atexit.register(shutil.rmtree, home, True)  # registered first: runs after the stores are written


_session_home()


def _candidate_weights() -> None:
    """BRAIN_TEST_WEIGHTS=FILE: run the tests against a candidate weights file instead of the packaged one.

    For bench/fit_weights.py's keep rule only (fitted weights are kept only if the ranking tests still pass
    with them); the product itself always reads its one packaged file. Done at conftest import, before any
    test module reads the weights (some read them at import). The file is checked like the shipped one.
    """
    candidate = os.environ.get("BRAIN_TEST_WEIGHTS")
    if not candidate:
        return
    from brain.search import weights

    weights.load_weights(candidate)  # a malformed candidate fails here, clearly, not in a hundred tests
    weights.WEIGHTS_FILE = Path(candidate).resolve()
    weights.shipped_weights.cache_clear()


_candidate_weights()


@pytest.fixture(autouse=True)
def brain_home(tmp_path_factory, monkeypatch) -> Path:
    """Isolate all user-level state: BRAIN_HOME (and the clients' config folders) point at a fresh folder for
    every test, so tests never share a file, in one process or across pytest-xdist workers."""
    home = tmp_path_factory.mktemp("brain-home")
    monkeypatch.setenv("BRAIN_HOME", str(home))
    monkeypatch.setenv("BRAIN_MACHINE", "testbox")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude-config"))  # `brain install claude-code` writes there
    codex_home = home / "codex-home"  # `brain install codex` writes there; the codex CLI needs it to exist
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    for var in ("BRAIN_BACKEND", "BRAIN_DIR", "BRAIN_LOG", "BRAIN_ASK_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    return home


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                         env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                              "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    return out.stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    """An empty git repository with one commit."""
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first commit")
    return path


@pytest.fixture
def brain(repo):
    """An initialised brain in ``repo``, opened through the library."""
    import brain as brainlib

    return brainlib.init(repo)


def _worker_url(url: str, worker: str) -> str | None:
    """``url`` with its database named ``<database>_<worker>`` (None when the URL names no database)."""
    parts = urlsplit(url)
    database = parts.path.lstrip("/")
    if not database or "/" in database:
        return None
    return urlunsplit(parts._replace(path=f"/{database}_{worker}"))


@pytest.fixture(scope="session")
def _postgres_database() -> str:
    """The database this process's PostgreSQL tests use: BRAIN_TEST_POSTGRES's, or under pytest-xdist one per
    worker (``<database>_gw0``, ...; created on first use, kept for the next run).

    Every test still gets a schema of its own (brain.backends.testing.isolated_postgres), which keeps the rows
    apart; the database is per worker because PostgreSQL's writers' lock is one advisory lock per database
    (brain.backends.postgres.WRITE_LOCK_KEY): with one database, a write in one worker's schema waits behind the
    other worker's writes, and the tests with one- and two-second liveness windows saw their sessions gone."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    own = _worker_url(POSTGRES_URL, worker) if worker else None
    if own is None:
        return POSTGRES_URL
    import psycopg
    from psycopg import sql

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(urlsplit(own).path.lstrip("/"))))
        except psycopg.errors.DuplicateDatabase:
            pass  # made by an earlier run
    return own


@pytest.fixture
def postgres_url(request) -> str:
    if not POSTGRES_URL:
        pytest.skip("set BRAIN_TEST_POSTGRES=postgresql://... to run PostgreSQL tests")
    return request.getfixturevalue("_postgres_database")


def remove_tree(root: Path) -> None:
    """Delete ``root`` without recursion: Python 3.11's shutil.rmtree (and so pytest's cleanup of old temp
    folders, on this machine and in CI) recurses once per level and fails on the 1,200-level trees the
    deep-tree tests build, so those tests remove their trees themselves."""
    folders, stack = [], [str(root)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)
