"""What a server's fleet table reads of the history (``auditor serve``), as methods of
:class:`~auditor.history.History` (a mixin): every run's verdict in a site's order, read
once for the whole fleet and then again only for the sites with runs saved since; a
cheap mark that says whether any run was saved or deleted; the savings of chosen runs;
one run's segments with their reasons; and, for the static fleet index, each site's
latest verdicts and savings.

Each site's runs are read in the order ``(site_id, started_at, id)`` of the
``runs_by_site`` index (1,000,000 runs of 100,000 sites: 2.1 s on SQLite), so a site's
streaks of one verdict are found as its rows stream past, never all runs held at once.

Touches: the database.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from auditor.history.backend import Database
from auditor.history.records import RunRecord, instant

__all__ = ["BATCH_IDS", "LATEST_FIRST", "FleetReads", "RunRow"]

#: Ids a statement names at most (``IN (?, ...)``): under SQLite's old limit of 999
#: variables, and a short statement for PostgreSQL.
BATCH_IDS = 500
#: Rows fetched at a time from a stream of every run.
_STREAM_ROWS = 5_000
#: One run as the fleet table reads it: (id, started_at text, verdict, recheck_days).
RunRow = tuple[int, str, str, float | None]
_RUNS = "SELECT site_id, id, started_at, verdict, recheck_days FROM runs"
#: A site's runs, newest first.
LATEST_FIRST = "ORDER BY r.started_at DESC, r.id DESC"
#: Each site's latest runs (``newest`` 1 the latest, at most ``?`` of them), site by site,
#: with the latest one's savings.
_RECENT_VERDICTS = (
    "SELECT s.origin, x.verdict, x.newest, CASE WHEN x.newest = 1 THEN l.savings END"
    " FROM (SELECT r.id, r.site_id, r.verdict,"
    f"  row_number() OVER (PARTITION BY r.site_id {LATEST_FIRST}) AS newest FROM runs r) x"
    " JOIN sites s ON s.id = x.site_id JOIN runs l ON l.id = x.id"
    " WHERE x.newest <= ? ORDER BY x.site_id, x.newest"
)

_ORDER = " ORDER BY site_id, started_at, id"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), BATCH_IDS):
        yield values[start : start + BATCH_IDS]


class FleetReads:
    """The fleet table's reads (mixed into ``History``: its database)."""

    _db: Database

    def recent_verdicts(self, limit: int) -> Iterator[tuple[str, list[str], str | None]]:
        """Each site's ``limit`` latest verdicts (oldest first) and its latest run's
        ``savings`` JSON, streamed in site-id order: (origin, verdicts, savings)."""
        site: str | None = None
        verdicts: list[str] = []
        savings: str | None = None
        for batch in self._db.stream(_RECENT_VERDICTS, (limit,), 5_000):
            for origin, verdict, newest, text in batch:
                if newest == 1:
                    if site is not None:
                        yield site, verdicts[::-1], savings
                    site, verdicts, savings = str(origin), [], text
                verdicts.append(str(verdict))
        if site is not None:
            yield site, verdicts[::-1], savings

    def latest_savings(self) -> dict[str, dict[str, Any]]:
        """Each site's latest run's ``savings`` (sites whose latest run has them)."""
        rows = self._db.rows(
            "SELECT origin, savings FROM ("
            " SELECT s.origin, r.savings, row_number() OVER"
            f"  (PARTITION BY r.site_id {LATEST_FIRST}) AS newest"
            " FROM runs r JOIN sites s ON s.id = r.site_id) AS latest"
            " WHERE newest = 1 AND savings IS NOT NULL"
        )
        return {str(origin): json.loads(text) for origin, text in rows}

    def read_snapshot(self) -> AbstractContextManager[None]:
        """One read-only transaction: the reads inside see one committed state."""
        return self._db.snapshot()

    def run_marks(self) -> tuple[int, int]:
        """The highest run id and the number of runs: unchanged while no run is saved
        or deleted (ids only grow: a save takes ``max(id) + 1``)."""
        top, count = self._db.rows("SELECT coalesce(max(id), 0), count(*) FROM runs")[0]
        return int(top), int(count)

    def top_run_id(self) -> int:
        """The highest run id (0: none), one look-up at the end of the primary key."""
        return int(self._db.rows("SELECT coalesce(max(id), 0) FROM runs")[0][0])

    def sites_with_runs_after(self, run_id: int) -> dict[int, int]:
        """The sites (by id) with runs whose id is above ``run_id``, and how many."""
        rows = self._db.rows(
            "SELECT site_id, count(*) FROM runs WHERE id > ? GROUP BY site_id", (run_id,)
        )
        return {int(site): int(n) for site, n in rows}

    def site_origins(self, site_ids: Sequence[int] | None = None) -> dict[int, str]:
        """The origin of each site (of ``site_ids``, else every one), by id."""
        if site_ids is None:
            rows = self._db.rows("SELECT id, origin FROM sites")
        else:
            sql = "SELECT id, origin FROM sites WHERE id IN ({})"
            rows = [r for c in _chunks(site_ids) for r in self._db.rows(sql.format(_marks(c)), c)]
        return {int(i): str(origin) for i, origin in rows}

    def site_runs(
        self, site_ids: Sequence[int] | None = None
    ) -> Iterator[tuple[int, list[RunRow]]]:
        """Each site's runs (of ``site_ids``, else every site's), oldest first (by
        ``started_at``, then id), streamed site by site: (site id, runs)."""
        if site_ids is None:
            yield from _grouped(self._db.stream(_RUNS + _ORDER, (), _STREAM_ROWS))
            return
        for chunk in _chunks(site_ids):
            sql = f"{_RUNS} WHERE site_id IN ({_marks(chunk)}){_ORDER}"
            yield from _grouped(iter([self._db.rows(sql, chunk)]))

    def run_savings(self, run_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The ``savings`` of each of ``run_ids`` that has them, by run id."""
        found = {}
        for chunk in _chunks(run_ids):
            sql = f"SELECT id, savings FROM runs WHERE id IN ({_marks(chunk)})"
            for run_id, text in self._db.rows(sql, chunk):
                if text is not None:
                    found[int(run_id)] = json.loads(text)
        return found

    def recent_runs(self, site: str, limit: int) -> list[RunRecord]:
        """The ``limit`` latest runs of ``site``, oldest first."""
        rows = self._db.rows(
            "SELECT r.id, s.origin, r.started_at, r.finished_at, r.verdict, r.recheck_days"
            " FROM sites s JOIN runs r ON r.site_id = s.id WHERE s.origin = ?"
            " ORDER BY r.started_at DESC, r.id DESC LIMIT ?",
            (site, limit),
        )
        return [
            RunRecord(int(i), str(o), instant(started), instant(finished), str(v), recheck)
            for i, o, started, finished, v, recheck in reversed(rows)
        ]

    def run_segments(self, run_id: int) -> list[dict[str, Any]]:
        """A run's segments in order, each with its stored columns (``reasons`` decoded:
        a list of reason objects)."""
        columns, rows = self._db.described(
            "SELECT sitemap, group_pattern, verdict, reasons, urls, compared, changed,"
            " lastmod_advanced, precision, recall, recheck_days, change_rate"
            " FROM segments WHERE run_id = ? ORDER BY position",
            (run_id,),
        )
        found = [dict(zip(columns, row, strict=True)) for row in rows]
        for segment in found:
            segment["reasons"] = json.loads(segment["reasons"])
        return found

    def segment_streaks(self, site: str) -> dict[tuple[str, str | None], Any]:
        """Since when each segment of the site's latest run holds its verdict (the
        ``latest_segment_verdicts`` view, one site's rows), by (sitemap, group)."""
        rows = self._db.rows(
            "SELECT sitemap, group_pattern, since FROM latest_segment_verdicts WHERE site = ?",
            (site,),
        )
        return {(str(sitemap), group): since for sitemap, group, since in rows}


def _grouped(batches: Iterator[list[tuple[Any, ...]]]) -> Iterator[tuple[int, list[RunRow]]]:
    """Rows ordered by site gathered site by site (the few verdicts' texts interned: a
    fleet table keeps two a site)."""
    site: int | None = None
    runs: list[RunRow] = []
    for batch in batches:
        for site_id, run_id, started, verdict, recheck in batch:
            if site_id != site:
                if site is not None:
                    yield site, runs
                site, runs = int(site_id), []
            runs.append((int(run_id), str(started), sys.intern(str(verdict)), recheck))
    if site is not None:
        yield site, runs
