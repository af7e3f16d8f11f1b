"""The crawl log in the history: each URL's last fetch by the team's crawler, every
fetch for evidence, and the freshest walk of a site's sitemaps made for a plan.

Three tables (migration ``0006-crawl-log``):

- ``crawl_state``: one row per URL the crawler fetched (``site_id``, ``loc``): its last
  fetch (time, status, consecutive failures), the copy the crawler holds (its last good
  fetch: time, lastmod then, hashes and text blocks, what the next fetch is compared
  with) and the changes observed between good fetches (``intervals``, ``changes``,
  ``observed_days``: the figures of Cho and Garcia-Molina's estimator);
- ``crawl_log``: one row per fetch recorded, with what it showed (``content_changed``,
  ``lastmod_advanced``, a credible ``dateModified`` agreeing or not) and the sub-sitemap
  that listed it (no group: :mod:`auditor.history.crawlcounts` counts it per segment
  when read); rows older than :data:`LOG_KEEP_DAYS` are dropped as new ones come;
- ``runs.savings``: what a plan on the run's verdicts saves (its result's ``savings``),
  for the fleet index without reading every result;
- ``plan_walks``: one row per site, the sitemaps as a plan last walked them (its files'
  validators and entries, as ``url_state`` keeps a run's), so the next plan asks for them
  conditionally and a fetch is dated against the lastmod it was planned on.

Each recording is a crawl batch (migration ``0014-crawl-batches``): ``crawl_log`` and
``crawl_state`` rows carry the batch that wrote them, and the states a batch replaced are
kept so it can be taken back (:mod:`auditor.history.batches`, which saves through
:func:`write_fetches`).

Touches: the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from functools import lru_cache
from typing import Any

from auditor.history.backend import Database
from auditor.history.crawlcounts import CrawlCounts
from auditor.history.records import instant, instant_text
from auditor.history.rows import signed64, unsigned64

__all__ = [
    "CRAWL_LOG",
    "CRAWL_PENDING",
    "DATED_CHANGES",
    "INDEXING",
    "LOG_KEEP_DAYS",
    "CrawlCounts",
    "CrawlLogRow",
    "CrawlState",
    "crawl_states",
    "refuse_hashes",
    "save_resolution",
    "stream_crawl_states",
    "write_fetches",
]

#: Days a fetch stays in ``crawl_log``: the verdict's window (``WINDOW_DAYS``) reads no
#: further back, and ``crawl_state`` keeps each URL's whole record in a few figures.
LOG_KEEP_DAYS = 90.0

CRAWL_LOG = (
    """CREATE TABLE crawl_state (
        site_id INTEGER NOT NULL REFERENCES sites(id),
        loc TEXT NOT NULL,
        sitemap TEXT,
        fetched_at TEXT NOT NULL, status INTEGER, failures INTEGER NOT NULL,
        ok_fetched_at TEXT, lastmod TEXT, lastmod_precision TEXT,
        content_hash TEXT, fp_exact TEXT, fp_simhash INTEGER, fp_blocks BLOB,
        intervals INTEGER NOT NULL, changes INTEGER NOT NULL, observed_days REAL NOT NULL,
        PRIMARY KEY (site_id, loc))""",
    """CREATE TABLE crawl_log (
        site_id INTEGER NOT NULL REFERENCES sites(id),
        loc TEXT NOT NULL, sitemap TEXT,
        fetched_at TEXT NOT NULL, status INTEGER, content_hash TEXT,
        lastmod TEXT, content_changed INTEGER, lastmod_advanced INTEGER,
        interval_days REAL, date_agrees INTEGER, recorded_at TEXT NOT NULL)""",
    "CREATE INDEX crawl_log_by_site ON crawl_log(site_id, fetched_at)",
    "ALTER TABLE runs ADD COLUMN savings TEXT",
    """CREATE TABLE plan_walks (
        site_id INTEGER PRIMARY KEY REFERENCES sites(id),
        walked_at TEXT NOT NULL, files TEXT NOT NULL, urls INTEGER NOT NULL,
        data BLOB NOT NULL)""",
)

#: What a fetch says of lastmod is judged against a walk of the sitemaps made after it
#: (:mod:`auditor.crawl.resolve`), so each compared fetch keeps what that needs: how
#: precisely it and the previous good fetch were written (``crawl_state`` keeps its
#: copy's; that fetch's instant is ``fetched_at`` less ``interval_days``), and
#: ``pending`` while no such walk has been made (a partial index finds those at the next
#: walk); ``change_method`` says what the
#: change was read on (``body``, ``hash``, ``not-modified``; ``hash-refused`` for a
#: log's noisy hashes, :mod:`auditor.crawl.noise`). Old rows read as judged, as before.
CRAWL_PENDING = (
    "ALTER TABLE crawl_log ADD COLUMN previous_precision TEXT",
    "ALTER TABLE crawl_log ADD COLUMN fetched_precision TEXT",
    "ALTER TABLE crawl_log ADD COLUMN pending INTEGER",
    "ALTER TABLE crawl_log ADD COLUMN change_method TEXT",
    "ALTER TABLE crawl_state ADD COLUMN ok_fetched_precision TEXT",
    # the records a crawl batch replaced keep every column of crawl_state (0014)
    "ALTER TABLE crawl_replaced ADD COLUMN ok_fetched_precision TEXT",
    # the site's pending rows, keyed by the site alone: each fetch recorded adds its entry at
    # the index's end (a key of the URL too costs a million-line log a sixth more to write)
    "CREATE INDEX crawl_log_pending ON crawl_log(site_id) WHERE pending = 1",
)

#: Each URL's dated observations (a credible dateModified says when it last changed):
#: old rows read as none.
DATED_CHANGES = (
    "ALTER TABLE crawl_state ADD COLUMN dated_changes INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE crawl_state ADD COLUMN dated_days REAL NOT NULL DEFAULT 0",
)

#: What a fetched page said of its indexing, for coverage checks (``auditor coverage``):
#: each URL's copy's ``noindex`` and ``canonical`` and where its last fetch redirected
#: (``crawl_state``), and each sampled page's ``final_url``, ``noindex`` and ``canonical``
#: (``pages``). Old rows read as None: not known.
INDEXING = (
    "ALTER TABLE crawl_state ADD COLUMN noindex TEXT",
    "ALTER TABLE crawl_state ADD COLUMN canonical TEXT",
    "ALTER TABLE crawl_state ADD COLUMN redirect_to TEXT",
    "ALTER TABLE pages ADD COLUMN final_url TEXT",
    "ALTER TABLE pages ADD COLUMN noindex TEXT",
    "ALTER TABLE pages ADD COLUMN canonical TEXT",
)


#: The instants of the rows of one save, each made text once: a fetch's time and its
#: lastmod are written in its state and again in its log row, and many URLs share a lastmod
#: (sized for a save of :data:`auditor.crawl.record.BATCH` fetches: 2,000 a time).
_row_text = lru_cache(maxsize=16_384)(instant_text)


@dataclass(frozen=True)
class CrawlState:
    """What the history knows of one URL's fetches by the crawler."""

    loc: str
    sitemap: str | None
    fetched_at: datetime  # the last fetch, good or not
    status: int | None
    failures: int  # consecutive failed fetches up to the last one
    ok_fetched_at: datetime | None = None  # the last good fetch: the copy the crawler holds
    lastmod: datetime | None = None  # the URL's lastmod when that copy was fetched
    lastmod_precision: str | None = None
    content_hash: str | None = None  # the crawler's digest of that copy
    fp_exact: str | None = None  # auditor's fingerprints of it, when the body was given
    fp_simhash: int | None = None
    fp_blocks: bytes | None = None
    intervals: int = 0  # intervals between good fetches whose change is known
    changes: int = 0  # ... of which showed a change of content
    observed_days: float = 0.0  # ... their summed length
    #: Intervals (and first fetches) read from a credible dateModified instead: changes
    #: dated by it, and the days of exposure they cover (:mod:`auditor.planner.rates`).
    dated_changes: int = 0
    dated_days: float = 0.0
    #: What the copy said of its indexing (``meta``, ``header``; its canonical URL), and
    #: where the last fetch redirected (a 3xx's ``Location``): None when not known.
    noindex: str | None = None
    canonical: str | None = None
    redirect_to: str | None = None
    #: How precisely the copy's fetch time was written (``day``, ``minute``...; None:
    #: exact): a log's ``fetched_at`` without a time stands for its whole day.
    ok_fetched_precision: str | None = None

    def row(self, site_id: int) -> tuple[Any, ...]:
        """The ``crawl_state`` values, ``site_id`` first."""
        values = list(self.__dict__.values())  # the fields in order, as __init__ set them
        at = values[_AT] = _row_text(self.fetched_at)
        ok, lastmod = self.ok_fetched_at, self.lastmod
        values[_OK] = at if ok is self.fetched_at else None if ok is None else _row_text(ok)
        values[_LASTMOD] = None if lastmod is None else _row_text(lastmod)
        values[_SIMHASH] = signed64(values[_SIMHASH])
        return (site_id, *values)

    @classmethod
    def of(cls, row: Sequence[Any]) -> CrawlState:
        """A state from a ``crawl_state`` row without its ``site_id``."""
        values = list(row)
        for i in _INSTANT_FIELDS:
            values[i] = None if values[i] is None else instant(values[i])
        values[_SIMHASH] = unsigned64(values[_SIMHASH])
        values[_BLOCKS] = None if values[_BLOCKS] is None else bytes(values[_BLOCKS])
        return cls(*values)


