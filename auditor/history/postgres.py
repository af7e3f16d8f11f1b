"""The PostgreSQL side of history, through psycopg 3: many writers, one lock, ``COPY``.

A history opened read-only (``auditor serve``) is a read-only session
(``default_transaction_read_only``, set again on each new connection): the server refuses
every write.

Writers: every write transaction first takes one transaction-scoped advisory lock
(``pg_advisory_xact_lock``) keyed on the history's schema, then reads ``max(id) + 1`` for
a new site or run. Saves therefore commit one at a time, in run-id order: ids are unique,
increase per site and overall in commit order (a reader who sees run N sees every run
below N), and with one lock always taken first no two writers can deadlock. The lock is
released by the server at ``COMMIT``, at ``ROLLBACK`` and when a writer's connection dies
(a killed audit), so a crash never leaves it held. Migrations take the same lock.

The history lives in the connection's current schema (the first existing one of its
``search_path``: ``public`` unless the URL says ``?options=-csearch_path%3Dauditor``).

A lost connection (the server restarted, the network cut) is made again: psycopg does
not reconnect a plain connection by itself. A statement outside any transaction is run
again on the new connection; a transaction that failed mid-way is rolled back by the
server, and :meth:`PostgresDatabase.retried` runs it again whole (the caller makes it
idempotent: a run carries a key, so a retried save whose first commit did land finds
its run rather than saving it twice). Connecting again is tried with backoff (0.25 s
doubling to 2 s) for :attr:`~auditor.history.backend.Database.reconnect_window`
seconds (60 by default), then :class:`~auditor.errors.HistoryError` says so.

Touches: the database.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import count
from typing import TYPE_CHECKING, Any

from auditor.errors import HistoryError, HistoryLost
from auditor.history.backend import Database, Dialects, Rows, T
from auditor.history.location import Location
from auditor.history.sqlite import BUSY_TIMEOUT_SECONDS

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresDatabase", "placeholders", "postgres_ddl"]

#: The advisory lock's high 32 bits ("audi"); the low 32 are the schema's oid.
_LOCK_CLASS = 0x61756469
#: A writer stuck inside a transaction (stopped, cut off) is ended by the server after
#: this long, which frees the lock for the others.
IDLE_IN_TRANSACTION_SECONDS = 60
_CONNECT_DEFAULTS = {"connect_timeout": "10", "application_name": "auditor"}
_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION", "BLOB": "BYTEA"}
_WORDS = re.compile(r"'[^']*'|\"[^\"]*\"|\b(?:INTEGER|REAL|BLOB)\b", re.IGNORECASE)
_MARKS = re.compile(r"'[^']*'|\"[^\"]*\"|[?%]")
_NEEDS_CREATE = "auditor needs CREATE on the schema to set up or upgrade a history"
_cursor_names = count(1)
#: Seconds between two attempts to connect again: the first, and the most.
_BACKOFF_FIRST, _BACKOFF_MOST = 0.25, 2.0
log = logging.getLogger(__name__)


@lru_cache(maxsize=256)
def placeholders(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a ``?`` in quoted text is kept), and every
    ``%`` as ``%%`` (psycopg reads them even in quoted text)."""
    return _MARKS.sub(lambda m: {"?": "%s"}.get(m.group(), m.group().replace("%", "%%")), sql)


def postgres_ddl(statement: str) -> str:
    """A migration statement written in SQLite's type names, in PostgreSQL's:
    ``INTEGER`` is ``BIGINT`` (a simhash needs 64 bits), ``REAL`` is ``DOUBLE PRECISION``
    (PostgreSQL's ``REAL`` has 24 bits), ``BLOB`` is ``BYTEA``. Quoted text is kept."""
    return _WORDS.sub(lambda m: _TYPES.get(m.group().upper(), m.group()), statement)


def _without_nul(row: Sequence[Any]) -> Sequence[Any]:
    """PostgreSQL text cannot hold NUL: a hostile page's NUL is kept as U+FFFD."""
    if not any(isinstance(value, str) and "\x00" in value for value in row):
        return row
    return [v.replace("\x00", "\ufffd") if isinstance(v, str) else v for v in row]


def _driver() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - psycopg is a dependency
        raise HistoryError(
            f"PostgreSQL histories need psycopg 3 (pip install 'psycopg[binary]'): {exc}"
        ) from exc
    return psycopg


