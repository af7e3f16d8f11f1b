"""Runs one real Scrapy crawl of a loopback site, as a team's spider would, in a process
of its own (Twisted's reactor starts once a process):

    python -m tests.scrapy.crawl '{"origin": ..., "out": ..., "mode": ..., "settings": {...}}'

``mode``: ``planned`` (the add-on and AuditorSitemapSpider), ``disabled`` (the same with
AUDITOR_ENABLED off), ``plain`` (Scrapy's SitemapSpider, no auditor at all), ``links``
(a plain Spider following links from the home page, with the add-on).
Each page crawled becomes one item of ``out`` (JSON Lines): its URL and the request's
``auditor`` meta. Deprecation warnings (Python's and Scrapy's) are errors: a component
that a coming Scrapy would break fails the crawl's test now.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from scrapy import Spider
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.spiders import SitemapSpider

from auditor.scrapy import AuditorSitemapSpider


def _item(response: Any) -> dict[str, Any]:
    return {"url": response.url, "status": response.status, "auditor": response.meta.get("auditor")}


class PlannedSpider(AuditorSitemapSpider):
    name = "planned"

    def __init__(self, origin: str, **kwargs: Any) -> None:
        self.sitemap_urls = [origin + "/robots.txt"]
        super().__init__(**kwargs)

    def parse(self, response: Any) -> Any:
        yield _item(response)


class PlainSpider(SitemapSpider):
    name = "plain"

    def __init__(self, origin: str, **kwargs: Any) -> None:
        self.sitemap_urls = [origin + "/robots.txt"]
        super().__init__(**kwargs)

    def parse(self, response: Any) -> Any:
        yield _item(response)


class LinkSpider(Spider):
    name = "links"

    def __init__(self, origin: str, paths: list[str], **kwargs: Any) -> None:
        self.start_urls = [origin + p for p in paths]
        super().__init__(**kwargs)

    def parse(self, response: Any) -> Any:
        yield _item(response)


BASE = {
    "ROBOTSTXT_OBEY": True,
    "DOWNLOAD_DELAY": 0,
    "CONCURRENT_REQUESTS": 8,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "RETRY_TIMES": 1,
}


def main(config: dict[str, Any]) -> None:
    for category in (DeprecationWarning, ScrapyDeprecationWarning):
        warnings.simplefilter("error", category)
    mode = config["mode"]
    settings = {**BASE, "FEEDS": {config["out"]: {"format": "jsonlines"}}}
    if mode != "plain":
        settings["ADDONS"] = {"auditor.scrapy.Addon": 0}
    if mode == "disabled":
        settings["AUDITOR_ENABLED"] = False
    settings.update(config.get("settings") or {})
    process = CrawlerProcess(settings)
    if mode == "links":
        crawler = process.create_crawler(LinkSpider)
        process.crawl(crawler, origin=config["origin"], paths=config["paths"])
    else:
        crawler = process.create_crawler(PlainSpider if mode == "plain" else PlannedSpider)
        process.crawl(crawler, origin=config["origin"])
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    with open(config["out"] + ".stats", "w") as out:
        json.dump({k: v for k, v in stats.items() if isinstance(v, int | float | str)}, out)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
