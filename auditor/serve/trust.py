"""The trust look-up: may a crawler schedule this URL on its lastmod?

For a URL, :class:`TrustIndex` answers the site it belongs to (its origin as the history
names sites), the sub-sitemap listing it in the site's freshest inventory, the URL-shape
group it falls in where that file was split, that segment's verdict and since when, the
URL's last seen lastmod (in that inventory), and whether a crawler may schedule it on
lastmod: the planner's rule, :mod:`auditor.serve.trustreads`. A URL of an origin the
history does not know, or not listed, is an answer saying so; a URL that is no absolute
http(s) URL (or longer than :data:`~auditor.serve.trustkeys.MAX_URL_CHARS`) raises
ValueError, which the API turns into a 400. How two spellings of one URL meet:
:mod:`auditor.serve.trustkeys`.

Each site is read once (:func:`~auditor.serve.trustreads.read_site`) and kept, compact,
in a cache bounded by URLs (least recently used out first). A kept site is checked at
most every ``check_seconds`` (its latest run id and plan walk: two index probes); the
origins of the history and the crawl batches (a crawl import can contradict a trusted
segment) once per ``check_seconds`` for all: a new run, walk, site or crawl batch is
seen within that. Safe to call from many threads: one history handle per thread
(:class:`~auditor.serve.readers.Readers`), a lock around the cache, and one reader at a
time per site (striped locks), so sixteen requests for a cold site read it once.

Touches: the database.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from auditor.serve.readers import Readers
from auditor.serve.trustkeys import MAX_URL_CHARS, parse_url
from auditor.serve.trustreads import SegmentTrust, SiteTrust, read_site, read_version, recheck_crawl

__all__ = ["MAX_CACHED_URLS", "MAX_URL_CHARS", "SITE_WEIGHT", "TrustAnswer", "TrustIndex"]

#: URLs of decoded inventories kept (about 60 to 100 bytes each with their keys: some
#: 150 MB), so a server answers a working set of sites this size from memory.
MAX_CACHED_URLS = 2_000_000
#: What a kept site weighs beyond its URLs, in URLs (its segments, groupings and array
#: headers, some 5 KB: about 64 URLs at ~100 bytes), so that sites without an inventory
#: (never audited, none kept) count against the bound too.
SITE_WEIGHT = 64
#: Seconds a kept site, the origins and the crawl batches are trusted before checked again.
CHECK_SECONDS = 1.0
#: Locks a site's first read takes (by its id): enough that threads rarely wait on
#: another site's read, few enough to keep.
_STRIPES = 64
_SITES = "SELECT max(id), count(*) FROM sites"
_CRAWL = "SELECT max(id), count(taken_back_at) FROM crawl_batches"


@dataclass(frozen=True)
class TrustAnswer:
    """What the history says of one URL (module docstring)."""

    url: str  # as asked
    site: str | None  # the site (origin as stored); None: not in the history
    sitemap: str | None  # the sub-sitemap listing it in the latest inventory
    group: str | None  # the URL-shape group it falls in, its file split into groups
    verdict: str | None  # that segment's verdict (else the site's)
    since: datetime | None  # since when that verdict holds
    lastmod: datetime | None  # its lastmod in the latest inventory
    listed: bool  # in the site's latest inventory
    schedule_on_lastmod: bool  # its segment trusted: a crawler may schedule it on lastmod
    reason: str  # one line saying why

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values, instants as ISO 8601 in UTC (``+00:00``, as every answer
        of the API gives them), a lastmod to the microsecond it was written to."""
        return {
            name: _iso(value) if isinstance(value, datetime) else value
            for name, value in asdict(self).items()
        }


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


@dataclass
class _Held:
    trust: SiteTrust
    checked: float  # the clock when its version was last read


