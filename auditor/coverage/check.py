"""A coverage check of one site: its sitemaps' URLs against what was fetched.

"Crawled" is a crawl log given (:func:`check_coverage`'s ``crawled``: records as
:func:`auditor.crawl.logfile.read_crawl_log` reads them, streamed) or, without one, the
history's record of the crawler's fetches (``crawl_state``, what ``auditor crawled``
kept). The audit's latest sample counts as fetched too (statuses, noindex, canonical),
not as crawled. The inventory is the freshest walk the history holds (the latest audit's,
or a later plan's).

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from auditor.coverage.findings import BITS, of_page, of_record, of_state
from auditor.coverage.inventory import InventoryIndex
from auditor.coverage.result import CoverageResult, SitemapCoverage, SitemapPair
from auditor.coverage.several import Several, several_of
from auditor.coverage.tracker import Example, Tracker
from auditor.crawl.record import site_origin
from auditor.crawl.records import FetchRecord
from auditor.history.state import state_locs

if TYPE_CHECKING:
    from auditor.history import History

__all__ = ["BATCH", "EXAMPLES", "check_coverage"]

#: Examples kept per sub-sitemap and finding (per pair of files, of orphans).
EXAMPLES = 5
#: Fetches looked up at a time.
BATCH = 10_000


def check_coverage(
    history: History,
    site: str,
    *,
    crawled: Iterable[FetchRecord] | None = None,
    crawled_from: str = "history",
    limit: int | None = EXAMPLES,
) -> CoverageResult:
    """The coverage of ``site`` (an origin the history audited): its listed URLs against
    ``crawled`` (a crawl log's records, any site's: others are counted and ignored) or,
    when None, the history's crawl record. ``limit`` bounds the examples (None keeps
    every finding but never-crawled URLs, for an export). ValueError for a site the
    history holds no inventory of."""
    found = history.current_inventory_blob(site)
    if found is None:
        raise ValueError(f"{site} has no inventory in the history (audit it first)")
    walked_at, files, blob = found
    inventory = InventoryIndex(state_locs(blob))
    tracker = Tracker(inventory, limit)
    pages = [p for p in history.latest_pages(site) if p.status is not None or p.error]
    tracker.observe([of_page(p) for p in pages])
    other = 0
    if crawled is None:
        site_id = history.site_id(site)
        states = history.stream_crawl_states(site_id) if site_id is not None else iter(())
        for states_batch in _batched(states):
            tracker.observe([of_state(s) for s in states_batch])
    else:
        mine = _Mine(site)
        for batch in _batched(crawled):
            tracker.observe([of_record(r) for r in batch if mine(r.url)])
        other = mine.others
    several = several_of(inventory, files, limit)
    return _result(site, crawled_from, walked_at, tracker, several, len(pages), other)


T = TypeVar("T")


def _batched(items: Iterable[T]) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(islice(iterator, BATCH)):
        yield batch


class _Mine:
    """Tells the site's URLs from others' (counted)."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.others = 0

    def __call__(self, url: str) -> bool:
        site = self.site
        if url.startswith(site) and url[len(site) : len(site) + 1] in ("", "/", "?", "#"):
            return True
        if site_origin(url) == site:
            return True
        self.others += 1
        return False


def _result(
    site: str,
    crawled_from: str,
    walked_at: datetime,
    tracker: Tracker,
    several: Several,
    sample_pages: int,
    other_sites: int,
) -> CoverageResult:
    inventory = tracker.inventory
    orphans = tracker.orphans
    return CoverageResult(
        site=site,
        crawled_from=crawled_from,
        walked_at=walked_at,
        urls=len(inventory),
        fetches=tracker.fetches,
        sample_pages=sample_pages,
        other_sites=other_sites,
        sitemaps=_sitemaps(tracker, several),
        orphans=orphans.count,
        orphans_exact=orphans.exact,
        orphan_examples=tuple(orphans.examples),
        several=several.urls,
        several_exact=several.exact,
        pairs=tuple(
            SitemapPair(
                inventory.sitemaps[a],
                inventory.sitemaps[b],
                len(slots),
                tuple(several.examples[(a, b)]),
            )
            for (a, b), slots in sorted(several.pairs.items(), key=lambda kv: -len(kv[1]))
        ),
    )


def _sitemaps(tracker: Tracker, several: Several) -> tuple[SitemapCoverage, ...]:
    """Each sub-sitemap's counts and examples, in the inventory's order of files."""
    inventory = tracker.inventory
    k = len(inventory.sitemaps)
    codes = inventory.codes
    urls = np.bincount(codes, minlength=k)
    crawled = np.bincount(codes[tracker.crawled], minlength=k)
    by_bit = {
        code: np.bincount(codes[(tracker.flags & bit) != 0], minlength=k)
        for code, bit in BITS.items()
    }
    missing = _not_crawled_examples(tracker, urls - crawled)
    found = []
    for code, name in enumerate(inventory.sitemaps):
        shared = len(several.shared.get(code, ()))
        if not urls[code] and not shared:
            continue
        counts = {"not-crawled": int(urls[code] - crawled[code]), "in-several-sitemaps": shared}
        counts |= {finding: int(by_bit[finding][code]) for finding in BITS}
        examples = {"not-crawled": missing.get(code, [])}
        examples |= {
            finding: list(tracker.examples.get((code, finding), {}).values()) for finding in BITS
        }
        found.append(SitemapCoverage(name, int(urls[code]), int(crawled[code]), counts, examples))
    return tuple(found)


def _not_crawled_examples(tracker: Tracker, missing: np.ndarray) -> dict[int, list[Example]]:
    """The first few URLs of each sub-sitemap never crawled (the inventory read again,
    until each has its examples)."""
    limit = tracker.limit or EXAMPLES
    wanted = {int(code): min(int(n), limit) for code, n in enumerate(missing) if n}
    found: dict[int, list[Example]] = {}
    if not wanted:
        return found
    codes = tracker.inventory.codes
    for locs, slots in tracker.inventory.batches():
        for i in np.flatnonzero(~tracker.crawled[slots] & (slots >= 0)).tolist():
            code = int(codes[slots[i]])
            kept = found.setdefault(code, [])
            if len(kept) < wanted.get(code, 0):
                kept.append(Example(locs[i]))
        if all(len(found.get(c, ())) >= n for c, n in wanted.items()):
            break
    return found
