"""The Scrapy add-on that installs auditor: ``ADDONS = {"auditor.scrapy.Addon": 0}``.

Touches: nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.scrapy.middleware import PlanMiddleware
from auditor.scrapy.recorder import CrawlLog

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = ["PLAN_ORDER", "RECORD_ORDER", "Addon"]

#: The plan's place among the spider middlewares (Scrapy's own: 50 to 1000).
PLAN_ORDER = 600
#: The recorder's place among the downloader middlewares: below the retry (550) and
#: redirect (600) ones, so that it sees the final answers, decompressed (590).
RECORD_ORDER = 50


class Addon:
    """Installs :class:`~auditor.scrapy.PlanMiddleware` (spider middleware) and
    :class:`~auditor.scrapy.CrawlLog` (downloader middleware); each stands down by
    itself where ``AUDITOR_ENABLED`` (or ``AUDITOR_RECORD``) is off."""

    def update_settings(self, settings: Settings) -> None:
        """Scrapy's add-on hook."""
        settings.set_in_component_priority_dict("SPIDER_MIDDLEWARES", PlanMiddleware, PLAN_ORDER)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", CrawlLog, RECORD_ORDER)
