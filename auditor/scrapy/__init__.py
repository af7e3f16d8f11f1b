"""auditor inside Scrapy (``pip install 'auditor[scrapy]'``): a crawl held to the plan,
and its fetches recorded as evidence.

::

    # settings.py
    ADDONS = {"auditor.scrapy.Addon": 0}
    AUDITOR_DB = "postgresql://crawl@db/auditor"

    # spider
    class Shop(AuditorSitemapSpider):
        name = "shop"
        sitemap_urls = ["https://shop.example/robots.txt"]

        def parse(self, response):
            planned = response.meta.get("auditor", {})  # lastmod, verdict, reason, ...

- :class:`Addon` installs the two middlewares;
- :class:`PlanMiddleware` (spider middleware) drops the requests the plan does not
  want and annotates the others, for any spider;
- :class:`AuditorSitemapSpider` (or :class:`SitemapPlanMixin` before ``SitemapSpider``)
  prunes the sitemaps as Scrapy reads them: sub-sitemaps with nothing due are not
  fetched;
- :class:`CrawlLog` (downloader middleware) records every page fetched into the crawl
  log: the next plan and the next verdict count it; what a history out of reach cannot
  take is spooled to a file, and fed to it by the next crawl.

Settings: :mod:`auditor.scrapy.settings`.

Touches: nothing.
"""

try:
    import scrapy  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("auditor.scrapy needs Scrapy: pip install 'auditor[scrapy]'") from exc

from auditor.scrapy.addon import Addon
from auditor.scrapy.middleware import PlanMiddleware
from auditor.scrapy.recorder import CrawlLog
from auditor.scrapy.settings import AuditorSettings
from auditor.scrapy.spider import AuditorSitemapSpider, SitemapPlanMixin

__all__ = [
    "Addon",
    "AuditorSettings",
    "AuditorSitemapSpider",
    "CrawlLog",
    "PlanMiddleware",
    "SitemapPlanMixin",
]
