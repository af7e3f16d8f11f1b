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

import hashlib
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.crawl.noise import HashNoise, quiet
from auditor.crawl.records import FetchRecord, fetch_record
from auditor.crawl.resolve import PENDING, UNTOLD, Spans, advanced_of, judge, spans
from auditor.history.crawl import CrawlLogRow, CrawlState

if TYPE_CHECKING:
    import pandas as pd

    from auditor.evidence import PageEvidence
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


@dataclass(frozen=True, slots=True)
class Listed:
    """A URL's place in a walk of its site: its sub-sitemap and its lastmod there, when
    that walk was made (None: not known), and the first walk known to be made after the
    fetch, when there is one (a backfill's next capture): :mod:`auditor.crawl.resolve`."""

    sitemap: str
    lastmod: datetime | None
    precision: str | None
    walked_at: datetime | None = None
    next_walk: Listed | None = None


@dataclass(frozen=True)
class _Walk:
    """The walk a site's listing came from: when it was made, and the files it read."""

    at: datetime
    files: frozenset[str]


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
        self.walks: dict[str, _Walk | None] = {}  # the walk of each default listing
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
            listing = _listed(current[2]) if current else {}
            self.listings[origin] = listing
            files = frozenset(listed.sitemap for listed in listing.values())
            self.walks[origin] = _Walk(current[0], files) if current else None
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
        judged = _Judged.of(fresh, states, listing, self.walks.get(origin))
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

    def _count(self, origin: str, judged: _Judged, listing: Mapping[str, Listed]) -> None:
        s, log = self.summary, judged.log
        s.recorded += len(log)
        s.sites[origin] = s.sites.get(origin, 0) + len(log)
        s.blocked += len(judged.blocked)
        self.noise.setdefault(origin, HashNoise()).merge(judged.noise)
        for i, row in enumerate(log):
            s.not_listed += row.loc not in listing
            if not _good(row.status) or i in judged.blocked:
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


def _good(status: int | None) -> bool:
    return status is not None and (200 <= status < 300 or status == 304)


@dataclass
class _Judged:
    """One site's batch judged: the URLs' new states and the log rows, in fetch order."""

    states: dict[str, CrawlState]
    log: list[CrawlLogRow]
    blocked: set[int] = field(default_factory=set)  # log rows answered with a bot wall
    noise: HashNoise = field(default_factory=HashNoise)  # its comparisons by hash alone

    @classmethod
    def of(
        cls,
        records: list[FetchRecord],
        states: Mapping[str, CrawlState],
        listing: Mapping[str, Listed],
        walk: _Walk | None = None,
    ) -> _Judged:
        """Judge ``records`` (sorted by time) against the stored ``states``; ``walk``: the
        one ``listing`` came from, where its entries do not say."""
        judged = cls(dict(states), [])
        evidence = _evidence([r for r in records if r.body is not None and _good(r.status)])
        changes = _body_changes(records, evidence, states, listing)
        rows: list[list[Any]] = []
        compared: list[_Compared] = []
        for record in records:
            before = judged.states.get(record.url)
            if before is not None and record.fetched_at <= before.fetched_at:
                continue  # the same URL twice in the batch at one instant
            listed = listing.get(record.url)
            page = evidence.get(id(record))
            if page is not None and page.error == "blocked":
                judged.blocked.add(len(rows))
            state, row = _apply(record, before, listed, page, changes.get(id(record)))
            judged.states[record.url] = state
            if row[_CHANGED] is not None and before is not None:
                compared.append((len(rows), before, record, listed))
            rows.append(row)
        judged.noise = _weigh(rows, compared, walk)
        judged.log = [CrawlLogRow(*row) for row in rows]
        return judged


#: A fetch compared with its URL's previous good fetch: its log row's place, that fetch's
#: state, the record, its listing (a tuple: one per fetch of a million-line log).
_Compared = tuple[int, CrawlState, FetchRecord, "Listed | None"]


