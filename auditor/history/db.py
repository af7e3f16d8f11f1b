"""Opening the history database: location, pragmas, checks and named migrations.

Nothing here ever deletes, recreates or rewrites a file it does not recognise: a
file that is not SQLite, a database made by a newer auditor, or a SQLite database
of some other application gives :class:`~auditor.errors.HistoryError` before the
first write.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from auditor.errors import HistoryError

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "MIGRATIONS",
    "Migration",
    "connect",
    "default_db_path",
    "resolve_path",
    "translated",
    "write_transaction",
]

#: How long a writer waits for another one before giving up.
BUSY_TIMEOUT_SECONDS = 30.0
_FILE_NAME = "history.sqlite3"


@dataclass(frozen=True)
class Migration:
    """One named schema change, applied once, in its own transaction."""

    name: str
    statements: tuple[str, ...]


_INITIAL = (
    """CREATE TABLE sites (
        id INTEGER PRIMARY KEY,
        origin TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL)""",
    """CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        site_id INTEGER NOT NULL REFERENCES sites(id),
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        verdict TEXT NOT NULL,
        recheck_days REAL,
        result TEXT NOT NULL)""",
    "CREATE INDEX runs_by_site ON runs(site_id, started_at, id)",
    """CREATE TABLE sitemap_files (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        url TEXT NOT NULL, kind TEXT NOT NULL, parent TEXT, via_robots INTEGER NOT NULL,
        fetched_at TEXT NOT NULL, status INTEGER, final_url TEXT, date_header TEXT,
        last_modified_header TEXT, etag TEXT, index_lastmod TEXT,
        records INTEGER NOT NULL, urls INTEGER NOT NULL, bytes_read INTEGER NOT NULL,
        gzipped INTEGER NOT NULL, readable INTEGER NOT NULL,
        PRIMARY KEY (run_id, position))""",
    """CREATE TABLE segments (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        sitemap TEXT NOT NULL, urls INTEGER NOT NULL, verdict TEXT NOT NULL,
        reasons TEXT NOT NULL, agree INTEGER NOT NULL, disagree INTEGER NOT NULL,
        compared INTEGER NOT NULL, changed INTEGER NOT NULL,
        lastmod_advanced INTEGER NOT NULL, change_rate REAL, recheck_days REAL,
        PRIMARY KEY (run_id, position))""",
    """CREATE TABLE pages (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        loc TEXT NOT NULL, sitemap TEXT NOT NULL, stratum TEXT NOT NULL,
        fetched_at TEXT NOT NULL, lastmod TEXT, lastmod_precision TEXT,
        status INTEGER, error TEXT, date_modified TEXT, date_modified_precision TEXT,
        date_modified_source TEXT, date_modified_credible INTEGER, why_not_credible TEXT,
        date_published TEXT, http_last_modified TEXT, etag TEXT, fp_exact TEXT,
        fp_simhash INTEGER, fp_structured TEXT, truncated INTEGER NOT NULL,
        extra TEXT NOT NULL,
        PRIMARY KEY (run_id, position))""",
    "CREATE INDEX pages_by_loc ON pages(loc)",
    """CREATE TABLE url_state (
        site_id INTEGER PRIMARY KEY REFERENCES sites(id),
        run_id INTEGER NOT NULL REFERENCES runs(id),
        urls INTEGER NOT NULL,
        data BLOB NOT NULL)""",
)

#: Each sampled page's text blocks (to compare the next run's fetch with, template left
#: out) and how the page compared with the previous run's fetch. Old rows read as None:
#: their pages are compared on the whole-text hash, as before.
_PAGE_CHANGES = (
    "ALTER TABLE pages ADD COLUMN fp_blocks BLOB",
    "ALTER TABLE pages ADD COLUMN content_changed INTEGER",
    "ALTER TABLE pages ADD COLUMN change_share REAL",
    "ALTER TABLE pages ADD COLUMN change_distance INTEGER",
    "ALTER TABLE pages ADD COLUMN change_summary TEXT",
    "ALTER TABLE pages ADD COLUMN template_changed INTEGER",
    "ALTER TABLE pages ADD COLUMN template_regions TEXT",
    "ALTER TABLE pages ADD COLUMN change_method TEXT",
)

#: Every migration, in order; ``PRAGMA user_version`` counts those applied.
MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001-initial", _INITIAL),
    Migration("0002-page-changes", _PAGE_CHANGES),
)


_VERSION_AND_TABLES = (
    "SELECT (SELECT user_version FROM pragma_user_version),"
    " (SELECT group_concat(name, char(10)) FROM sqlite_master"
    "  WHERE type = 'table' AND name NOT LIKE 'sqlite%')"
)


def default_db_path() -> Path:
    """Where history lives when neither ``--db`` nor ``AUDITOR_DB`` says otherwise:
    ``$XDG_DATA_HOME/auditor/history.sqlite3``, by default under ``~/.local/share``."""
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "auditor" / _FILE_NAME


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """The database path: the argument, else ``AUDITOR_DB``, else :func:`default_db_path`."""
    chosen = path if path not in (None, "") else os.environ.get("AUDITOR_DB") or None
    return Path(chosen).expanduser() if chosen is not None else default_db_path()


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """Turn sqlite3's exceptions into :class:`HistoryError`, naming the file."""
    try:
        yield
    except sqlite3.Error as exc:
        raise HistoryError(_message(path, exc)) from exc


