"""The SQLite side of history: one file, WAL, a busy timeout, ``BEGIN IMMEDIATE`` writes.

Nothing here ever deletes, recreates or rewrites a file it does not recognise: a file
that is not SQLite, or a SQLite database of some other application, gives
:class:`~auditor.errors.HistoryError` before the first write.

Touches: the database, the disk.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor.errors import HistoryError
from auditor.history.backend import Database, Dialects, Rows
from auditor.history.location import Location

__all__ = ["BUSY_TIMEOUT_SECONDS", "SqliteDatabase", "translated", "write_transaction"]

#: How long a writer waits for another one before giving up.
BUSY_TIMEOUT_SECONDS = 30.0

#: The oldest SQLite the shared SQL runs on (RETURNING came in 3.35).
_NEEDS = (3, 35, 0)
_VERSION_AND_TABLES = (
    "SELECT (SELECT user_version FROM pragma_user_version),"
    " (SELECT group_concat(name, char(10)) FROM sqlite_master"
    "  WHERE type = 'table' AND name NOT LIKE 'sqlite%')"
)


@contextmanager
def translated(path: Path | str) -> Iterator[None]:
    """Turn sqlite3's exceptions into :class:`HistoryError`, naming the file."""
    try:
        yield
    except sqlite3.Error as exc:
        raise HistoryError(_message(path, exc)) from exc


def _busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def _message(path: Path | str, exc: sqlite3.Error) -> str:
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


class SqliteDatabase(Database):
    """A history in one SQLite file (autocommit outside explicit transactions)."""

    dialect = "sqlite"

    def __init__(self, location: Location, *, read_only: bool = False) -> None:
        super().__init__(location, read_only=read_only)
        assert location.path is not None
        if sqlite3.sqlite_version_info < _NEEDS:
            raise HistoryError(
                f"history needs SQLite {'.'.join(map(str, _NEEDS))} or newer (RETURNING, "
                f"window functions); this Python has {sqlite3.sqlite_version}"
            )
        self.path: Path = location.path
        self.conn = self._connect_read_only() if read_only else self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryError(f"cannot create the folder for {self.path}: {exc}") from exc
        with translated(self.path):
            return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)

    def _connect_read_only(self) -> sqlite3.Connection:
        """``mode=ro``: SQLite refuses every write, and never creates the file. A WAL
        history written by other processes meanwhile is read as they commit (the reader
        shares the ``-shm`` index, which SQLite makes beside the file if it is missing).
        A reader's connection may be closed by another thread than its own (a server
        closes every worker thread's handle at shutdown)."""
        if not self.path.is_file():
            raise HistoryError(f"no history at {self.path} (no such file; nothing was created)")
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        with translated(self.path):
            conn = sqlite3.connect(
                uri,
                uri=True,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            conn.execute("PRAGMA query_only = ON")
        return conn

    # -- opening -------------------------------------------------------------------

    def inspect(self) -> tuple[int, list[str]]:
        """The version and every table, in one statement (one snapshot, so a process
        migrating the same new file at this moment is seen entirely or not at all)."""
        with translated(self.path):
            version, tables = self.conn.execute(_VERSION_AND_TABLES).fetchone()
        return int(version), sorted(tables.split("\n")) if tables else []

    def prepare(self) -> None:
        """Pragmas: busy timeout, foreign keys, synchronous NORMAL, WAL."""
        with translated(self.path):
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self._use_wal()

    def _use_wal(self) -> None:
        """Switch to WAL (kept in the file: once per database).

        The switch needs the file to itself and SQLite does not wait for that (no busy
        handler), so when several processes open a new database at once, retry until the
        busy timeout.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        delay = 0.001
        while self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            try:
                self.conn.execute("PRAGMA journal_mode = WAL")
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(2 * delay, 0.05)

    # -- statements ----------------------------------------------------------------

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        with translated(self.path):
            return self.conn.execute(sql, params).fetchall()

    def described(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], Rows]:
        with translated(self.path):
            cursor = self.conn.execute(sql, params)
            return [column[0] for column in cursor.description], cursor.fetchall()

    def stream(self, sql: str, params: Sequence[Any] = (), size: int = 1000) -> Iterator[Rows]:
        with translated(self.path):
            cursor = self.conn.execute(sql, params)
            while batch := cursor.fetchmany(size):
                yield batch

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        with translated(self.path):
            self.conn.execute(sql, params)

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with translated(self.path):
            self.conn.executemany(sql, rows)

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        marks = ", ".join("?" * len(columns))
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        with translated(self.path):
            self.conn.executemany(sql, rows)

    @contextmanager
    def write(self) -> Iterator[None]:
        self.refuse_writes()
        with translated(self.path), write_transaction(self.conn):
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        with translated(self.path):
            self.conn.execute("BEGIN")
        try:
            yield
        finally:
            with translated(self.path):
                self.conn.execute("COMMIT")

    # -- schema --------------------------------------------------------------------

    def version(self) -> int:
        return int(self.rows("PRAGMA user_version")[0][0])

    def set_version(self, number: int) -> None:
        self.execute(f"PRAGMA user_version = {int(number)}")

    def render(self, statement: str | Dialects) -> str | None:
        return statement.text(self.dialect) if isinstance(statement, Dialects) else statement

    def tables(self) -> list[str]:
        rows = self.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name"
        )
        return [name for (name,) in rows]

    def columns(self, table: str) -> list[str]:
        return [row[1] for row in self.rows(f"PRAGMA table_info({table})")]

    def close(self) -> None:
        self.conn.close()
