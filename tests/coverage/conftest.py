"""Coverage tests run on SQLite and PostgreSQL, as the history's do."""

from tests.history.conftest import backend, db_url

__all__ = ["backend", "db_url"]
