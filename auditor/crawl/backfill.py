"""Backfill: a WARC's past fetches, dated against the sitemaps it captured.

A crawler that archives a site in WARC files often captured its sitemaps too, day after
day. ``auditor crawled --backfill`` reads such a file twice:

1. its **sitemap captures**: responses of an audited site whose body is a sitemap (XML
   ``urlset``, gzip'd or not), read by the walker as local files (an index's children
   are not followed: each child the crawler captured is a capture of its own), each URL's
   lastmod kept with the capture's time;
2. its **page captures**, recorded as :func:`~auditor.crawl.record.record_fetches` does,
   each against the lastmod of the newest capture listing it at or before its fetch
   (a page fetched before any capture listed it is recorded without evidence), the
   earliest capture made after it deciding what it says of lastmod
   (:mod:`auditor.crawl.resolve`: the newest before can prove an advance, not more).

So a site audited once starts its second audit with weeks of observed changes behind
the verdict (the crawl log's fetches within 90 days before its latest run count as
pooled evidence), and each page's change rate with weeks of intervals.

Touches: the database, the disk.
"""

from __future__ import annotations

import bisect
import logging
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from auditor.crawl.logfile import read_crawl_log
from auditor.crawl.record import CrawlSummary, Listed, record_fetches, site_origin
from auditor.crawl.records import FetchRecord, LogProblem

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["MAX_SITEMAP_BYTES", "Captures", "backfill"]

_log = logging.getLogger(__name__)

#: A WARC-Date is written to the second: a capture decides a page capture's lastmod only
#: from the second after it on.
_DATE_SPAN = 1.0
#: A captured sitemap is read up to the protocol's 50 MB uncompressed.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
_ROOTS = (b"<urlset", b"<sitemapindex", b"<?xml")


class Captures:
    """Each URL's listings in the captured sitemaps: (time, sitemap, lastmod, precision),
    oldest first."""

    def __init__(self) -> None:
        self.listings: dict[str, list[tuple[float, Listed]]] = {}
        self.captured: set[tuple[str, datetime]] = set()  # (url, fetched_at) of captures
        self.files = 0
        self._times: dict[str, list[float]] = {}

    def add(self, record: FetchRecord) -> bool:
        """Read one capture; False when its body is no sitemap with URLs."""
        entries = _entries(record.body or b"")
        if entries is None:
            return False
        self.captured.add((record.url, record.fetched_at))
        self.files += 1
        moment = record.fetched_at.timestamp()
        for loc, lastmod, precision in entries:
            listed = Listed(record.url, lastmod, precision)
            self.listings.setdefault(loc, []).append((moment, listed))
        return True

    def sort(self) -> None:
        """Put every URL's listings in time order (a WARC is mostly in time order)."""
        for found in self.listings.values():
            found.sort(key=lambda pair: pair[0])
        self._times = {url: [t for t, _ in found] for url, found in self.listings.items()}

    def at(self, url: str, fetched_at: datetime) -> Listed | None:
        """Where ``url`` was listed at ``fetched_at``: the newest capture at or before,
        with the earliest capture made after the fetch as its next walk, the one that
        decides what the fetch says of lastmod (:mod:`auditor.crawl.resolve`)."""
        found = self.listings.get(url)
        if not found:
            return None
        times = self._times[url]
        i = bisect.bisect_right(times, fetched_at.timestamp())
        j = bisect.bisect_left(times, fetched_at.timestamp() + _DATE_SPAN)
        later = _walked(*found[j]) if j < len(found) else None
        return replace(_walked(*found[i - 1]), next_walk=later) if i else None


def backfill(
    history: History,
    open_log: Callable[[], BinaryIO],
    *,
    now: datetime | None = None,
    on_problem: Callable[[LogProblem], None] | None = None,
    sources: Sequence[str] = (),
) -> tuple[CrawlSummary, Captures]:
    """Record a WARC's page captures against its sitemap captures (module docstring);
    ``open_log()`` opens the file (it is read twice). Problems of the second reading go
    to ``on_problem``. The pages are one crawl batch naming ``sources``."""
    sites = set(history.site_ids())
    captures = Captures()
    with open_log() as stream:
        for item in read_crawl_log(stream, "warc", max_body=MAX_SITEMAP_BYTES):
            if isinstance(item, FetchRecord) and _maybe_sitemap(item, sites):
                captures.add(item)
    captures.sort()
    _log.info("backfill: %d sitemap captures, %d URLs", captures.files, len(captures.listings))
    with open_log() as stream:
        pages = _pages(read_crawl_log(stream, "warc"), captures, on_problem)
        summary = record_fetches(history, pages, now=now, lookup=captures.at, sources=sources)
    return summary, captures


def _walked(moment: float, listed: Listed) -> Listed:
    """``listed`` as found by a walk made at ``moment`` (seconds)."""
    return replace(listed, walked_at=datetime.fromtimestamp(moment, UTC))


def _pages(
    items: Iterator[FetchRecord | LogProblem],
    captures: Captures,
    on_problem: Callable[[LogProblem], None] | None,
) -> Iterator[FetchRecord]:
    for item in items:
        if isinstance(item, LogProblem):
            if on_problem is not None:
                on_problem(item)
        elif (item.url, item.fetched_at) not in captures.captured:
            yield item


def _maybe_sitemap(record: FetchRecord, sites: set[str]) -> bool:
    """A good answer of an audited site whose body opens like XML."""
    if record.body is None or record.status is None or not 200 <= record.status < 300:
        return False
    if site_origin(record.url) not in sites:
        return False
    head = record.body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(_ROOTS)


def _entries(body: bytes) -> list[tuple[str, datetime | None, str | None]] | None:
    """The (loc, lastmod, precision) of a captured urlset, read by the walker as a local
    file (nothing fetched: an index's children are not followed); None for no URLs."""
    from auditor.walker import WalkOptions
    from auditor.walker.inventory import entry_rows, load_inventory

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sitemap.xml"
        path.write_bytes(body)
        found = load_inventory(str(path), WalkOptions(max_files=1))
    if found.entries.empty:
        return None
    return [(loc, lastmod, precision) for loc, _, lastmod, precision in entry_rows(found.entries)]
