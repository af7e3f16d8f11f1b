"""Which history --db names: a path, sqlite:///PATH or postgresql://..., and AUDITOR_DB."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.errors import HistoryError
from auditor.history.location import Location, locate
from auditor.history.postgres import placeholders, postgres_ddl


@pytest.mark.parametrize(
    ("given", "path"),
    [
        ("history.sqlite3", Path("history.sqlite3")),
        ("/var/lib/auditor/h.db", Path("/var/lib/auditor/h.db")),
        ("sqlite:///relative/h.db", Path("relative/h.db")),
        ("sqlite:////absolute/h.db", Path("/absolute/h.db")),
        ("SQLite:///h.db", Path("h.db")),
        (Path("a") / "b.sqlite3", Path("a/b.sqlite3")),
    ],
)
def test_paths_and_sqlite_urls_name_a_sqlite_file(given, path):
    assert locate(given) == Location("sqlite", path=path)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://auditor@db.internal:5432/history",
        "postgres://auditor@db.internal/history?options=-csearch_path%3Dauditor",
        "PostgreSQL://auditor@/history",
    ],
)
def test_postgresql_urls_name_a_postgresql_database(url):
    assert locate(url) == Location("postgresql", url=url)


@pytest.mark.parametrize(
    "bad", ["mysql://u@h/db", "sqlite://host/h.db", "sqlite://", "sqlite:///", "http://x/y"]
)
def test_other_urls_are_refused_by_name(bad):
    with pytest.raises(HistoryError, match="--db"):
        locate(bad)


def test_the_environment_is_read_when_no_argument_is_given(monkeypatch):
    monkeypatch.setenv("AUDITOR_DB", "postgresql://team@db/history")
    assert locate(None).dialect == "postgresql"
    assert locate("").dialect == "postgresql"
    assert locate("mine.sqlite3") == Location("sqlite", path=Path("mine.sqlite3"))


def test_a_password_never_shows_in_messages():
    where = locate("postgresql://auditor:s3cret@db:5432/history")
    assert str(where) == "postgresql://auditor:***@db:5432/history"
    assert str(locate("postgresql://auditor@db/history")) == "postgresql://auditor@db/history"
    with pytest.raises(HistoryError) as error:
        locate("mysql://auditor:s3cret@db/history")
    assert "s3cret" not in str(error.value)


def test_placeholders_become_psycopg_s_outside_quoted_text():
    sql = "SELECT '?', \"a?\", x FROM t WHERE a = ? AND b LIKE 'x%' AND c = ?"
    expected = "SELECT '?', \"a?\", x FROM t WHERE a = %s AND b LIKE 'x%%' AND c = %s"
    assert placeholders(sql) == expected


def test_migrations_written_with_sqlite_types_get_postgresql_s():
    statement = (
        "CREATE TABLE t (id INTEGER PRIMARY KEY, r real, b BLOB, note TEXT DEFAULT 'REAL',"
        ' "INTEGER" TEXT, integers INTEGER)'
    )
    assert postgres_ddl(statement) == (
        "CREATE TABLE t (id BIGINT PRIMARY KEY, r DOUBLE PRECISION, b BYTEA,"
        " note TEXT DEFAULT 'REAL', \"INTEGER\" TEXT, integers BIGINT)"
    )
    assert postgres_ddl("ALTER TABLE pages ADD COLUMN share REAL") == (
        "ALTER TABLE pages ADD COLUMN share DOUBLE PRECISION"
    )