STATE_COLUMNS = tuple(f.name for f in fields(CrawlState))
_INSTANT_FIELDS = tuple(STATE_COLUMNS.index(n) for n in ("fetched_at", "ok_fetched_at", "lastmod"))
_AT, _OK, _LASTMOD = _INSTANT_FIELDS
_SIMHASH, _BLOCKS = STATE_COLUMNS.index("fp_simhash"), STATE_COLUMNS.index("fp_blocks")


@dataclass(frozen=True)
class CrawlLogRow:
    """One fetch as ``crawl_log`` keeps it."""

    loc: str
    sitemap: str | None
    fetched_at: datetime
    status: int | None
    content_hash: str | None
    lastmod: datetime | None
    content_changed: bool | None  # against the previous good fetch; None: not known
    lastmod_advanced: bool | None  # ... None: lastmod's precision cannot tell
    interval_days: float | None
    date_agrees: bool | None  # a credible dateModified agreed with lastmod; None: none
    #: How precisely the previous good fetch (``interval_days`` before) and this one were
    #: written (None: exact).
    previous_precision: str | None = None
    fetched_precision: str | None = None
    pending: bool = False  # compared, waiting for a walk after it to be weighed
    change_method: str | None = None  # body, hash, not-modified; None: not compared

    def row(self, site_id: int, recorded_at: datetime) -> tuple[Any, ...]:
        """The ``crawl_log`` values."""
        values: list[Any] = list(self.__dict__.values())  # the fields in order
        for i in (2, 5):
            values[i] = None if values[i] is None else _row_text(values[i])
        for i in (6, 7, 9):
            values[i] = None if values[i] is None else int(values[i])
        values[12] = 1 if values[12] else None
        return (site_id, *values, _recorded_text(recorded_at))


