"""The Scrapy components one at a time, with Scrapy's own objects and a frontier made
by hand (no network, no reactor)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

pytest.importorskip("scrapy")

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.sitemap import Sitemap
from scrapy.utils.test import get_crawler

from auditor.planner.frontier import Frontier
from auditor.planner.make import PlannedFetch
from auditor.scrapy import Addon, AuditorSettings, AuditorSitemapSpider, CrawlLog, PlanMiddleware
from auditor.scrapy.plans import CrawlerPlan, _chosen
from auditor.scrapy.recorder import fetch_records

AT = datetime(2026, 12, 1, tzinfo=UTC)
SITE = "https://shop.example"


def test_settings_read_with_their_defaults_and_refuse_nonsense():
    config = AuditorSettings.of(Settings({"AUDITOR_BUDGET": "500", "AUDITOR_SITES": [SITE + "/"]}))
    assert config.enabled and config.walk and config.filter and config.record
    assert config.budget == 500 and config.sites == (SITE,) and config.horizon_days == 1.0
    assert config.now().tzinfo is not None
    for bad in ({"AUDITOR_BUDGET": 0}, {"AUDITOR_HORIZON": -1}, {"AUDITOR_CLOCK": 3}):
        with pytest.raises(ValueError):
            AuditorSettings.of(Settings(bad))
    naive = AuditorSettings.of(Settings({"AUDITOR_CLOCK": lambda: datetime(2026, 1, 1)}))
    with pytest.raises(ValueError, match="naive"):
        naive.now()


def test_the_sites_planned_are_the_audited_ones_the_spider_names():
    known = [SITE, "https://blog.shop.example", "https://other.example"]
    assert _chosen(known, {SITE}, set(), explicit=False) == [SITE]
    on_domain = _chosen(known, set(), {"shop.example"}, explicit=False)
    assert on_domain == [SITE, "https://blog.shop.example"]
    assert _chosen(known, {SITE}, {"other.example"}, explicit=True) == [SITE]


def test_the_addon_installs_both_middlewares():
    settings = Settings()
    Addon().update_settings(settings)
    assert PlanMiddleware in settings.getdict("SPIDER_MIDDLEWARES")
    assert CrawlLog in settings.getdict("DOWNLOADER_MIDDLEWARES")


def test_each_component_stands_down_when_auditor_is_off():
    crawler = get_crawler(settings_dict={"AUDITOR_ENABLED": False})
    with pytest.raises(NotConfigured):
        PlanMiddleware(crawler)
    with pytest.raises(NotConfigured):
        CrawlLog(get_crawler(settings_dict={"AUDITOR_RECORD": False}))


def _planned(crawler, frontier: Frontier) -> None:
    CrawlerPlan.of(crawler, AuditorSettings.of(crawler.settings)).frontier = frontier


def _frontier() -> Frontier:
    fetch = PlannedFetch(
        SITE + "/p/1", SITE, SITE + "/s1.xml", AT, "new-url", 2.0, 1.0, AT, "trusted"
    )
    files = [{"url": SITE + "/index.xml", "parent": None},
             {"url": SITE + "/s1.xml", "parent": SITE + "/index.xml"},
             {"url": SITE + "/s2.xml", "parent": SITE + "/index.xml"}]  # fmt: skip
    return Frontier.of([fetch], [(SITE, files, [SITE + "/p/1", SITE + "/p/2"])])


class _Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count


def test_the_middleware_annotates_drops_and_prunes_by_the_plan(monkeypatch):
    crawler = get_crawler()
    stats = _Stats()
    monkeypatch.setattr(type(crawler), "stats", stats, raising=False)
    middleware = PlanMiddleware(crawler)
    _planned(crawler, _frontier())
    kept = middleware.get_processed_request(Request(SITE + "/p/1"), None)
    assert kept is not None and kept.meta["auditor"]["reason"] == "new-url"
    assert kept.meta["auditor"]["lastmod"] == AT.isoformat() and kept.priority == 0
    assert middleware.get_processed_request(Request(SITE + "/p/2"), None) is None
    assert middleware.get_processed_request(Request(SITE + "/p/3"), None) is not None
    assert middleware.get_processed_request(Request(SITE + "/s2.xml"), None) is None
    assert middleware.get_processed_request(Request(SITE + "/s1.xml"), None) is not None
    other = Request("https://other.example/p/2")
    assert middleware.get_processed_request(other, None) is other
    assert stats.values == {
        "auditor/requests/planned": 1,
        "auditor/dropped/not_due": 1,
        "auditor/pruned/sitemaps": 1,
    }


def test_the_sitemap_filter_keeps_due_children_and_entries(monkeypatch):
    crawler = get_crawler(AuditorSitemapSpider)
    monkeypatch.setattr(type(crawler), "stats", _Stats(), raising=False)
    spider = AuditorSitemapSpider.from_crawler(crawler, name="s")
    _planned(crawler, _frontier())
    index = Sitemap(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + b"".join(
            f"<sitemap><loc>{SITE}/{n}</loc></sitemap>".encode()
            for n in ("s1.xml", "s2.xml", "s3.xml")
        )
        + b"</sitemapindex>"
    )
    assert [e["loc"] for e in spider.sitemap_filter(index)] == [SITE + "/s1.xml", SITE + "/s3.xml"]
    urlset = Sitemap(
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + b"".join(f"<url><loc>{SITE}/p/{n}</loc></url>".encode() for n in (1, 2, 3))
        + b"</urlset>"
    )
    assert [e["loc"] for e in spider.sitemap_filter(urlset)] == [SITE + "/p/1", SITE + "/p/3"]


def test_a_redirect_chain_becomes_one_fetch_a_url():
    request = Request(SITE + "/new", meta={"redirect_urls": [SITE + "/old", SITE + "/older"],
                                           "redirect_reasons": [301, 302]})  # fmt: skip
    headers = {"Content-Type": "text/html", "X-Robots-Tag": "noindex"}
    response = HtmlResponse(
        SITE + "/new", status=200, body=b"<html>hi</html>", request=request, headers=headers
    )
    records = fetch_records(request, response, AT, max_body=5)
    assert [(r.url, r.status) for r in records] == [
        (SITE + "/old", 301),
        (SITE + "/older", 302),
        (SITE + "/new", 200),
    ]
    assert records[0].headers == {"Location": SITE + "/older"}
    assert records[1].headers == {"Location": SITE + "/new"}
    assert records[2].body == b"<html" and records[2].truncated
    assert records[2].headers["X-Robots-Tag"] == "noindex"


def test_a_failed_download_is_recorded_and_an_ignored_request_is_not(monkeypatch):
    log = CrawlLog(get_crawler())
    put: list = []
    monkeypatch.setattr(log.writer, "put", put.append)
    log.process_exception(Request(SITE + "/p/1"), TimeoutError("slow"))
    log.process_exception(Request(SITE + "/p/2"), IgnoreRequest("robots.txt"))
    log.process_exception(Request(SITE + "/robots.txt"), TimeoutError("slow"))
    assert [(r.url, r.status) for r in put] == [(SITE + "/p/1", None)]


class _SetStats(_Stats):
    def set_value(self, key: str, value: int) -> None:
        self.values[key] = value


def test_the_plans_report_counts_the_urls_robots_txt_kept_out(monkeypatch, caplog):
    crawler = get_crawler()
    stats = _SetStats()
    monkeypatch.setattr(type(crawler), "stats", stats, raising=False)
    holder = CrawlerPlan.of(crawler, AuditorSettings.of(crawler.settings))
    planned = _frontier()
    frontier = Frontier.of(planned.fetches.values(), [(SITE, [], [])], {SITE: 8, "https://b": 0})
    with caplog.at_level("INFO", logger="auditor.scrapy.plans"):
        holder._report(frontier)
    assert stats.values["auditor/disallowed"] == 8
    assert "8 URLs disallowed by robots.txt, not planned" in caplog.text
