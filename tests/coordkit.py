"""Fixtures shared by the coordination tests: one backend fixture parametrized over SQLite and
PostgreSQL (an isolated schema per test), a controllable clock, a Coordinator on both.

Test modules import the fixtures by name: ``from coordkit import backend_spec, backend, clock, coord``.
"""

from __future__ import annotations

import pytest

from brain.backends import open_backend
from brain.backends.testing import FakeClock, isolated_postgres
from brain.coord import Coordinator, CoordConfig

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def backend_spec(request, tmp_path):
    """A backend spec string (``sqlite:PATH`` or a postgresql URL with its own schema)."""
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'brain.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
        with isolated_postgres(url) as isolated:
            yield isolated


@pytest.fixture
def backend(backend_spec):
    b = open_backend(backend_spec)
    yield b
    b.close()


@pytest.fixture
def clock():
    return FakeClock()


def make_coord(backend, clock, **config) -> Coordinator:
    return Coordinator(backend, brain_name="proj", machine="box", clock=clock, config=CoordConfig(**config))


@pytest.fixture
def coord(backend, clock):
    return make_coord(backend, clock)
