"""The spider middleware that holds a crawl to its plan, for any spider.

Every request the spider makes (its start requests included) is read against the
crawler's plan (:class:`~auditor.planner.frontier.Frontier`):

- a planned URL goes on, carrying ``request.meta["auditor"]``: the plan's ``lastmod``,
  ``verdict``, ``reason``, ``p_changed``, ``priority``, ``rank``, ``sitemap`` and
  ``due_at``; its Scrapy priority follows the plan's order (``-rank``);
- a URL the site's sitemaps list but the plan does not is dropped (``AUDITOR_FILTER``);
- a sitemap file that leads to no due URL is dropped (the whole sub-sitemap pruned);
- anything else (a site not planned, robots.txt, a URL no sitemap lists) goes on as is.

Counts go to Scrapy's stats under ``auditor/``.

Touches: nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from auditor.scrapy.plans import CrawlerPlan
from auditor.scrapy.settings import AuditorSettings

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["PlanMiddleware", "is_sitemap_request"]


def is_sitemap_request(request: Request) -> bool:
    """True for a request Scrapy's ``SitemapSpider`` makes to read a sitemap (or the
    robots.txt that names them)."""
    return getattr(request.callback, "__name__", None) == "_parse_sitemap"


class PlanMiddleware(BaseSpiderMiddleware):
    """Holds the spider's requests to the plan (module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        config = AuditorSettings.of(crawler.settings)
        if not config.enabled:
            raise NotConfigured("AUDITOR_ENABLED is off")
        self.plan = CrawlerPlan.of(crawler, config)
        self.filter = config.filter

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        """The request annotated, or None when the plan drops it."""
        frontier = self.plan.frontier
        url = request.url
        if frontier is None or not frontier.covers(url):
            return request
        if is_sitemap_request(request) or frontier.is_sitemap(url):
            if self.filter and not frontier.keeps_sitemap(url):
                self.crawler.stats.inc_value("auditor/pruned/sitemaps")
                return None
            return request
        meta = frontier.meta(url)
        if meta is not None:
            request.meta["auditor"] = meta
            request.priority = -int(meta["rank"])
            self.crawler.stats.inc_value("auditor/requests/planned")
            return request
        if self.filter and not frontier.is_due(url):
            self.crawler.stats.inc_value("auditor/dropped/not_due")
            return None
        return request