def _weigh(rows: list[list[Any]], compared: list[_Compared], walk: _Walk | None) -> HashNoise:
    """Set what each compared fetch says of lastmod in its row (:mod:`auditor.crawl.resolve`):
    against the site's ``walk``, or (None) the walks each listing names, then the later one
    a backfill knows of; the batch's comparisons by hash alone, for :mod:`auditor.crawl.noise`."""
    noise = HashNoise()
    if not compared:
        return noise
    listings = [listed for _, _, _, listed in compared]
    inputs = _judged_inputs(listings, walk.at if walk else None)
    fetched = spans(
        [r.fetched_at.timestamp() for _, _, r, _ in compared],
        [r.time_precision for _, _, r, _ in compared],
    )
    intervals = np.array([rows[at][_INTERVAL] for at, _, _, _ in compared], dtype=float)
    previous = spans(  # the previous good fetch, the interval before
        fetched[0] - intervals * 86_400, [b.ok_fetched_precision for _, b, _, _ in compared]
    )
    codes = judge(previous, fetched, *inputs)
    if walk is None:  # a backfill's next capture: the earliest walk after the fetch
        later = [listed.next_walk if listed else None for listed in listings]
        retry = (codes == PENDING) & np.array([n is not None for n in later])
        if retry.any():
            codes = np.where(retry, judge(previous, fetched, *_judged_inputs(later)), codes)
    for i in np.flatnonzero(~inputs[1]).tolist():  # fetches of URLs the walk did not list:
        file = rows[compared[i][0]][_SITEMAP]
        if file is None:  # never listed: evidence for no segment, now or later
            codes[i] = UNTOLD
        elif walk is not None and file not in walk.files:  # the walk did not read its file
            codes[i] = PENDING
    hashed, differ = [], []
    for (at, _, _, _), code in zip(compared, codes.tolist(), strict=True):
        row = rows[at]
        row[_ADVANCED], row[_PENDING] = advanced_of(code), code == PENDING
        hashed.append(row[_METHOD] == "hash")
        differ.append(row[_CHANGED])
    by_hash = np.array(hashed, dtype=bool)
    if by_hash.any():
        calm = quiet(previous, fetched, *inputs)[by_hash]
        waiting = (codes == PENDING)[by_hash]
        noise.count(np.array(differ, dtype=bool)[by_hash], calm, waiting)
    return noise


def _judged_inputs(
    listings: Sequence[Listed | None], walked_at: datetime | None = None
) -> tuple[Spans, np.ndarray, np.ndarray]:
    """The lastmod spans, whether listed, and when walked, of each of ``listings`` (all
    in the walk made at ``walked_at``, or each in its own)."""
    lastmod = spans(
        [i.lastmod.timestamp() if i and i.lastmod else math.nan for i in listings],
        [i.precision if i else None for i in listings],
    )
    listed = np.array([i is not None for i in listings], dtype=bool)
    if walked_at is not None:
        return lastmod, listed, np.full(len(listings), walked_at.timestamp())
    walked = [i.walked_at.timestamp() if i and i.walked_at else math.nan for i in listings]
    return lastmod, listed, np.array(walked, dtype=float)


def _evidence(records: list[FetchRecord]) -> dict[int, PageEvidence]:
    """Each body's page evidence, a dateModified shared by the batch's pages marked."""
    if not records:
        return {}
    from auditor.evidence import mark_shared_date_modified, read_page

    pages = [
        read_page(
            r.body or b"",
            url=r.url,
            headers=dict(r.headers),
            status=200 if r.status == 304 else r.status or 200,
            fetched_at=r.fetched_at,
            truncated=r.truncated,
        )
        for r in records
    ]
    pages = mark_shared_date_modified(pages)
    return {id(r): p for r, p in zip(records, pages, strict=True)}


def _body_changes(
    records: list[FetchRecord],
    evidence: Mapping[int, PageEvidence],
    states: Mapping[str, CrawlState],
    listing: Mapping[str, Listed],
) -> dict[int, bool]:
    """Template-aware change of each body against the URL's stored copy (its blocks):
    the batch's first fetch of each URL only (a second fetch of it in the same batch is
    compared on its hash)."""
    from auditor.evidence import Fetch, compare_runs

    current: list[Fetch] = []
    previous: list[Fetch] = []
    keys: dict[str, int] = {}
    for record in records:
        page, state = evidence.get(id(record)), states.get(record.url)
        fp = page.fingerprint if page is not None and page.ok else None
        if fp is None or state is None or not state.fp_blocks or record.url in keys:
            continue
        group = listing[record.url].sitemap if record.url in listing else ""
        keys[record.url] = id(record)
        current.append(Fetch(record.url, group, fp.exact, fp.simhash, fp.blocks or None))
        previous.append(Fetch(record.url, group, state.fp_exact, state.fp_simhash, state.fp_blocks))
    if not current:
        return {}
    comparison = compare_runs(current, previous)
    return {keys[url]: change.changed for url, change in comparison.pages.items() if url in keys}


