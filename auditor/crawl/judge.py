"""Judging a batch of one site's fetches: each URL's new state and the fetch's log row,
against the stored states and the site's listing (:mod:`auditor.crawl.record` reads,
batches and saves; this module compares). How a fetch is compared (body, hash, 304) and
what it says of lastmod are described there.

Touches: nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.crawl.noise import HashNoise, quiet
from auditor.crawl.records import FetchRecord
from auditor.crawl.resolve import PENDING, UNTOLD, Spans, advanced_of, judge, spans
from auditor.history.crawl import CrawlLogRow, CrawlState

if TYPE_CHECKING:
    import pandas as pd

    from auditor.evidence import PageEvidence

__all__ = ["Judged", "Listed", "Walk", "good_status", "listed_of"]


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
class Walk:
    """The walk a site's listing came from: when it was made, and the files it read."""

    at: datetime
    files: frozenset[str]


def good_status(status: int | None) -> bool:
    return status is not None and (200 <= status < 300 or status == 304)


@dataclass
class Judged:
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
        walk: Walk | None = None,
    ) -> Judged:
        """Judge ``records`` (sorted by time) against the stored ``states``; ``walk``: the
        one ``listing`` came from, where its entries do not say."""
        judged = cls(dict(states), [])
        evidence = _evidence([r for r in records if r.body is not None and good_status(r.status)])
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
#: A change stated less than this many days before the fetch that saw it dates nothing:
#: that span is how soon the crawler came (hours, when it follows lastmod), not how often
#: the page changes. On a real site two such fetches gave an edited post 2 dated changes
#: in 0.25 days (2.7 a day once shrunk, the lowest index of its plan) where its edits were
#: weeks apart. The interval is then read undated (it changed), a first fetch not at all.
MIN_DATED_DAYS = 1.0


def _weigh(rows: list[list[Any]], compared: list[_Compared], walk: Walk | None) -> HashNoise:
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
    if not good_status(record.status) or (page is not None and page.error == "blocked"):
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
    as undated), the date is coarser than a day, or the change is younger than
    :data:`MIN_DATED_DAYS` at the fetch (read as undated too)."""
    moment = _stated_change(page, record.fetched_at)
    if moment is None or page is None:
        return None
    if _days(record.fetched_at - moment) < MIN_DATED_DAYS:
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


def listed_of(entries: pd.DataFrame) -> dict[str, Listed]:
    """Each listed URL's sub-sitemap and lastmod."""
    from auditor.walker.inventory import entry_rows

    return {
        loc: Listed(sitemap, lastmod, precision)
        for loc, sitemap, lastmod, precision in entry_rows(entries)
    }
