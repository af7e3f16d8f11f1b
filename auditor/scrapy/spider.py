"""A ``SitemapSpider`` whose ``sitemap_filter`` keeps only what the plan says is due.

Scrapy hands ``sitemap_filter`` every entry of every sitemap file it reads, index
entries included. With the crawler's plan:

- an index keeps only the child sitemaps that lead to a due URL, and the ones the
  plan's walk did not know (new files): a sub-sitemap with nothing due is not fetched;
- a urlset keeps the due URLs: on trusted sub-sitemaps those whose lastmod advanced
  since the last crawl and the new ones, elsewhere those due by rate; and the URLs the
  plan's walk did not list (new since).

The requests made of the entries kept carry the plan's meta through
:class:`~auditor.scrapy.PlanMiddleware` (which the add-on installs).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.spiders import SitemapSpider

from auditor.scrapy.plans import CrawlerPlan, frontier_of
from auditor.scrapy.settings import AuditorSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["AuditorSitemapSpider", "SitemapPlanMixin"]


class SitemapPlanMixin:
    """Put before ``SitemapSpider`` in a spider's bases (module docstring)."""

    crawler: Crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Any:
        """The spider, its crawler's plan made when it opens (unless auditor is off)."""
        spider = super().from_crawler(crawler, *args, **kwargs)  # type: ignore[misc]
        config = AuditorSettings.of(crawler.settings)
        if config.enabled:
            CrawlerPlan.of(crawler, config)
        spider._auditor_filter = config.filter  # read once, not for every sitemap file
        return spider

    def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        """The entries of one sitemap file that the plan wants fetched."""
        index = getattr(entries, "type", None) == "sitemapindex"
        kept = super().sitemap_filter(entries)  # type: ignore[misc]
        frontier = frontier_of(getattr(self, "crawler", None))
        if frontier is None or not getattr(self, "_auditor_filter", True):
            yield from kept
            return
        stats = self.crawler.stats
        for entry in kept:
            loc = str(entry.get("loc") or "")
            wanted = frontier.keeps_sitemap(loc) if index else frontier.is_due(loc)
            if wanted or not frontier.covers(loc):
                yield entry
            elif stats is not None:
                stats.inc_value("auditor/pruned/sitemaps" if index else "auditor/dropped/not_due")


class AuditorSitemapSpider(SitemapPlanMixin, SitemapSpider):
    """``SitemapSpider`` with the plan's ``sitemap_filter``: subclass it as you would
    ``SitemapSpider`` (``sitemap_urls``, ``sitemap_rules``, callbacks)."""