#: Where :func:`_apply`'s row values stand (:class:`CrawlLogRow`'s fields, in order).
_ROW_FIELDS = [f.name for f in fields(CrawlLogRow)]
_CHANGED, _ADVANCED = _ROW_FIELDS.index("content_changed"), _ROW_FIELDS.index("lastmod_advanced")
_PENDING, _METHOD = _ROW_FIELDS.index("pending"), _ROW_FIELDS.index("change_method")
_INTERVAL, _SITEMAP = _ROW_FIELDS.index("interval_days"), _ROW_FIELDS.index("sitemap")


def _apply(
    record: FetchRecord,
    before: CrawlState | None,
    listed: Listed | None,
    page: PageEvidence | None,
    body_changed: bool | None,
) -> tuple[CrawlState, list[Any]]:
    """The URL's state after ``record``, and the values of the record's log row (what it
    says of lastmod set by :func:`_weigh`, once for the batch)."""
    sitemap = listed.sitemap if listed else (before.sitemap if before else None)
    lastmod = listed.lastmod if listed else None
    precision = listed.precision if listed else None
    if not _good(record.status) or (page is not None and page.error == "blocked"):
        state = _failed(record, before, sitemap)  # a wall is no copy: the one kept stays
        row: list[Any] = [
            record.url, sitemap, record.fetched_at, record.status, record.content_hash,
            lastmod, None, None, None, None, None, record.time_precision, False, None,
        ]  # fmt: skip
        return state, row
    copy = {**_copy_of(record, page), **_indexing(record, page)}
    changed, method = _changed(record, before, copy, body_changed)
    interval = _interval(before, record)
    dated = _dated(record, before, page, changed)
    undated = changed if dated is None else None  # an interval counts once: dated first
    state = CrawlState(
        loc=record.url,
        sitemap=sitemap,
        fetched_at=record.fetched_at,
        status=record.status,
        failures=0,
        ok_fetched_at=record.fetched_at,
        lastmod=lastmod,
        lastmod_precision=precision,
        **(copy if record.status != 304 or before is None else _kept_copy(before)),
        intervals=(before.intervals if before else 0) + (undated is not None),
        changes=(before.changes if before else 0) + bool(undated),
        observed_days=(before.observed_days if before else 0.0)
        + (interval if undated is not None and interval is not None else 0.0),
        dated_changes=(before.dated_changes if before else 0) + (dated[0] if dated else 0),
        dated_days=(before.dated_days if before else 0.0) + (dated[1] if dated else 0.0),
        ok_fetched_precision=record.time_precision,
    )
    row = [
        record.url, sitemap, record.fetched_at, record.status,
        copy["content_hash"] or copy["fp_exact"], lastmod, changed, None, interval,
        _date_agrees(page, listed), before.ok_fetched_precision if before else None,
        record.time_precision, False, method,
    ]  # fmt: skip
    return state, row


def _dated(
    record: FetchRecord,
    before: CrawlState | None,
    page: PageEvidence | None,
    changed: bool | None,
) -> tuple[int, float] | None:
    """What a credible dateModified says of the page's changes (:mod:`auditor.planner.rates`):
    (dated changes, days of exposure), or None when it says nothing here.

    On a first fetch: a change at the stated moment and none since (none at all when the
    page states it was published then). Later: a change at the stated moment when the
    content changed and the date moved past the previous fetch; the whole interval
    without one when neither did; nothing when they disagree (the interval is then read
    as undated) or the date is coarser than a day."""
    moment = _stated_change(page, record.fetched_at)
    if moment is None or page is None:
        return None
    previous = before.ok_fetched_at if before else None
    now = record.fetched_at
    if previous is None:
        return int(not _never_changed(page)), _days(now - moment)
    if changed is None or changed != (moment > previous):
        return None
    if changed:
        return 1, _days(now - moment)
    return 0, _days(now - previous)


def _stated_change(page: PageEvidence | None, fetched_at: datetime) -> datetime | None:
    """When a page's credible dateModified says it last changed (a date's middle), if
    at most a day coarse and not after the fetch."""
    dm = page.date_modified if page is not None and page.ok else None
    if dm is None or not dm.credible or dm.precision in ("month", "year"):
        return None
    moment = dm.value + timedelta(hours=12) if dm.precision == "day" else dm.value
    return min(moment, fetched_at) if dm.value <= fetched_at else None


def _never_changed(page: PageEvidence) -> bool:
    """The page states it was modified when it was published."""
    published, modified = page.date_published, page.date_modified
    return published is not None and modified is not None and published.value == modified.value


