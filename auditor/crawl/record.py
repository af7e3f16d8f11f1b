"""Recording the crawler's fetches: each URL's last fetch for plans, and what each fetch
shows of lastmod, as evidence for the verdicts.

A fetch is compared with the URL's previous good fetch (its copy the crawler holds):

- with a body, as the audit compares its panel pages: the page's evidence is read
  (:func:`auditor.evidence.read_page`: credible ``dateModified``, fingerprints and text
  blocks) and its main content compared, the site's template learned from the batch's
  pages and the stored copies being left out (:func:`auditor.evidence.compare_runs`);
- with the crawler's content hash only, on that hash (the crawler's hash sees every byte,
  template included: a page whose footer shows the time reads as changed every time);
- a 304 Not Modified is unchanged; with neither body nor hash the fetch only dates the
  copy, and says nothing of change.

What a compared fetch says of lastmod (``lastmod_advanced``) is judged against a walk of
the sitemaps made after it (:mod:`auditor.crawl.resolve`): the freshest walk of the site
(the plan's, else the latest audit's) decides when made after the fetch, and can prove an
advance when made before; otherwise the fetch is ``pending`` until the next walk (a
plan's or an audit's) judges it, counted neither way meanwhile. Each batch is judged at
once, on arrays. A run whose comparisons by the crawler's hash change on nearly every
re-fetch is taken back from the evidence when the run ends (:mod:`auditor.crawl.noise`).
A failed fetch (no answer, or a status of 400 or more) keeps the copy as it was and
counts a failure, for the plan's backoff.

A record at or before the URL's last recorded fetch is skipped (``already_recorded``):
feeding the same log twice records it once. A URL of no audited site is counted
(``unknown_site``) and ignored; one of an audited site listed in none of its sitemaps is
recorded (it dates the copy) but is not evidence for any sub-sitemap.

Touches: the database.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from auditor.crawl.judge import Judged, Listed, Walk, good_status, listed_of
from auditor.crawl.noise import HashNoise
from auditor.crawl.records import FetchRecord, fetch_record
from auditor.history.crawl import CrawlState

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["BATCH", "CrawlSummary", "Listed", "Lookup", "record_fetches", "site_origin"]

_log = logging.getLogger(__name__)

#: Records read, judged and saved at a time (one transaction a site per batch): memory
#: stays bounded whatever the log's length.
BATCH = 2_000


@dataclass
class CrawlSummary:
    """What :func:`record_fetches` did with the records it was given."""

    recorded: int = 0  # fetches saved
    unknown_site: int = 0  # URLs of no audited site: counted and ignored
    already_recorded: int = 0  # at or before the URL's last recorded fetch: skipped
    not_listed: int = 0  # recorded, but in no sitemap of its site: no evidence
    failed: int = 0  # recorded fetches that failed (no answer, status >= 400, a bot wall)
    blocked: int = 0  # of the failed, those answered with a bot wall (auditor.http.walls)
    changed: int = 0  # recorded fetches whose content changed since the previous good one
    unchanged: int = 0
    unknown_change: int = 0  # good fetches whose change could not be told
    sites: dict[str, int] = field(default_factory=dict)  # fetches recorded per site
    #: The batch these fetches were recorded as (``auditor crawled --take-back`` takes it
    #: back: :mod:`auditor.history.batches`); None when nothing was recorded.
    batch_id: int | None = None
    #: Of the changed and unchanged, those waiting for a walk of the sitemaps made after
    #: them to be weighed against lastmod (:mod:`auditor.crawl.resolve`).
    pending: int = 0
    #: Comparisons by the crawler's hash not counted: the site's hashes looked noisy
    #: (:mod:`auditor.crawl.noise`); what was found, per site.
    refused: int = 0
    noisy: dict[str, HashNoise] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {
            "recorded": self.recorded,
            "unknown_site": self.unknown_site,
            "already_recorded": self.already_recorded,
            "not_listed": self.not_listed,
            "failed": self.failed,
            "blocked": self.blocked,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "unknown_change": self.unknown_change,
            "sites": dict(sorted(self.sites.items())),
            "batch": self.batch_id,
            "pending": self.pending,
            "refused": self.refused,
            "noisy_hashes": [
                {"site": site, "compared": n.compared, "differ": n.differ,
                 "detail": n.sentence()}
                for site, n in sorted(self.noisy.items())
            ],
        }  # fmt: skip


def site_origin(url: str) -> str | None:
    """The origin of an http(s) URL as the history names sites (``https://example.com``,
    a port only when not the scheme's default; every spelling of one host as one, see
    :func:`auditor.http.hosts.origin`), or None."""
    from auditor.http.hosts import origin

    return origin(url)


#: Where a URL was listed when it was fetched, and with which lastmod: by default the
#: freshest walk's listing; a backfill gives the sitemaps captured before each fetch.
Lookup = Callable[[str, datetime], "Listed | None"]


def record_fetches(
    history: History,
    fetches: Iterable[FetchRecord | Mapping[str, Any]],
    *,
    now: datetime | None = None,
    lookup: Lookup | None = None,
    batch: int = BATCH,
    sources: Sequence[str] = (),
) -> CrawlSummary:
    """Record the crawler's fetches (module docstring); what was done with them.

    ``fetches`` are :class:`~auditor.crawl.records.FetchRecord` values or mappings with
    the same keys, in any order; they are read ``batch`` at a time (one transaction a
    site each), so a log of any length streams. ``now`` (aware) is the recording instant,
    the real clock by default.
    ``lookup(url, fetched_at)`` says where each URL was listed at its fetch (a backfill's
    captured sitemaps); by default, the freshest walk of its site.
    The call is one crawl batch of the history, naming ``sources`` (the logs read), made
    with its first save: its id is the summary's ``batch_id``.
    """
    summary = CrawlSummary()
    recorder = _Recorder(history, summary, now, lookup, tuple(sources))
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    for records in _batches(fetches, batch):
        recorder.record(records)
    recorder.finish()
    return summary


def _batches(
    fetches: Iterable[FetchRecord | Mapping[str, Any]], size: int
) -> Iterator[list[FetchRecord]]:
    batch: list[FetchRecord] = []
    for item in fetches:
        batch.append(fetch_record(item))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Recorder:
    """Records batches for one call: the sites' ids and freshest walks read once."""

    def __init__(
        self,
        history: History,
        summary: CrawlSummary,
        now: datetime | None,
        lookup: Lookup | None = None,
        sources: tuple[str, ...] = (),
    ) -> None:
        self.history = history
        self.summary = summary
        self.now = now
        self.lookup = lookup
        self.sources = sources
        self.site_ids = history.site_ids()
        self.listings: dict[str, dict[str, Listed]] = {}
        self.walks: dict[str, Walk | None] = {}  # the walk of each default listing
        #: One instant for the whole run: its rows are found by it (:meth:`finish`).
        self.recorded_at = now or datetime.now(UTC)
        self.noise: dict[str, HashNoise] = {}  # each site's comparisons by hash alone

    def record(self, batch: list[FetchRecord]) -> None:
        """Judge and save one batch, a transaction per site."""
        by_site: dict[str, list[FetchRecord]] = {}
        for record in batch:
            origin = self._origin(record.url)
            if origin is None or origin not in self.site_ids:
                self.summary.unknown_site += 1
                continue
            by_site.setdefault(origin, []).append(record)
        for origin, records in by_site.items():
            self._record_site(origin, sorted(records, key=lambda r: r.fetched_at))

    def _origin(self, url: str) -> str | None:
        """The site of ``url``: its text up to the path when that is a known origin as
        written (the common case, one slice), else parsed."""
        end = url.find("/", url.find("://") + 3)
        head = url if end < 0 else url[:end]
        return head if head in self.site_ids else site_origin(url)

    def _listing_of(self, origin: str, records: list[FetchRecord]) -> Mapping[str, Listed]:
        """Where each of ``records`` was listed when fetched (by URL: with a lookup, a
        round holds each URL once)."""
        if self.lookup is None:
            return self._listing(origin)
        found: dict[str, Listed] = {}
        for record in records:
            if record.url not in found:
                listed = self.lookup(record.url, record.fetched_at)
                if listed is not None:
                    found[record.url] = listed
        return found

    def _listing(self, origin: str) -> dict[str, Listed]:
        if origin not in self.listings:
            current = self.history.current_inventory(origin)
            listing = listed_of(current[2]) if current else {}
            self.listings[origin] = listing
            files = frozenset(listed.sitemap for listed in listing.values())
            self.walks[origin] = Walk(current[0], files) if current else None
        return self.listings[origin]

    def _record_site(self, origin: str, records: list[FetchRecord]) -> None:
        if self.lookup is None:
            self._record_round(origin, records)
            return
        for round_ in _rounds(records):  # each fetch of a URL against its own listing
            self._record_round(origin, round_)

    def _record_round(self, origin: str, records: list[FetchRecord]) -> None:
        site_id = self.site_ids[origin]
        states = self.history.crawl_states(site_id, [r.url for r in records])
        listing = self._listing_of(origin, records)
        fresh = [r for r in records if _is_new(r, states)]
        self.summary.already_recorded += len(records) - len(fresh)
        judged = Judged.of(fresh, states, listing, self.walks.get(origin))
        if not judged.log:
            return
        self.summary.batch_id = self.history.save_fetches(
            site_id,
            list(judged.states.values()),
            judged.log,
            self.recorded_at,
            batch=self.summary.batch_id,
            sources=self.sources,
        )
        self._count(origin, judged, listing)

    def _count(self, origin: str, judged: Judged, listing: Mapping[str, Listed]) -> None:
        s, log = self.summary, judged.log
        s.recorded += len(log)
        s.sites[origin] = s.sites.get(origin, 0) + len(log)
        s.blocked += len(judged.blocked)
        self.noise.setdefault(origin, HashNoise()).merge(judged.noise)
        for i, row in enumerate(log):
            s.not_listed += row.loc not in listing
            if not good_status(row.status) or i in judged.blocked:
                s.failed += 1
            elif row.content_changed is None:
                s.unknown_change += 1
            elif row.content_changed:
                s.changed += 1
            else:
                s.unchanged += 1
            s.pending += row.pending

    def finish(self) -> None:
        """The run's hash comparisons of each site whose hashes look noisy taken back
        (:mod:`auditor.crawl.noise`), and the summary told."""
        for origin, noise in self.noise.items():
            if not noise.noisy:
                continue
            self.history.refuse_hashes(self.site_ids[origin], self.recorded_at)
            s = self.summary
            s.changed -= noise.differ
            s.unchanged -= noise.compared - noise.differ
            s.pending -= noise.pending
            s.refused += noise.compared
            s.noisy[origin] = noise
            _log.info("%s: %s", origin, noise.sentence())  # the summary tells it


def _rounds(records: list[FetchRecord]) -> list[list[FetchRecord]]:
    """``records`` (in time order) cut so that each round holds a URL once: its first
    fetches, then its second ones..."""
    rounds: list[list[FetchRecord]] = []
    seen: dict[str, int] = {}
    for record in records:
        k = seen.get(record.url, 0)
        seen[record.url] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(record)
    return rounds


def _is_new(record: FetchRecord, states: Mapping[str, CrawlState]) -> bool:
    state = states.get(record.url)
    return state is None or record.fetched_at > state.fetched_at
