"""The crawl log's side of the history: what the crawler fetched (``crawl_state``,
``crawl_log``), its batches and take-backs, its counts and pending fetches, as methods of
:class:`~auditor.history.History` (a mixin over the modules that hold the SQL:
:mod:`.crawl`, :mod:`.batches`, :mod:`.crawlcounts`).

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.history import batches, crawl
from auditor.history.backend import Database
from auditor.history.crawlcounts import (
    CrawlLogCounts,
    PendingFetches,
    read_crawl_counts,
    read_pending,
)

__all__ = ["CrawlHistory"]


class CrawlHistory:
    """The crawler's fetches in the history (mixed into ``History``: its database and
    its sites' ids)."""

    _db: Database

    def site_id(self, origin: str) -> int | None:
        """The id of a known site (``History`` gives it)."""
        raise NotImplementedError

    def crawl_states(self, site_id: int, locs: Sequence[str]) -> dict[str, crawl.CrawlState]:
        """What the history knows of the crawler's fetches of ``locs`` (those it has)."""
        return crawl.crawl_states(self._db, site_id, locs)

    def stream_crawl_states(self, site_id: int) -> Iterator[crawl.CrawlState]:
        """Every URL of a site the crawler fetched (text blocks left out), in batches."""
        return crawl.stream_crawl_states(self._db, site_id)

    def save_fetches(
        self,
        site_id: int,
        states: Sequence[crawl.CrawlState],
        log: Sequence[crawl.CrawlLogRow],
        recorded_at: datetime,
        *,
        batch: int | None = None,
        sources: Sequence[str] = (),
    ) -> int:
        """Save part of a crawl batch: one site's fetches in one transaction (the states
        they replace kept for a take-back, the URLs' new states, the log rows); the
        site's log rows older than :data:`~auditor.history.crawl.LOG_KEEP_DAYS` before
        ``recorded_at`` go. ``batch``: the batch's id, None to start a new one naming
        ``sources`` (:mod:`auditor.history.batches`). Returns the batch's id."""
        keep_after = recorded_at - timedelta(days=crawl.LOG_KEEP_DAYS)
        return batches.save_batch(
            self._db, site_id, states, log, recorded_at, keep_after, batch_id=batch, sources=sources
        )

    def take_back(self, ids: Sequence[int], *, now: datetime | None = None) -> batches.TakeBack:
        """Take crawl batches back (:func:`auditor.history.batches.take_back`): their
        fetches removed, the states they replaced restored; UsageError, nothing touched,
        when one cannot be."""
        return batches.take_back(self._db, ids, now or datetime.now(UTC))

    def crawl_batches(self, ids: Collection[int] | None = None) -> list[batches.CrawlBatch]:
        """The crawl batches of ``ids`` (every one by default), by id."""
        return batches.crawl_batches(self._db, ids)

    def crawl_counts(
        self, site: str, since: datetime, until: datetime | None = None
    ) -> dict[str, crawl.CrawlCounts]:
        """Per sub-sitemap, what the crawler's fetches in ``[since, until)`` showed of
        lastmod (empty for a site the history does not know)."""
        return dict(self.crawl_log_counts(site, since, until).keyed)

    def crawl_log_counts(
        self,
        site: str,
        since: datetime,
        until: datetime | None = None,
        *,
        by_url: Collection[str] = (),
        batches: bool = False,
        pending: bool = True,
        site_id: int | None = None,
    ) -> CrawlLogCounts:
        """What the crawler's fetches in ``[since, until)`` showed of lastmod: per
        sub-sitemap, and URL by URL for the files ``by_url`` (those split into groups:
        :mod:`auditor.history.crawlcounts`), the fetches pending a walk after them counted
        as such unless ``pending`` is False; empty for a site the history does not know.
        ``batches``: the crawl batches they came from too; ``site_id``: the site's id when
        the caller has it (no look-up)."""
        site_id = self.site_id(site) if site_id is None else site_id
        if site_id is None:
            return CrawlLogCounts()
        return read_crawl_counts(
            self._db, site_id, since, until, by_url, batches=batches, pending=pending
        )

    def pending_fetches(
        self, site_id: int, since: datetime | None = None, *, keys: bool = True
    ) -> PendingFetches:
        """The site's compared fetches pending a walk after them (fetched since ``since``,
        when given): :mod:`auditor.crawl.resolve` judges them (``keys``: with what writing
        the judgement back needs)."""
        return read_pending(self._db, site_id, since, keys=keys)

    def save_resolution(
        self, site_id: int, decided: Iterable[tuple[bool | None, Any, str, str]]
    ) -> int:
        """Keep what a walk decided of pending fetches: (``lastmod_advanced``, the row's key,
        loc, stored ``fetched_at``) each, no longer pending; how many."""
        return crawl.save_resolution(self._db, site_id, decided)

    def refuse_hashes(self, site_id: int, recorded_at: datetime) -> None:
        """Take the hash comparisons a ``crawled`` run recorded at ``recorded_at`` for a
        site out of its evidence and rates (a log of noisy hashes: auditor.crawl.noise)."""
        crawl.refuse_hashes(self._db, site_id, recorded_at)
