"""Crawl batches: each recording of the crawler's fetches (an ``auditor crawled`` run, a
Scrapy crawl, a spool fed) is a batch with an id, and a batch can be taken back.

Migration ``0014-crawl-batches``:

- ``crawl_batches``: one row per batch: when it was recorded, the sources it named, its
  counts (fetches, changed, unchanged), the span of its fetches, and when it was taken
  back (kept then, so ids are never reused and a run that weighed it can say so);
- ``crawl_log.batch_id`` and ``crawl_state.batch_id``: the batch that logged a fetch, and
  the batch that last wrote a URL's state (NULL: recorded before batches existed; such
  rows keep counting as before);
- ``crawl_replaced``: the states a batch replaced, each URL's state as it was before the
  batch first touched it (a URL the batch created has none), copied by the database
  (``INSERT ... SELECT``) in the transaction that replaces it. ``crawl_state`` cannot be
  rebuilt from ``crawl_log``: the copy a fetch is compared with (hashes, text blocks) and
  the change-rate figures live only there. A column added to ``crawl_state`` must be
  added here too (the copy names every column of :data:`~auditor.history.crawl.STATE_COLUMNS`,
  so a missing one fails loudly);
- ``runs.crawl_batches``: the batches a run's crawl evidence came from (JSON list).

Taking a batch back (:func:`take_back`), in one write transaction: its states are
deleted, the states it replaced restored (with the batch that had written them), its
fetches removed from ``crawl_log``, and the batch marked taken back. Nothing else is
derived from the crawl log: audits and plans read ``crawl_log`` and ``crawl_state`` when
they run, and what a past run concluded (its verdict, ``runs.savings``) stays its record.

A batch is refused when a later one built on its states (a later batch replaced a state
it wrote, or wrote again a URL whose state it replaced) unless that one is taken back in
the same command; the refusal names the batches to add, newest first. Two batches that
wrote one URL in turn (two crawls fed at once) cannot be taken back at all. The replaced
states are kept :data:`TAKE_BACK_DAYS`; older batches can no longer be taken back.

Touches: the database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from auditor.errors import HistoryError, UsageError
from auditor.history.backend import Database
from auditor.history.crawl import STATE_COLUMNS, CrawlLogRow, CrawlState, write_fetches
from auditor.history.records import instant, instant_text

__all__ = [
    "CRAWL_BATCHES",
    "TAKE_BACK_DAYS",
    "CrawlBatch",
    "TakeBack",
    "crawl_batches",
    "open_batch",
    "run_batches",
    "save_batch",
    "save_replaced",
    "take_back",
]

#: Days a batch's replaced states are kept, so that it can be taken back: the longest
#: re-check interval of a verdict (``MAX_RECHECK_DAYS``, 30) and two weeks to notice what
#: the next audit said. Each day kept costs a copy of every state the day's batches replaced.
TAKE_BACK_DAYS = 45.0

CRAWL_BATCHES = (
    """CREATE TABLE crawl_batches (
        id INTEGER PRIMARY KEY,
        recorded_at TEXT NOT NULL, sources TEXT NOT NULL,
        fetches INTEGER NOT NULL, changed INTEGER NOT NULL, unchanged INTEGER NOT NULL,
        first_fetched_at TEXT, last_fetched_at TEXT,
        taken_back_at TEXT, replaced_dropped_at TEXT)""",
    "ALTER TABLE crawl_log ADD COLUMN batch_id INTEGER",
    "ALTER TABLE crawl_state ADD COLUMN batch_id INTEGER",
    """CREATE TABLE crawl_replaced (
        batch_id INTEGER NOT NULL, site_id INTEGER NOT NULL,
        loc TEXT NOT NULL,
        sitemap TEXT,
        fetched_at TEXT NOT NULL, status INTEGER, failures INTEGER NOT NULL,
        ok_fetched_at TEXT, lastmod TEXT, lastmod_precision TEXT,
        content_hash TEXT, fp_exact TEXT, fp_simhash INTEGER, fp_blocks BLOB,
        intervals INTEGER NOT NULL, changes INTEGER NOT NULL, observed_days REAL NOT NULL,
        dated_changes INTEGER NOT NULL, dated_days REAL NOT NULL,
        noindex TEXT, canonical TEXT, redirect_to TEXT,
        prior_batch INTEGER)""",
    "CREATE INDEX crawl_replaced_by_batch ON crawl_replaced(batch_id)",
    "ALTER TABLE runs ADD COLUMN crawl_batches TEXT",
)

_STATE = ", ".join(STATE_COLUMNS)
#: A URL's state as it is, kept for the batch about to replace it, unless the batch wrote
#: it itself (a URL it fetches twice keeps the state from before its first fetch): so a
#: batch keeps at most one row a URL, without a unique key to check it (an index of the
#: batch alone costs a tenth of one on (batch, site, URL) to keep up).
_SAVE_REPLACED = (
    f"INSERT INTO crawl_replaced (batch_id, site_id, {_STATE}, prior_batch)"
    f" SELECT ?, site_id, {_STATE}, batch_id FROM crawl_state"
    " WHERE site_id = ? AND loc IN ({marks}) AND (batch_id IS NULL OR batch_id <> ?)"
)
_RESTORE = (
    f"INSERT INTO crawl_state (site_id, {_STATE}, batch_id)"
    f" SELECT site_id, {_STATE}, prior_batch FROM crawl_replaced WHERE batch_id = ?"
)
#: URLs asked for at a time in ``IN (...)``, as :func:`~auditor.history.crawl.crawl_states`.
_CHUNK = 500
_BATCH_COLUMNS = (
    "id, recorded_at, sources, fetches, changed, unchanged, first_fetched_at,"
    " last_fetched_at, taken_back_at, replaced_dropped_at"
)


@dataclass(frozen=True)
class CrawlBatch:
    """One recording of the crawler's fetches, as ``crawl_batches`` keeps it."""

    id: int
    recorded_at: datetime
    sources: tuple[str, ...]  # the logs (or the crawl) it named
    fetches: int  # fetches recorded
    changed: int  # ... whose content changed since the previous good fetch
    unchanged: int
    first_fetched_at: datetime | None  # the span of its fetches
    last_fetched_at: datetime | None
    taken_back_at: datetime | None = None
    replaced_dropped_at: datetime | None = None  # past TAKE_BACK_DAYS: can't be taken back

    @classmethod
    def of(cls, row: Sequence[Any]) -> CrawlBatch:
        """A batch from a ``crawl_batches`` row (:data:`_BATCH_COLUMNS`)."""
        first, last, taken, dropped = (None if v is None else instant(v) for v in row[6:])
        counts = (int(row[3]), int(row[4]), int(row[5]))
        sources = tuple(str(s) for s in json.loads(row[2]))
        return cls(int(row[0]), instant(row[1]), sources, *counts, first, last, taken, dropped)

    def to_dict(self) -> dict[str, Any]:
        """The batch as a JSON object (``auditor crawled --batches --json``)."""

        def text(moment: datetime | None) -> str | None:
            return None if moment is None else moment.isoformat()

        return {
            "id": self.id,
            "recorded_at": text(self.recorded_at),
            "sources": list(self.sources),
            "fetches": self.fetches,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "first_fetched_at": text(self.first_fetched_at),
            "last_fetched_at": text(self.last_fetched_at),
            "taken_back_at": text(self.taken_back_at),
            "replaced_dropped_at": text(self.replaced_dropped_at),
        }