def _busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def _message(path: Path, exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    if _busy(exc):
        return f"{path} is still busy after {BUSY_TIMEOUT_SECONDS:g} s ({exc})"
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return f"{path} is damaged or not a SQLite database ({exc}); it was left as it is"
    return f"{path}: {exc}"


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def connect(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """Open (or create) the database at ``path``, check it, migrate it.

    Returns the connection and the names of the migrations applied now."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryError(f"cannot create the folder for {path}: {exc}") from exc
    with translated(path):
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    try:
        with translated(path):
            _check(conn, path)
            _configure(conn)
            applied = migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn, applied


def _check(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file we must not touch; reads only, in one statement (one snapshot, so a
    process migrating the same new file at this moment is seen entirely or not at all)."""
    version, tables = conn.execute(_VERSION_AND_TABLES).fetchone()
    if version > len(MIGRATIONS):
        raise HistoryError(_newer(path, version))
    if version == 0 and tables:  # ours come with a version: migrations are atomic
        listed = ", ".join(sorted(tables.split("\n"))[:5])
        raise HistoryError(f"{path} is a SQLite database of something else (tables: {listed})")


def _newer(path: Path, version: int) -> str:
    known = len(MIGRATIONS)
    return f"{path} was made by a newer auditor (schema {version}, this one knows {known})"


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    _use_wal(conn)


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL (kept in the file: once per database).

    The switch needs the file to itself and SQLite does not wait for that (no busy
    handler), so when several processes open a new database at once, retry until the
    busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    delay = 0.001
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(2 * delay, 0.05)


def migrate(conn: sqlite3.Connection, path: Path) -> list[str]:
    """Apply the migrations this database lacks; the names of those applied.

    Each runs in its own ``BEGIN IMMEDIATE`` transaction and re-reads the version
    inside it, so two processes opening a new database at once apply each once.
    """
    applied: list[str] = []
    if _user_version(conn) == len(MIGRATIONS):
        return applied
    for number, migration in enumerate(MIGRATIONS, start=1):
        with write_transaction(conn):
            version = _user_version(conn)
            if version > len(MIGRATIONS):
                raise HistoryError(_newer(path, version))
            if version >= number:
                continue
            _apply(conn, migration, number)
        applied.append(migration.name)
    return applied


def _apply(conn: sqlite3.Connection, migration: Migration, number: int) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    for statement in migration.statements:
        conn.execute(statement)
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (migration.name, now))
    conn.execute(f"PRAGMA user_version = {number}")


def _user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])