class PostgresDatabase(Database):
    """A history in one schema of a PostgreSQL database (autocommit outside explicit
    transactions, so no reader ever holds a lock between two commands)."""

    dialect = "postgresql"

    def __init__(self, location: Location, *, read_only: bool = False) -> None:
        super().__init__(location, read_only=read_only)
        self._psycopg = _driver()
        self._depth = 0  # transactions open (a statement inside one is not run again alone)
        self.conn: psycopg.Connection[Any] = self._connect(location.url or "")
        try:
            self.schema, oid = self._schema()
        except BaseException:
            self.conn.close()
            raise
        self._schema_oid = oid
        self.lock_key = (_LOCK_CLASS << 32) | oid

    def _connect(self, url: str) -> psycopg.Connection[Any]:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        try:
            given = conninfo_to_dict(url)
            extra = {k: v for k, v in _CONNECT_DEFAULTS.items() if k not in given}
            conn: psycopg.Connection[Any] = self._psycopg.connect(
                make_conninfo(url, **extra), autocommit=True
            )
        except self._psycopg.Error as exc:
            raise HistoryError(f"cannot connect to {self.location}: {exc}".strip()) from exc
        try:
            with self.translated():
                conn.execute(f"SET lock_timeout = '{int(BUSY_TIMEOUT_SECONDS)}s'")
                conn.execute(
                    f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_SECONDS}s'"
                )
                if self.read_only:  # every transaction of the session, also after a reconnect
                    conn.execute("SET default_transaction_read_only = on")
        except BaseException:
            conn.close()
            raise
        return conn

    def _schema(self) -> tuple[str, int]:
        rows = self._raw(
            "SELECT n.nspname, n.oid FROM pg_namespace n WHERE n.nspname = current_schema()"
        )
        if not rows:
            path = self._raw("SHOW search_path")[0][0]
            raise HistoryError(
                f"{self.location}: no schema of search_path ({path}) exists; create one "
                "(CREATE SCHEMA auditor) and name it: ?options=-csearch_path%3Dauditor"
            )
        return str(rows[0][0]), int(rows[0][1])

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Turn psycopg's exceptions into :class:`HistoryError`, naming the database."""
        errors = self._psycopg.errors
        try:
            yield
        except errors.LockNotAvailable as exc:
            message = f"{self.location} is still busy after {BUSY_TIMEOUT_SECONDS:g} s ({exc})"
            raise HistoryError(message) from exc
        except errors.InsufficientPrivilege as exc:
            raise HistoryError(f"{self.location}: {exc} ({_NEEDS_CREATE})") from exc
        except self._psycopg.OperationalError as exc:
            if self._broken():
                raise HistoryLost(f"{self.location}: the connection was lost ({exc})") from exc
            raise HistoryError(f"{self.location}: {exc}".strip()) from exc
        except self._psycopg.Error as exc:
            raise HistoryError(f"{self.location}: {exc}".strip()) from exc

    def _broken(self) -> bool:
        """True when the server or the network ended the connection (not :meth:`close`)."""
        conn = getattr(self, "conn", None)
        return conn is not None and bool(conn.broken)

    # -- a lost connection ---------------------------------------------------------

    def retried(self, work: Callable[[], T]) -> T:
        """Run ``work``; when the connection is lost mid-way, connect again and run it
        again whole, until :attr:`reconnect_window` seconds after the first loss. Inside
        an open transaction the loss is passed on: the transaction is what is retried."""
        deadline: float | None = None
        while True:
            try:
                return work()
            except HistoryLost as lost:
                if self._depth:
                    raise
                deadline = deadline or time.monotonic() + self.reconnect_window
                self._reconnect(lost, deadline)

    def _reconnect(self, lost: HistoryLost, deadline: float) -> None:
        """A new connection in place of the lost one, tried with backoff until
        ``deadline``; HistoryError saying why once it has passed."""
        log.warning("%s; connecting again (for up to %g s)", lost, self.reconnect_window)
        self.conn.close()
        began, pause = time.monotonic(), _BACKOFF_FIRST
        while True:
            try:
                self.conn = self._connect(self.location.url or "")
            except HistoryError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HistoryError(
                        f"{lost}, and it could not be made again within "
                        f"{self.reconnect_window:g} s: {exc}"
                    ) from exc
                time.sleep(min(pause, left))
                pause = min(2 * pause, _BACKOFF_MOST)
                continue
            log.warning("%s: connected again after %.1f s", self.location, time.monotonic() - began)
            return

    def _statement(self, work: Callable[[], T]) -> T:
        """One statement: run again on a new connection if the connection was lost,
        unless it belongs to an open transaction (then the transaction is retried)."""
        return work() if self._depth else self.retried(work)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._depth += 1
        try:
            with self.translated(), self.conn.transaction():
                yield
        finally:
            self._depth -= 1

    def _raw(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        with self.translated():
            return self.conn.execute(sql, params).fetchall()

    # -- opening -------------------------------------------------------------------

    def inspect(self) -> tuple[int, list[str]]:
        """The version and the relations of the schema, in one snapshot (a process
        migrating the same new schema at this moment is seen entirely or not at all)."""
        with self.snapshot():
            relations = self._raw(
                "SELECT relname, oid FROM pg_class WHERE relnamespace = %s"
                " AND relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY relname",
                (self._schema_oid,),
            )
            names = [str(name) for name, _ in relations]
            oids: dict[str, int] = dict(relations)
            if "schema_migrations" not in oids or not self._ours(oids["schema_migrations"]):
                return 0, names
            return int(self._raw("SELECT count(*) FROM schema_migrations")[0][0]), names

    def _ours(self, table_oid: int) -> bool:
        rows = self._raw(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = %s AND NOT attisdropped"
            " AND attname IN ('name', 'applied_at')",
            (table_oid,),
        )
        return bool(rows[0][0] == 2)

    def prepare(self) -> None:
        """Nothing to set in the database itself (session settings are made at connect)."""

    # -- statements ----------------------------------------------------------------

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        def run() -> Rows:
            with self.translated():
                return self.conn.execute(placeholders(sql), params, binary=True).fetchall()

        return self._statement(run)

    def described(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], Rows]:
        def run() -> tuple[list[str], Rows]:
            with self.translated():
                cursor = self.conn.execute(placeholders(sql), params, binary=True)
                return [column.name for column in cursor.description or []], cursor.fetchall()

        return self._statement(run)

    def stream(self, sql: str, params: Sequence[Any] = (), size: int = 1000) -> Iterator[Rows]:
        status = self._psycopg.pq.TransactionStatus
        named = self.conn.info.transaction_status == status.INTRANS
        with self.translated():
            name = f"auditor_stream_{next(_cursor_names)}" if named else None
            with (
                self.conn.cursor(name=name, binary=True)
                if name
                else self.conn.cursor(binary=True) as cursor
            ):
                cursor.execute(placeholders(sql), params)
                while batch := cursor.fetchmany(size):
                    yield batch

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        def run() -> None:
            with self.translated():
                self.conn.execute(placeholders(sql), params)

        self._statement(run)

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return

        def run() -> None:
            with self.translated(), self.conn.cursor() as cursor:
                cursor.executemany(placeholders(sql), [_without_nul(row) for row in rows])

        self._statement(run)

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        from psycopg import sql

        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )

        def run() -> None:
            with self.translated(), self.conn.cursor() as cursor, cursor.copy(statement) as copy:
                for row in rows:
                    copy.write_row(_without_nul(row))

        self._statement(run)

    @contextmanager
    def write(self) -> Iterator[None]:
        self.refuse_writes()
        with self._transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.lock_key,))
            yield

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        with self._transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield

    # -- schema --------------------------------------------------------------------

    def version(self) -> int:
        # pg_class read with this statement's snapshot, not to_regclass: a name look-up
        # may answer from a cache made before the lock was granted (a migration that
        # another process committed meanwhile would go unseen).
        found = self._raw(
            "SELECT count(*) FROM pg_class WHERE relnamespace = %s"
            " AND relname = 'schema_migrations'",
            (self._schema_oid,),
        )
        if not found[0][0]:
            return 0
        return int(self._raw("SELECT count(*) FROM schema_migrations")[0][0])

    def set_version(self, number: int) -> None:
        """Nothing: the version is the number of rows of ``schema_migrations``."""

    def render(self, statement: str | Dialects) -> str | None:
        if isinstance(statement, Dialects):
            return statement.text(self.dialect)
        return postgres_ddl(statement)

    def _qualified(self, name: str) -> str:
        return '"' + self.schema.replace('"', '""') + '"."' + name + '"'

    def tables(self) -> list[str]:
        rows = self._raw(
            "SELECT relname FROM pg_class WHERE relnamespace = %s AND relkind IN ('r', 'p')"
            " AND relname <> 'schema_migrations' ORDER BY relname",
            (self._schema_oid,),
        )
        return [str(name) for (name,) in rows]

    def columns(self, table: str) -> list[str]:
        rows = self._raw(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s)"
            " AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            (self._qualified(table),),
        )
        return [str(name) for (name,) in rows]

    def close(self) -> None:
        self.conn.close()
