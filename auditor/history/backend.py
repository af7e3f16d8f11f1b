"""The thin dialect layer: one interface over SQLite (sqlite3) and PostgreSQL (psycopg 3).

The SQL of history is written once, in the words both dialects share: ``?`` placeholders,
SQLite's type names in migrations (``INTEGER``, ``REAL``, ``TEXT``, ``BLOB``; PostgreSQL
reads them as ``BIGINT``, ``DOUBLE PRECISION``, ``TEXT``, ``BYTEA``), ``INSERT ... ON
CONFLICT``, ``RETURNING``, window functions. What differs lives in the two subclasses:
how to connect and check, the write lock, bulk rows (``executemany`` against ``COPY``),
and the schema version (``PRAGMA user_version`` against rows of ``schema_migrations``).

Every method turns the driver's exceptions into :class:`~auditor.errors.HistoryError`.

Touches: the database.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from auditor.errors import HistoryError
from auditor.history.location import Location

__all__ = ["RECONNECT_SECONDS", "Database", "Dialects", "Rows"]

#: Rows as the drivers give them.
Rows = list[tuple[Any, ...]]
#: Seconds a history whose connection was lost keeps trying to connect again (with
#: backoff) before it gives up: a PostgreSQL restart or a fail-over takes seconds.
RECONNECT_SECONDS = 60.0
T = TypeVar("T")


@dataclass(frozen=True)
class Dialects:
    """One statement of a migration written per dialect, where the two cannot share one
    text (a view's casts, say); None where a dialect has nothing to do. A migration's
    other statements are plain strings."""

    sqlite: str | None
    postgresql: str | None

    def text(self, dialect: str) -> str | None:
        """The statement for ``dialect`` (``sqlite`` or ``postgresql``), or None."""
        text: str | None = getattr(self, dialect)
        return text


class Database(ABC):
    """An open history database (one connection). Not for use by several threads."""

    #: ``sqlite`` or ``postgresql``.
    dialect: str

    def __init__(self, location: Location, *, read_only: bool = False) -> None:
        self.location = location
        #: Opened read-only: the database refuses every write (SQLite ``mode=ro``,
        #: PostgreSQL a read-only session) and :meth:`write` refuses before it.
        self.read_only = read_only
        #: Seconds to keep connecting again after the connection was lost (PostgreSQL).
        self.reconnect_window = RECONNECT_SECONDS

    def refuse_writes(self) -> None:
        """HistoryError when this database was opened read-only (before any write)."""
        if self.read_only:
            raise HistoryError(f"{self.location} was opened read-only: nothing is written")

    def retried(self, work: Callable[[], T]) -> T:
        """Run ``work`` (one write transaction, or statements outside any), and run it
        again whole on a new connection when the connection was lost mid-way, for up to
        :attr:`reconnect_window` seconds. SQLite never loses its connection: once."""
        return work()

    @abstractmethod
    def inspect(self) -> tuple[int, list[str]]:
        """The version and every table (view) present, read in one snapshot, before any
        write: what decides whether this database may be touched at all."""

    @abstractmethod
    def prepare(self) -> None:
        """Settings kept in the database itself (SQLite's WAL), once it is known ours."""

    @abstractmethod
    def rows(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run one statement (``?`` placeholders); all its rows."""

    @abstractmethod
    def described(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], Rows]:
        """Run one query; its column names and rows."""

    @abstractmethod
    def stream(self, sql: str, params: Sequence[Any] = (), size: int = 1000) -> Iterator[Rows]:
        """Run one query; its rows in batches of at most ``size`` (inside :meth:`snapshot`
        on PostgreSQL: a server-side cursor, so a huge table never sits in memory)."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Run one statement, no rows wanted."""

    @abstractmethod
    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row (an upsert of many rows), no rows wanted."""

    @abstractmethod
    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """Insert many rows at once (``executemany``; ``COPY`` on PostgreSQL)."""

    @abstractmethod
    def write(self) -> AbstractContextManager[None]:
        """One write transaction holding the history's write lock, rolled back on any
        exception: SQLite ``BEGIN IMMEDIATE``; PostgreSQL ``BEGIN`` and a
        transaction-scoped advisory lock taken before anything else."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """One read-only transaction: every query inside sees the same committed state."""

    @abstractmethod
    def version(self) -> int:
        """How many migrations this database has applied (0 for a new one)."""

    @abstractmethod
    def set_version(self, number: int) -> None:
        """Record the version inside a migration's transaction."""

    @abstractmethod
    def render(self, statement: str | Dialects) -> str | None:
        """A migration statement as this dialect runs it (None: nothing to run)."""

    @abstractmethod
    def tables(self) -> list[str]:
        """The tables of the history (``schema_migrations`` excluded), sorted."""

    @abstractmethod
    def columns(self, table: str) -> list[str]:
        """The columns of one table, in order."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent)."""
