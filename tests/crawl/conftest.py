"""The crawl log's tests run on SQLite and PostgreSQL, as the history's do."""

from tests.history.conftest import backend, db_url, new_db

__all__ = ["backend", "db_url", "new_db"]
