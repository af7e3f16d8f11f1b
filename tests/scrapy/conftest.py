"""The Scrapy tests record into SQLite and PostgreSQL histories, as the crawl log's do."""

from tests.history.conftest import backend, db_url

__all__ = ["backend", "db_url"]
