"""One plan per crawler: made when its spider opens, in a thread, before the first
request, once the fetches spooled by earlier crawls are recorded
(:mod:`auditor.scrapy.spool`); read by the spider middleware and the sitemap mixin.

Touches: the network, the database.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from scrapy import signals

from auditor.crawl.record import site_origin
from auditor.errors import HistoryError
from auditor.planner.frontier import Frontier
from auditor.scrapy.common import counted, in_thread
from auditor.scrapy.spool import feeder_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from auditor.scrapy.settings import AuditorSettings

__all__ = ["CrawlerPlan", "spider_sites"]

_log = logging.getLogger(__name__)
_PLANS: WeakKeyDictionary[Crawler, CrawlerPlan] = WeakKeyDictionary()


class CrawlerPlan:
    """The plan of one crawler (:class:`~auditor.planner.frontier.Frontier`), made on
    ``spider_opened``; ``frontier`` is None until then, and when the plan could not be
    made (the crawl then goes on unplanned, and the error is logged)."""

    def __init__(self, crawler: Crawler, config: AuditorSettings) -> None:
        self.config = config
        self.crawler = crawler  # its stats are set once the crawl starts
        self.frontier: Frontier | None = None
        crawler.signals.connect(self._opened, signal=signals.spider_opened)

    @classmethod
    def of(cls, crawler: Crawler, config: AuditorSettings) -> CrawlerPlan:
        """The crawler's plan holder, made on first call."""
        if crawler not in _PLANS:
            _PLANS[crawler] = cls(crawler, config)
        return _PLANS[crawler]

    async def _opened(self, spider: Spider) -> None:
        wanted = self.config.sites or tuple(spider_sites(spider))
        domains = tuple(getattr(spider, "allowed_domains", None) or ())
        feeder = feeder_of(self.crawler)
        try:
            if feeder is not None:  # the fetches spooled by earlier crawls count first
                await in_thread(feeder.feed)
            await in_thread(self._load, wanted, domains)
        except Exception as exc:  # the crawl goes on unplanned
            self._failed(exc)

    def _load(self, wanted: Iterable[str], domains: Iterable[str]) -> None:
        from auditor.history import History
        from auditor.http import HttpOptions
        from auditor.walker import WalkOptions

        config = self.config
        given: dict[str, Any] = {"contact": config.contact, "timeout": config.timeout}
        http = HttpOptions(**{k: v for k, v in given.items() if v is not None})
        with History.open(config.db) as history:
            known = [record.origin for record in history.sites()]
            chosen = _chosen(known, set(wanted), set(domains), explicit=bool(config.sites))
            if not chosen:
                _log.warning("auditor: no site of this spider is in the history: not planned")
            frontier = Frontier.load(
                history,
                chosen,
                now=config.now(),
                budget=config.budget,
                horizon_days=config.horizon_days,
                walk=config.walk,
                walk_options=WalkOptions(http=http),
            )
        self.frontier = frontier
        self._report(frontier)

    def _report(self, frontier: Frontier) -> None:
        reasons = Counter(fetch.reason for fetch in frontier.fetches.values())
        stats = self.crawler.stats
        stats.set_value("auditor/planned", len(frontier))
        for reason, n in reasons.items():
            stats.set_value(f"auditor/planned/{reason}", n)
        parts = ", ".join(f"{reason} {n:,}" for reason, n in sorted(reasons.items()))
        _log.info(
            "auditor: %s planned on %s (%s)",
            counted(len(frontier), "fetch", "fetches"),
            counted(len(frontier.sites), "site"),
            parts or "nothing due",
        )
        disallowed = sum(frontier.disallowed.values())
        if disallowed:  # listed, so a request for one is dropped as not due
            stats.set_value("auditor/disallowed", disallowed)
            _log.info(
                "auditor: %s disallowed by robots.txt, not planned",
                counted(disallowed, "URL"),
            )

    def _failed(self, exc: Exception) -> None:
        """A plan not made: said (with its traceback unless the history was out of
        reach, which its message says), and counted."""
        self.crawler.stats.set_value("auditor/plan_failed", 1)
        _log.error(
            "auditor: the plan could not be made, the crawl goes on unplanned: %s",
            exc,
            exc_info=None if isinstance(exc, HistoryError) else exc,
        )


def frontier_of(crawler: Crawler | None) -> Frontier | None:
    """The crawler's frontier, once planned (None: not planned, or auditor is off)."""
    holder = _PLANS.get(crawler) if crawler is not None else None
    return holder.frontier if holder is not None else None


def spider_sites(spider: Spider) -> Iterable[str]:
    """The origins a spider names: of its ``sitemap_urls`` and ``start_urls``."""
    for attribute in ("sitemap_urls", "start_urls"):
        for url in getattr(spider, attribute, None) or ():
            origin = site_origin(str(url))
            if origin is not None:
                yield origin


def _chosen(known: list[str], wanted: set[str], domains: set[str], *, explicit: bool) -> list[str]:
    """The sites to plan: those of ``known`` that are ``wanted``, or on one of the
    spider's allowed ``domains`` (or a subdomain of one) unless the sites were given."""

    def on_domain(site: str) -> bool:
        host = urlsplit(site).hostname or ""
        return any(host == d or host.endswith("." + d) for d in domains)

    return [s for s in known if s in wanted or (not explicit and on_domain(s))]
