"""The History class: the one door to the database of past audits.

Touches: the database.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from auditor.history import batches, fleets
from auditor.history.backend import Database
from auditor.history.crawlside import CrawlHistory
from auditor.history.db import connect
from auditor.history.fleetreads import LATEST_FIRST, FleetReads
from auditor.history.location import Location, locate
from auditor.history.records import RunRecord, SiteRecord, aware, instant, instant_text
from auditor.history.rows import (
    FILE_COLUMNS,
    PAGE_COLUMNS,
    SEGMENT_COLUMNS,
    file_dict,
    file_row,
    page_of,
    page_row,
    segment_row,
    to_json,
)
from auditor.history.state import decode_state, encode_state
from auditor.history.tableside import TableHistory
from auditor.history.walkside import WalkHistory

if TYPE_CHECKING:
    import pandas as pd

    from auditor.models import SitemapFile
    from auditor.scorer.result import AuditResult, PageObservation

__all__ = ["History"]

_RUN_COLUMNS = "r.id, s.origin, r.started_at, r.finished_at, r.verdict, r.recheck_days"
#: Runs of a site whose pages keep their text blocks: the next run compares its pages with
#: the latest run's; older runs keep how their pages compared, not the blocks (about 3 KB
#: a page).
KEEP_BLOCKS_RUNS = 2
_DROP_OLD_BLOCKS = (
    "UPDATE pages SET fp_blocks = NULL WHERE fp_blocks IS NOT NULL AND run_id IN ("
    " SELECT id FROM runs WHERE site_id = ? AND id NOT IN ("
    "  SELECT id FROM runs WHERE site_id = ? ORDER BY started_at DESC, id DESC LIMIT ?))"
)
#: Each site's latest run and its number of runs, by two probes of ``runs_by_site``.
_HAS_RUN = "EXISTS (SELECT 1 FROM runs r WHERE r.site_id = s.id)"
_AUDITED = f"SELECT s.origin FROM sites s WHERE {_HAS_RUN}"
_AUDITED_ONE = f"SELECT 1 FROM sites s WHERE s.origin = ? AND {_HAS_RUN}"
_LATEST_RUNS = (
    f"SELECT {_RUN_COLUMNS}, (SELECT count(*) FROM runs c WHERE c.site_id = s.id) AS runs"
    " FROM sites s JOIN runs r ON r.id = (SELECT l.id FROM runs l WHERE l.site_id = s.id"
    " ORDER BY l.started_at DESC, l.id DESC LIMIT 1)"
)
_RUN_ROW = (
    "id, site_id, started_at, finished_at, verdict, recheck_days, result, savings, run_key,"
    " crawl_batches"
)
_INSERT_RUN = f"INSERT INTO runs ({_RUN_ROW}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INSERT_SITE = (
    "INSERT INTO sites (id, origin, created_at)"
    " SELECT coalesce(max(id), 0) + 1, ?, ? FROM sites RETURNING id"
)
_REPLACE_STATE = (
    "INSERT INTO url_state (site_id, run_id, urls, data) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (site_id) DO UPDATE"
    " SET run_id = excluded.run_id, urls = excluded.urls, data = excluded.data"
)


def _numbered_columns(columns: Sequence[str]) -> tuple[str, ...]:
    return ("run_id", "position", *columns)


class History(CrawlHistory, WalkHistory, TableHistory, FleetReads):
    """Past audits in a SQLite file or a PostgreSQL database: sites, runs, sitemap files,
    segment verdicts, sampled pages and each site's latest inventory.

    Open with :meth:`open`; use as a context manager or call :meth:`close`. Each run is
    saved in one short write transaction holding the history's write lock (SQLite
    ``BEGIN IMMEDIATE``; PostgreSQL an advisory lock), so several processes, on several
    machines for PostgreSQL, may save runs at once. Every failure of the database
    surfaces as :class:`~auditor.errors.HistoryError`.
    """

    def __init__(self, database: Database, location: Location, applied: Sequence[str]) -> None:
        self._db = database
        self.location = location
        #: The SQLite file, or None for a PostgreSQL history.
        self.path: Path | None = location.path
        #: Names of the migrations applied when this database was opened.
        self.applied = tuple(applied)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        reconnect: float | None = None,
        read_only: bool = False,
    ) -> History:
        """Open (creating it if needed) the history at ``path`` (a SQLite path,
        ``sqlite:///PATH`` or ``postgresql://...``), else ``AUDITOR_DB``, else
        :func:`~auditor.history.default_db_path`; apply missing migrations.

        ``reconnect``: seconds a PostgreSQL history keeps connecting again after its
        connection was lost (default :data:`~auditor.history.backend.RECONNECT_SECONDS`).
        ``read_only``: never create, migrate or write (SQLite ``mode=ro``, a read-only
        PostgreSQL session): a missing history, or one lacking migrations, is a
        HistoryError saying what to run; any write raises HistoryError."""
        location = locate(path)
        database, applied = connect(location, read_only=read_only)
        if reconnect is not None:
            database.reconnect_window = reconnect
        return cls(database, location, applied)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._db.dialect

    @property
    def read_only(self) -> bool:
        """Opened read-only: every write raises HistoryError."""
        return self._db.read_only

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"History({str(self.location)!r})"

    # -- writing ---------------------------------------------------------------------

    def save_run(
        self,
        result: AuditResult,
        *,
        files: Sequence[SitemapFile],
        entries: pd.DataFrame,
        pages: Sequence[PageObservation],
        key: str | None = None,
        fleet: int | None = None,
    ) -> int:
        """Save one finished run in one transaction; its new run id.

        The site is created if new. ``result.run_id`` is ignored: the stored JSON carries
        the new id, and ``finished_at`` (now when the result has none). The site's
        ``url_state`` becomes ``entries`` unless a run that started later is already saved.
        Pages of the site's runs older than its :data:`KEEP_BLOCKS_RUNS` latest lose their
        text blocks (what they compared to is kept).

        ``key`` (default: a new random one) names the run: a save whose connection was
        lost is retried whole (:meth:`~auditor.history.backend.Database.retried`), and
        finds the run rather than saving it twice if its first commit landed. ``fleet``:
        the run is the site's in that fleet's plan (:meth:`plan_fleet`), marked in the
        same transaction.
        """
        finished = result.finished_at or datetime.now(UTC)
        run = _RunRows(
            result,
            key or uuid.uuid4().hex,
            finished,
            encode_state(entries),  # before the transaction: it may take a second
            len(entries),
            [file_row(f) for f in files],
            [page_row(p) for p in pages],
            [segment_row(s) for s in result.segments],
        )
        return self._db.retried(lambda: self._write_run(run, fleet))

    def _write_run(self, run: _RunRows, fleet: int | None) -> int:
        db, result = self._db, run.result
        started = instant_text(result.started_at)
        with db.write():
            known = db.rows("SELECT id FROM runs WHERE run_key = ?", (run.key,))
            if known:  # an earlier attempt committed, its answer lost with the connection
                return int(known[0][0])
            site_id = self._site_id(result.site, run.finished)
            run_id = int(db.rows("SELECT coalesce(max(id), 0) + 1 FROM runs")[0][0])
            stored = replace(result, run_id=run_id, finished_at=run.finished)
            db.execute(
                _INSERT_RUN,
                (run_id, site_id, started, instant_text(run.finished), result.verdict,
                 result.recheck_days, to_json(stored.to_dict()),
                 None if result.savings is None else to_json(result.savings), run.key,
                 to_json(list(result.crawl_batches))),
            )  # fmt: skip
            for table, columns, rows in (
                ("sitemap_files", FILE_COLUMNS, run.files),
                ("segments", SEGMENT_COLUMNS, run.segments),
                ("pages", PAGE_COLUMNS, run.pages),
            ):
                db.insert_rows(table, _numbered_columns(columns), _numbered(run_id, rows))
            db.execute(_DROP_OLD_BLOCKS, (site_id, site_id, KEEP_BLOCKS_RUNS))
            self._replace_state(site_id, run_id, started, run.urls, run.state)
            if fleet is not None:
                fleets.mark_run(db, fleet, result.site, run_id)
        return run_id

    # -- fleets (auditor.history.fleets) -------------------------------------------

    def plan_fleet(
        self, sites: Sequence[str], *, resume: bool = False, now: datetime | None = None
    ) -> fleets.FleetPlan:
        """Record a fleet of ``sites`` (origins) as starting; with ``resume``, take up the
        latest fleet of the same crawl list instead when it did not end: only its sites
        without a run of it are left to do."""
        moment = now or datetime.now(UTC)
        return self._db.retried(lambda: fleets.plan_fleet(self._db, sites, moment, resume=resume))

    def end_fleet(self, fleet_id: int, now: datetime | None = None) -> None:
        """Mark a fleet ended: each of its sites had its turn."""
        moment = now or datetime.now(UTC)
        self._db.retried(lambda: fleets.end_fleet(self._db, fleet_id, moment))

    def never_audited(self) -> list[str]:
        """Sites of a fleet's plan that have no run at all (a first fleet cut short)."""
        return fleets.never_audited(self._db)

    def _site_id(self, origin: str, now: datetime) -> int:
        found = self.site_id(origin)
        if found is not None:
            return found
        return int(self._db.rows(_INSERT_SITE, (origin, instant_text(now)))[0][0])

    def site_id(self, origin: str) -> int | None:
        """The id of the site ``origin``, or None for a site the history does not know."""
        rows = self._db.rows("SELECT id FROM sites WHERE origin = ?", (origin,))
        return int(rows[0][0]) if rows else None

    def _replace_state(
        self, site_id: int, run_id: int, started: str, urls: int, data: bytes
    ) -> None:
        current = self._db.rows(
            "SELECT r.started_at FROM url_state u JOIN runs r ON r.id = u.run_id"
            " WHERE u.site_id = ?",
            (site_id,),
        )
        if current and current[0][0] > started:
            return  # a run that started later already left its inventory
        self._db.execute(_REPLACE_STATE, (site_id, run_id, urls, data))

    # -- reading ---------------------------------------------------------------------

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.rows(sql, params)

    def sites(self) -> list[SiteRecord]:
        """Every site with its latest run, by origin (code point order, whatever the
        database's collation).

        Two look-ups a site in the ``runs_by_site`` index (its latest run, its count)
        rather than a window over every run: 100,000 sites of 10 runs read 100,000 runs,
        not 1,000,000 sorted."""
        records = [
            SiteRecord.of(row[1], row[6], _run(row[:6]))
            for batch in self._db.stream(_LATEST_RUNS, (), 5_000)
            for row in batch
        ]
        return sorted(records, key=lambda record: record.origin)

    def audited(self, origins: Sequence[str] | None = None) -> list[str]:
        """The sites with at least one run, by origin (code point order): all of them, or
        those of ``origins`` (one look-up each in the ``sites`` and ``runs_by_site``
        indexes, never a read of every site)."""
        if origins is None:
            found = [str(row[0]) for row in self._db.rows(_AUDITED)]
        else:
            found = [o for o in dict.fromkeys(origins) if self._db.rows(_AUDITED_ONE, (o,))]
        return sorted(found)

    def due_sites(self, now: datetime) -> list[SiteRecord]:
        """The sites due for re-verification at ``now`` (an aware datetime), by origin.

        A site is due when ``due_at <= now + tolerance``: ``due_at`` is its latest run's
        start plus its interval (:class:`SiteRecord`), the tolerance a quarter of that
        interval, at most 12 hours (:data:`~auditor.history.records.DUE_TOLERANCE`,
        :func:`~auditor.history.records.due_tolerance`). So a daily cron at a fixed hour
        re-verifies a site on the day it is due, not a day late, even when the previous
        fleet reached it hours after the cron's start or the cron fires a little early;
        and a 1-day site is not due again until 18 hours after its run started.
        """
        moment = aware(now)
        return [site for site in self.sites() if site.is_due(moment)]

    def runs(self, site: str | None = None) -> list[RunRecord]:
        """Every run (or those of ``site``), oldest first."""
        where, params = ("WHERE s.origin = ?", (site,)) if site is not None else ("", ())
        rows = self._all(
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN sites s ON s.id = r.site_id {where}"
            " ORDER BY r.started_at, r.id",
            params,
        )
        return [_run(row) for row in rows]

    def run_crawl_batches(self, site: str | None = None) -> dict[int, tuple[int, ...]]:
        """The crawl batches each run (of ``site``) weighed, by run id: runs saved before
        batches existed are left out."""
        return batches.run_batches(self._db, site)

    def latest_run(self, site: str) -> RunRecord | None:
        """The run of ``site`` that started last, or None."""
        rows = self._all(
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN sites s ON s.id = r.site_id"
            f" WHERE s.origin = ? {LATEST_FIRST} LIMIT 1",
            (site,),
        )
        return _run(rows[0]) if rows else None

    def result(self, run_id: int) -> dict[str, Any] | None:
        """The stored ``AuditResult`` JSON of a run, or None."""
        import json

        rows = self._all("SELECT result FROM runs WHERE id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows else None

    def latest_entries(self, site: str) -> pd.DataFrame | None:
        """The site's latest inventory (loc, lastmod, lastmod_precision, sitemap), or None."""
        rows = self._all(
            "SELECT u.data FROM url_state u JOIN sites s ON s.id = u.site_id WHERE s.origin = ?",
            (site,),
        )
        return decode_state(rows[0][0]) if rows else None

    def pages(self, run_id: int) -> list[PageObservation]:
        """The pages sampled in a run, in the order they were saved."""
        columns = ", ".join(PAGE_COLUMNS)
        rows = self._all(
            f"SELECT {columns} FROM pages WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return [page_of(row) for row in rows]

    def latest_pages(self, site: str) -> list[PageObservation]:
        """The pages sampled in the site's latest run (empty when it has none)."""
        latest = self.latest_run(site)
        return self.pages(latest.run_id) if latest else []

    def audit_fetches(self, site_id: int) -> list[tuple[str, datetime, bool | None]]:
        """Each good fetch of a site's audit samples, every run: its URL, when, and
        whether its main content changed since the page's previous fetch (None: not
        compared)."""
        from auditor.history.planreads import audit_fetches

        return audit_fetches(self._db, [site_id]).get(site_id, [])

    def segment_verdicts(self, run_id: int) -> dict[str, str]:
        """Each segment's verdict in a run, by segment key (a sub-sitemap's URL, or its
        URL and group: :func:`~auditor.dispersion.segments.segment_key`)."""
        from auditor.dispersion.segments import segment_key

        rows = self._all(
            "SELECT sitemap, group_pattern, verdict FROM segments WHERE run_id = ?"
            " ORDER BY position",
            (run_id,),
        )
        return {segment_key(sitemap, group): verdict for sitemap, group, verdict in rows}

    def sitemap_files(self, run_id: int) -> list[dict[str, Any]]:
        """The sitemap files of a run; ``SitemapFile(**d)`` rebuilds each."""
        columns = ", ".join(FILE_COLUMNS)
        rows = self._all(
            f"SELECT {columns} FROM sitemap_files WHERE run_id = ? ORDER BY position", (run_id,)
        )
        return [file_dict(row) for row in rows]

    # -- the crawl log (auditor.history.crawl) -------------------------------------

    def site_ids(self) -> dict[str, int]:
        """Every site's id by origin."""
        return {str(origin): int(i) for i, origin in self._db.rows("SELECT id, origin FROM sites")}


@dataclass(frozen=True)
class _RunRows:
    """A run made ready to save (encoded before the transaction, reused by a retry)."""

    result: AuditResult
    key: str
    finished: datetime
    state: bytes
    urls: int
    files: list[tuple[Any, ...]]
    pages: list[tuple[Any, ...]]
    segments: list[tuple[Any, ...]]


def _numbered(run_id: int, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [(run_id, position, *row) for position, row in enumerate(rows)]


def _run(row: Sequence[Any]) -> RunRecord:
    run_id, site, started, finished, verdict, recheck_days = row
    return RunRecord(run_id, site, instant(started), instant(finished), verdict, recheck_days)