def _days(span: timedelta) -> float:
    return max(span.total_seconds() / 86_400, 0.0)


def _failed(record: FetchRecord, before: CrawlState | None, sitemap: str | None) -> CrawlState:
    """The state after a failed fetch: the copy kept, a failure counted, and where a
    redirect led."""
    target = _redirect_target(record)
    if before is None:
        return CrawlState(
            record.url, sitemap, record.fetched_at, record.status, 1, redirect_to=target
        )
    return replace(
        before,
        sitemap=sitemap,
        fetched_at=record.fetched_at,
        status=record.status,
        failures=before.failures + 1,
        redirect_to=target,
    )


def _redirect_target(record: FetchRecord) -> str | None:
    """The absolute URL a 3xx record's ``Location`` names, or None."""
    if record.status is None or not 300 <= record.status < 400 or record.status == 304:
        return None
    from auditor.evidence.indexing import header_value, resolved

    return resolved(header_value(record.headers, "location"), record.url)


def _indexing(record: FetchRecord, page: PageEvidence | None) -> dict[str, Any]:
    """What a good fetch's copy says of its indexing: read from its page, else from its
    headers alone (a fetch without body)."""
    if page is not None:
        return {"noindex": page.noindex, "canonical": page.canonical}
    headers = record.headers
    if not headers:  # most log lines: nothing to read
        return {"noindex": None, "canonical": None}
    from auditor.evidence.indexing import canonical_of, noindex_of

    return {
        "noindex": noindex_of(headers, None),
        "canonical": canonical_of(headers, None, record.url),
    }


def _copy_of(record: FetchRecord, page: PageEvidence | None) -> dict[str, Any]:
    """The fingerprints of the copy ``record`` gives the crawler."""
    fp = page.fingerprint if page is not None and page.ok else None
    exact = fp.exact if fp else None
    if exact is None and record.body is not None:  # not HTML: its bytes are its content
        exact = hashlib.sha256(record.body).hexdigest()
    return {
        "content_hash": record.content_hash,
        "fp_exact": exact,
        "fp_simhash": fp.simhash if fp else None,
        "fp_blocks": (fp.blocks or None) if fp else None,
    }


def _kept_copy(before: CrawlState) -> dict[str, Any]:
    """A 304 keeps the copy the crawler held."""
    return {
        "content_hash": before.content_hash,
        "fp_exact": before.fp_exact,
        "fp_simhash": before.fp_simhash,
        "fp_blocks": before.fp_blocks,
        "noindex": before.noindex,
        "canonical": before.canonical,
    }


def _changed(
    record: FetchRecord,
    before: CrawlState | None,
    copy: Mapping[str, Any],
    body_changed: bool | None,
) -> tuple[bool | None, str | None]:
    """Did the content change since the previous good fetch (None: cannot tell), and
    what was it read on: ``not-modified`` (a 304), ``body`` (its main content, or its
    bytes when not HTML), ``hash`` (the crawler's hash alone)."""
    if before is None or before.ok_fetched_at is None:
        return None, None
    if record.status == 304:
        return False, "not-modified"
    if body_changed is not None:
        return body_changed, "body"
    if copy["fp_exact"] is not None and before.fp_exact is not None:
        return bool(copy["fp_exact"] != before.fp_exact), "body"
    if copy["content_hash"] is not None and before.content_hash is not None:
        return bool(copy["content_hash"] != before.content_hash), "hash"
    return None, None


def _interval(before: CrawlState | None, record: FetchRecord) -> float | None:
    if before is None or before.ok_fetched_at is None:
        return None
    return max((record.fetched_at - before.ok_fetched_at).total_seconds() / 86_400, 0.0)


def _date_agrees(page: PageEvidence | None, listed: Listed | None) -> bool | None:
    """Does the page's credible dateModified agree with its lastmod? None: no check."""
    if page is None or not page.ok or listed is None or listed.lastmod is None:
        return None
    dm = page.date_modified
    if dm is None or not dm.credible or listed.precision is None:
        return None
    from auditor.evidence import compare_lastmod

    return compare_lastmod(listed.lastmod, listed.precision, dm).agrees


def _listed(entries: pd.DataFrame) -> dict[str, Listed]:
    """Each listed URL's sub-sitemap and lastmod."""
    from auditor.walker.inventory import entry_rows

    return {
        loc: Listed(sitemap, lastmod, precision)
        for loc, sitemap, lastmod, precision in entry_rows(entries)
    }
