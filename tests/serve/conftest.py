"""The serve tests run on both backends: ``db_url`` is a new SQLite file or a new
PostgreSQL database (owned by a plain role) on the session's server."""

from __future__ import annotations

import pytest

BACKENDS = ("sqlite", "postgresql")
#: The role the PostgreSQL tests connect as: no superuser, owner of its database only.
WRITER = "auditor"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgresql``."""
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path, request: pytest.FixtureRequest) -> str:
    """Where a new, empty history goes: a path, or a ``postgresql://`` URL."""
    if backend == "sqlite":
        return str(tmp_path / "history.sqlite3")
    server = request.getfixturevalue("postgres_server")
    return str(server.new_database(WRITER))