_LOG_FIELDS = tuple(f.name for f in fields(CrawlLogRow))
#: A batch's rows share their ``recorded_at``: its text made once, not once a row.
_recorded_text = lru_cache(maxsize=4)(instant_text)
LOG_COLUMNS = (*_LOG_FIELDS, "recorded_at")


_UPSERT_STATE = (
    f"INSERT INTO crawl_state (site_id, {', '.join(STATE_COLUMNS)}, batch_id)"
    f" VALUES ({', '.join('?' * (len(STATE_COLUMNS) + 2))})"
    " ON CONFLICT (site_id, loc) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*STATE_COLUMNS, "batch_id") if c != "loc")
)


def crawl_states(db: Database, site_id: int, locs: Sequence[str]) -> dict[str, CrawlState]:
    """The states of ``locs`` the history holds (asked for in chunks)."""
    found: dict[str, CrawlState] = {}
    columns = ", ".join(STATE_COLUMNS)
    unique = sorted(set(locs))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = db.rows(
            f"SELECT {columns} FROM crawl_state WHERE site_id = ? AND loc IN ({marks})",
            (site_id, *chunk),
        )
        for row in rows:
            state = CrawlState.of(row)
            found[state.loc] = state
    return found


#: A site's states read in one statement when they are at most this many, before they
#: are streamed in batches in a snapshot: most sites' are, and on PostgreSQL one
#: statement is one round trip where a snapshot's stream takes five (a plan reads every
#: site's).
ONE_READ = 5_000


def stream_crawl_states(
    db: Database, site_id: int, *, blocks: bool = False
) -> Iterator[CrawlState]:
    """Every state of a site, in batches from the database (text blocks left out unless
    asked for: a plan needs the figures, not the copy)."""
    columns = [c if blocks or c != "fp_blocks" else "NULL" for c in STATE_COLUMNS]
    sql = f"SELECT {', '.join(columns)} FROM crawl_state WHERE site_id = ?"
    first = db.rows(f"{sql} LIMIT {ONE_READ + 1}", (site_id,))
    if len(first) <= ONE_READ:  # the whole site in one statement (one snapshot of its own)
        for row in first:
            yield CrawlState.of(row)
        return
    with db.snapshot():
        for batch in db.stream(sql, (site_id,), size=5_000):
            for row in batch:
                yield CrawlState.of(row)