@dataclass(frozen=True)
class TakeBack:
    """What taking batches back did."""

    batches: tuple[int, ...]  # the batches taken back, in the order they were
    fetches: int  # crawl_log rows removed
    restored: int  # URL states put back as they were before
    removed: int  # URL states the batches had created, removed


def save_batch(
    db: Database,
    site_id: int,
    states: Sequence[CrawlState],
    log: Sequence[CrawlLogRow],
    recorded_at: datetime,
    keep_after: datetime,
    *,
    batch_id: int | None = None,
    sources: Sequence[str] = (),
) -> int:
    """Save one part of a batch's fetches of one site in one write transaction (a new
    batch naming ``sources`` when ``batch_id`` is None): the states the fetches replace
    kept, then the new states and log rows written (:func:`~auditor.history.crawl.write_fetches`),
    the batch's counts added. The batch's id; HistoryError when the batch was taken back
    meanwhile (its fetches would outlive it)."""
    with db.write():
        if batch_id is None:
            batch_id = open_batch(db, sources, recorded_at)
        elif db.rows("SELECT 1 FROM crawl_batches WHERE id = ? AND taken_back_at IS NULL",
                     (batch_id,)) == []:  # fmt: skip
            raise HistoryError(f"crawl batch {batch_id} was taken back while being recorded")
        save_replaced(db, batch_id, site_id, (row.loc for row in log))
        write_fetches(db, site_id, states, log, recorded_at, keep_after, batch_id)
        count_saved(db, batch_id, log)
    return batch_id


