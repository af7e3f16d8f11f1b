"""Opening the history database: where it is, checks, and named migrations.

One schema and one list of migrations serve both backends. A migration's statements are
written once, in SQLite's words (``INTEGER``, ``REAL``, ``TEXT``, ``BLOB``: PostgreSQL
reads them as ``BIGINT``, ``DOUBLE PRECISION``, ``TEXT``, ``BYTEA``, see
:mod:`auditor.history.postgres`); a statement the two cannot share (a view's casts) is a
:class:`~auditor.history.backend.Dialects` pair. Each migration runs in its own write
transaction, which re-reads the version inside it, so processes opening a new database at
once apply each migration once.

Nothing here ever deletes, recreates or rewrites a database it does not recognise: a file
that is not SQLite, a database made by a newer auditor, or a database (PostgreSQL schema)
of some other application gives :class:`~auditor.errors.HistoryError` before the first
write.

Touches: the database.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from auditor.errors import HistoryError
from auditor.history.backend import Database, Dialects
from auditor.history.batches import CRAWL_BATCHES
from auditor.history.crawl import CRAWL_LOG, CRAWL_PENDING, DATED_CHANGES, INDEXING
from auditor.history.fleets import FLEET_PLANS
from auditor.history.location import Location, default_db_path, locate
from auditor.history.robots import SITE_ROBOTS
from auditor.history.sqlite import BUSY_TIMEOUT_SECONDS, translated, write_transaction
from auditor.history.views import (
    LATEST_VIEWS,
    SEGMENT_GROUPS,
    SEGMENT_PRECISION,
    TEAM_HISTORY,
)

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "MIGRATIONS",
    "UPGRADE_COMMAND",
    "Dialects",
    "Migration",
    "connect",
    "default_db_path",
    "locate",
    "migrate",
    "resolve_path",
    "translated",
    "write_transaction",
]


@dataclass(frozen=True)
class Migration:
    """One named schema change, applied once, in its own transaction."""

    name: str
    statements: tuple[str | Dialects, ...]


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

#: Each sitemap file's answer to a conditional request (``reused``: a 304 stood in for
#: reading it) and what a later run needs to reuse it (``content``, JSON: its problems,
#: an index's children, counts). Old rows read as not reused, with no content: their
#: files are requested without validators.
_CONDITIONAL_SITEMAPS = (
    "ALTER TABLE sitemap_files ADD COLUMN reused INTEGER",
    "ALTER TABLE sitemap_files ADD COLUMN content TEXT",
)

#: A list page's newest child's lastmod (``auditor.sampler.children``): the scorer judges
#: a list dated by it as a list. Old rows read as None: their pages are judged as before.
_LIST_PAGES = ("ALTER TABLE pages ADD COLUMN newest_child TEXT",)

#: Whether a compared page's own frame differed, the site's template left out (the scorer
#: excuses a lastmod that moved with it). Old rows read as None: judged as before.
_OWN_FRAME = ("ALTER TABLE pages ADD COLUMN own_frame_changed INTEGER",)

#: Every migration, in order; the version (SQLite ``PRAGMA user_version``, PostgreSQL the
#: rows of ``schema_migrations``) counts those applied.
MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001-initial", _INITIAL),
    Migration("0002-page-changes", _PAGE_CHANGES),
    Migration("0003-team-history", TEAM_HISTORY),
    Migration("0004-segment-precision", SEGMENT_PRECISION),
    Migration("0005-conditional-sitemaps", _CONDITIONAL_SITEMAPS),
    Migration("0006-crawl-log", CRAWL_LOG),
    Migration("0007-dated-changes", DATED_CHANGES),
    Migration("0008-segment-groups", SEGMENT_GROUPS),
    Migration("0009-indexing", INDEXING),
    Migration("0010-fleet-plans", FLEET_PLANS),
    Migration("0011-latest-views", LATEST_VIEWS),
    Migration("0012-list-pages", _LIST_PAGES),
    Migration("0013-own-frame", _OWN_FRAME),
    Migration("0014-crawl-batches", CRAWL_BATCHES),
    Migration("0015-crawl-pending", CRAWL_PENDING),
    Migration("0016-site-robots", SITE_ROBOTS),
)


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """The SQLite path of ``path`` (else ``AUDITOR_DB``, else the default); HistoryError
    when it names a PostgreSQL database."""
    location = locate(path)
    if location.path is None:
        raise HistoryError(f"{location} is not a SQLite file")
    return location.path


#: What a reader tells its user to run on a history that lacks migrations.
UPGRADE_COMMAND = "auditor db upgrade --db {location}"


def connect(location: Location, *, read_only: bool = False) -> tuple[Database, list[str]]:
    """Open (or create) the history at ``location``, check it, migrate it.

    ``read_only``: never create, migrate or write (a reader's handle, ``auditor serve``):
    a missing history or one that lacks migrations is a HistoryError saying what to run.
    Returns the database and the names of the migrations applied now."""
    database = _open(location, read_only=read_only)
    try:
        version, tables = database.inspect()
        if version > len(MIGRATIONS):
            raise HistoryError(_newer(location, version))
        if version == 0 and tables:  # ours come with a version: migrations are atomic
            listed = ", ".join(tables[:5])
            kind = "SQLite database" if location.dialect == "sqlite" else "database schema"
            raise HistoryError(f"{location} is a {kind} of something else (tables: {listed})")
        if read_only:
            _check_current(location, version)
            return database, []
        database.prepare()
        applied = migrate(database)
    except BaseException:
        database.close()
        raise
    return database, applied


def _check_current(location: Location, version: int) -> None:
    """HistoryError unless a history opened read-only has every migration."""
    if version == 0:
        raise HistoryError(
            f"{location} holds no history yet (audit a site into it first: auditor audit "
            "SITE --db ...)"
        )
    if version < len(MIGRATIONS):
        missing = ", ".join(m.name for m in MIGRATIONS[version:])
        command = UPGRADE_COMMAND.format(location=location)
        raise HistoryError(
            f"{location} lacks migrations {missing} (made by an older auditor); it is "
            f"opened read-only, so apply them first: {command}"
        )


def _open(location: Location, *, read_only: bool = False) -> Database:
    if location.dialect == "postgresql":
        from auditor.history.postgres import PostgresDatabase

        return PostgresDatabase(location, read_only=read_only)
    from auditor.history.sqlite import SqliteDatabase

    return SqliteDatabase(location, read_only=read_only)


def _newer(location: Location, version: int) -> str:
    known = len(MIGRATIONS)
    return f"{location} was made by a newer auditor (schema {version}, this one knows {known})"


def migrate(database: Database, upto: int | None = None) -> list[str]:
    """Apply the migrations this database lacks (the first ``upto`` only, when given);
    the names of those applied.

    Each runs in its own write transaction (holding the history's write lock) and
    re-reads the version inside it, so two processes opening a new database at once
    apply each once.
    """
    target = len(MIGRATIONS) if upto is None else upto
    applied: list[str] = []
    if database.version() >= target:
        return applied
    for number, migration in enumerate(MIGRATIONS[:target], start=1):
        with database.write():
            version = database.version()
            if version > len(MIGRATIONS):
                raise HistoryError(_newer(database.location, version))
            if version >= number:
                continue
            _apply(database, migration, number)
        applied.append(migration.name)
    return applied


def _apply(database: Database, migration: Migration, number: int) -> None:
    database.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    for statement in migration.statements:
        text = database.render(statement)
        if text is not None:
            database.execute(text)
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    database.execute("INSERT INTO schema_migrations VALUES (?, ?)", (migration.name, now))
    database.set_version(number)