def write_fetches(
    db: Database,
    site_id: int,
    states: Sequence[CrawlState],
    log: Sequence[CrawlLogRow],
    recorded_at: datetime,
    keep_after: datetime,
    batch_id: int,
) -> None:
    """Write one save of a site's fetches of batch ``batch_id``, inside its write
    transaction (:func:`auditor.history.batches.save_batch`): the new states of the URLs
    logged (the states of others are left as they are), and the log rows; log rows of the
    site older than ``keep_after`` are dropped."""
    logged = {row.loc for row in log}
    rows = [(*state.row(site_id), batch_id) for state in states if state.loc in logged]
    db.execute_many(_UPSERT_STATE, rows)
    db.insert_rows(
        "crawl_log",
        ("site_id", *LOG_COLUMNS, "batch_id"),
        [(*r.row(site_id, recorded_at), batch_id) for r in log],
    )
    db.execute(
        "DELETE FROM crawl_log WHERE site_id = ? AND fetched_at < ?",
        (site_id, instant_text(keep_after)),
    )


#: A pending fetch found again by its row's key (:data:`~auditor.history.crawlcounts.ROW_KEY`),
#: checked against its site, URL, time and ``pending``: a row moved meanwhile stays pending,
#: for the next walk.
#: The key compared as the type it is, so that it finds the row directly (PostgreSQL's
#: TID scan; ``ctid::text = ?`` would read the whole table for each row).
_FOUND_BY_KEY = {"sqlite": "rowid = ?", "postgresql": "ctid = ?::tid"}
_RESOLVE = {
    dialect: "UPDATE crawl_log SET lastmod_advanced = ?, pending = NULL"
    f" WHERE {found} AND site_id = ? AND loc = ? AND fetched_at = ? AND pending = 1"
    for dialect, found in _FOUND_BY_KEY.items()
}


def save_resolution(
    db: Database, site_id: int, decided: Iterable[tuple[bool | None, Any, str, str]]
) -> int:
    """Keep what a walk decided of pending fetches, in one transaction: each row
    (``lastmod_advanced``, its row key (:data:`~auditor.history.crawlcounts.ROW_KEY`),
    its ``loc``, its stored ``fetched_at`` text) no longer pending; how many rows were
    given."""
    rows = [(None if a is None else int(a), key, site_id, loc, at) for a, key, loc, at in decided]
    if rows:
        with db.write():
            db.execute_many(_RESOLVE[db.dialect], rows)
    return len(rows)


#: A ``crawled`` run's hash comparisons of one site (``recorded_at`` is the run's).
_RUN_HASHES = (
    "site_id = ? AND recorded_at = ? AND change_method = 'hash' AND content_changed IS NOT NULL"
)


def refuse_hashes(db: Database, site_id: int, recorded_at: datetime) -> None:
    """Take a ``crawled`` run's hash comparisons of one site out of the evidence and of
    the rates (:mod:`auditor.crawl.noise`), in one transaction: each URL's intervals,
    changes and days counted from them are taken back from ``crawl_state``, and the log
    rows keep their fetch with ``change_method`` ``hash-refused`` and no comparison."""
    params = (site_id, instant_text(recorded_at))
    with db.write():
        per_url = db.rows(
            "SELECT loc, count(*), sum(content_changed), sum(COALESCE(interval_days, 0))"
            f" FROM crawl_log WHERE {_RUN_HASHES} GROUP BY loc",
            params,
        )
        db.execute_many(
            "UPDATE crawl_state SET intervals = intervals - ?, changes = changes - ?,"
            " observed_days = CASE WHEN observed_days > ? THEN observed_days - ? ELSE 0 END"
            " WHERE site_id = ? AND loc = ?",
            [(n, changed, days, days, site_id, loc) for loc, n, changed, days in per_url],
        )
        db.execute(
            "UPDATE crawl_log SET content_changed = NULL, lastmod_advanced = NULL,"
            f" pending = NULL, change_method = 'hash-refused' WHERE {_RUN_HASHES}",
            params,
        )


def files_json(rows: Sequence[tuple[Any, ...]]) -> str:
    """A walk's sitemap-file rows (``file_row``) as one JSON text."""
    return json.dumps([list(r) for r in rows], ensure_ascii=False, separators=(",", ":"))


def files_of_json(text: str) -> list[tuple[Any, ...]]:
    """The rows :func:`files_json` wrote."""
    return [tuple(r) for r in json.loads(text)]