class TrustIndex:
    """Trust look-ups on the history of ``readers`` (module docstring)."""

    def __init__(
        self,
        readers: Readers,
        *,
        max_cached_urls: int = MAX_CACHED_URLS,
        check_seconds: float = CHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._readers, self._limit = readers, max_cached_urls
        self._check, self._clock = check_seconds, clock
        self._lock = threading.Lock()
        self._stripes = [threading.Lock() for _ in range(_STRIPES)]
        self._cache: OrderedDict[int, _Held] = OrderedDict()
        self._held_urls = self._weight = 0
        self._refreshing = threading.Lock()
        self._origins: dict[str, int] = {}
        self._sites_marker: tuple[Any, ...] = ()
        self._crawl_version: tuple[Any, ...] = ()
        self._checked = float("-inf")
        self._refresh()

    @property
    def cached_urls(self) -> int:
        """URLs of the inventories kept now."""
        return self._held_urls

    def look_up(self, url: str) -> TrustAnswer:
        """What the history says of ``url``; ValueError when it is no absolute http(s)
        URL of a usable host."""
        return self.look_up_many([url], single=True)[0]

    def look_up_many(self, urls: Sequence[str], *, single: bool = False) -> list[TrustAnswer]:
        """:meth:`look_up` of each URL, in order; ValueError naming the first unusable
        one (``urls[i]: why``), before anything is read."""
        parsed = []
        for i, url in enumerate(urls):
            try:
                parsed.append(parse_url(url))
            except ValueError as exc:
                raise ValueError(str(exc) if single else f"urls[{i}]: {exc}") from exc
        self._refresh()
        sites: dict[str, SiteTrust | None] = {}
        for site, _ in parsed:
            if site not in sites:
                site_id = self._origins.get(site)
                sites[site] = None if site_id is None else self._site(site, site_id)
        pairs = zip(urls, parsed, strict=True)
        return [_answer(url, site, key, sites[site]) for url, (site, key) in pairs]

    def peek(self, url: str) -> TrustAnswer | None:
        """:meth:`look_up`'s answer when it needs no read of the history (the site kept
        and checked within ``check_seconds``, or an origin the history does not hold),
        else None: cheap enough for an event loop, where a thread's hop would cost more
        than the look-up. ValueError as :meth:`look_up`."""
        site, key = parse_url(url)
        if self._clock() - self._checked >= self._check:
            return None  # the origins are due to be read again: a thread does it
        site_id = self._origins.get(site)
        if site_id is None:
            return _answer(url, site, key, None)
        trust = self._fresh(site_id)
        return None if trust is None else _answer(url, site, key, trust)

    def _refresh(self) -> None:
        """Read the origins and the crawl batches again, once per ``check_seconds``."""
        now = self._clock()
        if now - self._checked < self._check or not self._refreshing.acquire(blocking=False):
            return
        try:
            db = self._readers.history()._db
            marker, crawl = tuple(db.rows(_SITES)[0]), tuple(db.rows(_CRAWL)[0])
            if marker != self._sites_marker:
                rows = db.rows("SELECT id, origin FROM sites")
                self._origins = {str(origin): int(i) for i, origin in rows}
                self._sites_marker = marker
            self._crawl_version, self._checked = crawl, now
        finally:
            self._refreshing.release()

    def _fresh(self, site_id: int) -> SiteTrust | None:
        """The kept site, checked within ``check_seconds`` against the current crawl
        batches (else None)."""
        with self._lock:
            held = self._cache.get(site_id)
            if held is None:
                return None
            self._cache.move_to_end(site_id)
        fresh = self._clock() - held.checked < self._check
        return held.trust if fresh and held.trust.crawl_version == self._crawl_version else None

    def _site(self, site: str, site_id: int) -> SiteTrust:
        """The site's trust, from the cache when fresh, else checked or read again."""
        found = self._fresh(site_id)
        if found is not None:
            return found
        with self._stripes[site_id % _STRIPES]:
            found = self._fresh(site_id)  # another thread read it meanwhile
            if found is not None:
                return found
            now, crawl = self._clock(), self._crawl_version
            db = self._readers.history()._db
            with self._lock:
                held = self._cache.get(site_id)
            if held is not None and read_version(db, site_id) == held.trust.version:
                kept = held.trust
                trust = kept if kept.crawl_version == crawl else recheck_crawl(db, kept, crawl)
            else:
                trust = read_site(db, site, site_id, crawl)
            self._keep(site_id, _Held(trust, now))
            return trust

    def _keep(self, site_id: int, held: _Held) -> None:
        """Keep ``held``, dropping the least recently used sites while their URLs and
        :data:`SITE_WEIGHT` each pass the bound (the site just read stays, however
        large)."""
        with self._lock:
            old = self._cache.pop(site_id, None)
            if old is not None:
                self._forget(old)
            self._cache[site_id] = held
            self._held_urls += held.trust.urls
            self._weight += held.trust.urls + SITE_WEIGHT
            while self._weight > self._limit and len(self._cache) > 1:
                self._forget(self._cache.popitem(last=False)[1])

    def _forget(self, held: _Held) -> None:
        self._held_urls -= held.trust.urls
        self._weight -= held.trust.urls + SITE_WEIGHT


def _answer(url: str, site: str, key: str, trust: SiteTrust | None) -> TrustAnswer:
    if trust is None:
        return TrustAnswer(url, None, None, None, None, None, None, False, False,
                           f"site {site} is not in the history")  # fmt: skip
    if trust.verdict is None:
        return TrustAnswer(url, site, None, None, None, None, None, False, False,
                           f"site {site} has no audit yet")  # fmt: skip
    row = trust.find(key)
    if row is None:
        walked = f"{trust.walked_at:%Y-%m-%d}" if trust.walked_at else "never"
        why = (f"not listed in the site's latest inventory ({trust.urls:,} URLs, walked"
               f" {walked}); the site is {trust.verdict} since {trust.since:%Y-%m-%d}")  # fmt: skip
        return TrustAnswer(url, site, None, None, trust.verdict, trust.since, None, False,
                           False, why)  # fmt: skip
    segment = trust.segments[int(trust.segment[row])]
    verdict = segment.verdict or trust.verdict
    since = segment.since if segment.verdict else trust.since
    return TrustAnswer(url, site, segment.sitemap, segment.group, verdict, since,
                       trust.lastmod_of(row), True, segment.trusted, _reason(segment))  # fmt: skip


def _reason(segment: SegmentTrust) -> str:
    """One line saying why a listed URL may or may not be scheduled on lastmod."""
    name = f"sub-sitemap {segment.sitemap}" if segment.sitemap else "no sub-sitemap"
    if segment.group is not None:
        name = f"group {segment.group} of {name}"
    if segment.verdict is None or segment.since is None:
        return f"{name} was not judged by the latest audit: plan it by its change rate"
    since = f"{segment.since:%Y-%m-%d}"
    if segment.trusted:
        return f"{name} trusted since {since}: schedule on lastmod"
    if segment.contradicted:
        return (f"{name} trusted by its audit since {since}, but the crawler's fetches since"
                " contradict its lastmod: plan it by its change rate")  # fmt: skip
    return f"{name} {segment.verdict} since {since}: plan it by its change rate"