def open_batch(db: Database, sources: Sequence[str], recorded_at: datetime) -> int:
    """A new batch (inside a write transaction); its id. The replaced states of batches
    recorded more than :data:`TAKE_BACK_DAYS` before it are dropped, oldest first (always
    a prefix of the ids, so no batch that can be taken back follows one that cannot)."""
    cutoff = instant_text(recorded_at - timedelta(days=TAKE_BACK_DAYS))
    expired = db.rows(
        "SELECT max(id) FROM crawl_batches WHERE recorded_at < ? AND replaced_dropped_at IS NULL",
        (cutoff,),
    )[0][0]
    if expired is not None:
        db.execute("DELETE FROM crawl_replaced WHERE batch_id <= ?", (expired,))
        db.execute(
            "UPDATE crawl_batches SET replaced_dropped_at = ?"
            " WHERE id <= ? AND replaced_dropped_at IS NULL",
            (instant_text(recorded_at), expired),
        )
    rows = db.rows(
        "INSERT INTO crawl_batches (id, recorded_at, sources, fetches, changed, unchanged)"
        " SELECT coalesce(max(id), 0) + 1, ?, ?, 0, 0, 0 FROM crawl_batches RETURNING id",
        (instant_text(recorded_at), json.dumps(list(sources), ensure_ascii=False)),
    )
    return int(rows[0][0])


def save_replaced(db: Database, batch_id: int, site_id: int, locs: Iterable[str]) -> None:
    """Keep the states of ``locs`` that ``batch_id`` is about to replace (inside its write
    transaction, before the new states are written), copied by the database."""
    unique = sorted(set(locs))
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        sql = _SAVE_REPLACED.format(marks=", ".join("?" * len(chunk)))
        db.execute(sql, (batch_id, site_id, *chunk, batch_id))


def count_saved(db: Database, batch_id: int, log: Sequence[CrawlLogRow]) -> None:
    """Add one save's log rows to its batch's counts and span of fetches."""
    if not log:
        return
    first = instant_text(min(r.fetched_at for r in log))
    last = instant_text(max(r.fetched_at for r in log))
    db.execute(
        "UPDATE crawl_batches SET fetches = fetches + ?, changed = changed + ?,"
        " unchanged = unchanged + ?,"
        " first_fetched_at = CASE WHEN first_fetched_at IS NULL OR first_fetched_at > ?"
        "  THEN ? ELSE first_fetched_at END,"
        " last_fetched_at = CASE WHEN last_fetched_at IS NULL OR last_fetched_at < ?"
        "  THEN ? ELSE last_fetched_at END WHERE id = ?",
        (len(log), sum(r.content_changed is True for r in log),
         sum(r.content_changed is False for r in log), first, first, last, last, batch_id),
    )  # fmt: skip


def crawl_batches(db: Database, ids: Iterable[int] | None = None) -> list[CrawlBatch]:
    """The batches of ``ids`` the history knows (every batch by default), by id."""
    if ids is None:
        rows = db.rows(f"SELECT {_BATCH_COLUMNS} FROM crawl_batches ORDER BY id")
    else:
        wanted = sorted({int(i) for i in ids})
        rows = []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            rows += db.rows(
                f"SELECT {_BATCH_COLUMNS} FROM crawl_batches WHERE id IN ({marks}) ORDER BY id",
                chunk,
            )
    return [CrawlBatch.of(row) for row in rows]


def run_batches(db: Database, site: str | None = None) -> dict[int, tuple[int, ...]]:
    """The batches each run (of ``site``) weighed, by run id (``runs.crawl_batches``)."""
    where, params = (" AND s.origin = ?", (site,)) if site is not None else ("", ())
    rows = db.rows(
        "SELECT r.id, r.crawl_batches FROM runs r JOIN sites s ON s.id = r.site_id"
        f" WHERE r.crawl_batches IS NOT NULL{where}",
        params,
    )
    return {int(run): tuple(int(b) for b in json.loads(text)) for run, text in rows}


def take_back(db: Database, ids: Sequence[int], now: datetime) -> TakeBack:
    """Take the batches ``ids`` back (module docstring) in one write transaction, each
    once no other batch built on it; UsageError, nothing touched, when one is unknown,
    already taken back or too old, or when a batch not named built on one named."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    with db.write():
        _check(db, wanted)
        done, needed, totals = _peel(db, wanted)
        if needed:  # raised inside the transaction: everything undone is rolled back
            raise UsageError(_not_alone(wanted, needed, done))
        marks = ", ".join("?" * len(done))
        db.execute(
            f"UPDATE crawl_batches SET taken_back_at = ? WHERE id IN ({marks})",
            (instant_text(now), *done),
        )
    return TakeBack(tuple(done), *totals)


def _peel(db: Database, wanted: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Undo ``wanted`` newest first, each once nothing left builds on it, adding the
    batches that build on them: (batches undone in order, batches added, the totals of
    :func:`_undo`). UsageError when the batches left all build on one another."""
    done: list[int] = []
    needed: list[int] = []
    totals = [0, 0, 0]
    pending = set(wanted)
    while pending:
        blocked = {b: _blockers(db, b) for b in sorted(pending, reverse=True)}
        free = [b for b, blockers in blocked.items() if not blockers]
        if not free:
            outside = sorted(set().union(*blocked.values()) - pending, reverse=True)
            if not outside:
                raise UsageError(_in_turn(sorted(pending)))
            _check(db, outside, needed_by=wanted)
            needed += outside
            pending.update(outside)
            continue
        totals = [a + b for a, b in zip(totals, _undo(db, free[0]), strict=True)]
        done.append(free[0])
        pending.discard(free[0])
    return done, needed, totals


def _check(db: Database, ids: Sequence[int], needed_by: Sequence[int] = ()) -> None:
    """UsageError unless every batch of ``ids`` can be taken back by itself."""
    found = {b.id: b for b in crawl_batches(db, ids)}
    for i in ids:
        batch = found.get(i)
        why = (
            f"no batch {i} in the history (auditor crawled --batches lists them)"
            if batch is None
            else f"batch {i} was taken back on {batch.taken_back_at:%Y-%m-%d %H:%M}"
            if batch.taken_back_at is not None
            else f"batch {i}: its replaced states are no longer kept (a batch can be taken "
            f"back for {TAKE_BACK_DAYS:g} days)"
            if batch.replaced_dropped_at is not None
            else None
        )
        if why is not None:
            if needed_by:
                named = ", ".join(map(str, needed_by))
                why = f"{why}; it recorded fetches of the same URLs after batch {named}"
            raise UsageError(why)


def _blockers(db: Database, batch_id: int) -> set[int]:
    """The batches that built on ``batch_id``'s states: those that replaced a state it
    wrote, and those that wrote again a URL whose state it replaced."""
    later = db.rows(
        "SELECT DISTINCT batch_id FROM crawl_replaced WHERE prior_batch = ?", (batch_id,)
    )
    over = db.rows(
        "SELECT DISTINCT s.batch_id FROM crawl_replaced r JOIN crawl_state s"
        " ON s.site_id = r.site_id AND s.loc = r.loc"
        " WHERE r.batch_id = ? AND s.batch_id <> ?",
        (batch_id, batch_id),
    )
    return {int(b) for (b,) in later} | {int(b) for (b,) in over}


#: A batch's log rows, found by the span of its fetches on the sites' index of the log
#: (an index of ``crawl_log.batch_id`` would cost every fetch recorded a seventh more).
_BATCH_LOG = (
    "FROM crawl_log WHERE site_id IN (SELECT id FROM sites)"
    " AND fetched_at >= ? AND fetched_at <= ? AND batch_id = ?"
)


def _undo(db: Database, batch_id: int) -> tuple[int, int, int]:
    """Take one batch back: (log rows removed, states restored, states removed)."""
    first, last = db.rows(
        "SELECT first_fetched_at, last_fetched_at FROM crawl_batches WHERE id = ?", (batch_id,)
    )[0]
    logged = (first or "", last or "", batch_id)
    fetches = int(db.rows(f"SELECT count(*) {_BATCH_LOG}", logged)[0][0])
    written = _count(db, "SELECT count(*) FROM crawl_state WHERE batch_id = ?", batch_id)
    restored = _count(db, "SELECT count(*) FROM crawl_replaced WHERE batch_id = ?", batch_id)
    db.execute("DELETE FROM crawl_state WHERE batch_id = ?", (batch_id,))
    db.execute(_RESTORE, (batch_id,))
    db.execute("DELETE FROM crawl_replaced WHERE batch_id = ?", (batch_id,))
    db.execute(f"DELETE {_BATCH_LOG}", logged)
    return fetches, restored, written - restored


def _count(db: Database, sql: str, batch_id: int) -> int:
    return int(db.rows(sql, (batch_id,))[0][0])


def _not_alone(wanted: Sequence[int], needed: Sequence[int], order: Sequence[int]) -> str:
    alone = "alone" if len(wanted) == 1 else "without the others"
    verb = "recorded" if len(needed) == 1 else "recorded each"
    return (
        f"{_named(wanted)} cannot be taken back {alone}: {_named(needed)} {verb} fetches of "
        f"the same URLs later; take them back together, newest first: "
        f"auditor crawled --take-back {' '.join(map(str, order))}"
    )


def _in_turn(ids: Sequence[int]) -> str:
    return (
        f"{_named(ids)} recorded fetches of the same URLs in turn (crawls fed at once): "
        "those URLs' states hold fetches of each, so none of them can be taken back"
    )


def _named(ids: Sequence[int]) -> str:
    """``batch 3``, ``batches 3 and 1``, ``batches 5, 3 and 1``."""
    if len(ids) == 1:
        return f"batch {ids[0]}"
    return f"batches {', '.join(map(str, ids[:-1]))} and {ids[-1]}"
