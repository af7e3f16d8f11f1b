"""Frontier: a plan as a crawler consults it (pure: no history, no network)."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor.planner.frontier import Frontier, UrlSet
from auditor.planner.make import PlannedFetch

AT = datetime(2026, 12, 1, tzinfo=UTC)
SITE = "https://shop.example"


def _fetch(path: str, sitemap: str, reason: str = "rate", site: str = SITE) -> PlannedFetch:
    return PlannedFetch(site + path, site, site + sitemap, AT, reason, 0.5, 0.5, AT, "trusted")


FILES = [
    {"url": SITE + "/sitemap.xml", "parent": None},
    {"url": SITE + "/sitemap-products.xml", "parent": SITE + "/sitemap.xml"},
    {"url": SITE + "/sitemap-blog-index.xml", "parent": SITE + "/sitemap.xml"},
    {"url": SITE + "/sitemap-blog-1.xml", "parent": SITE + "/sitemap-blog-index.xml"},
    {"url": SITE + "/sitemap-blog-2.xml", "parent": SITE + "/sitemap-blog-index.xml"},
]
LISTED = [SITE + p for p in ("/p/1", "/p/2", "/blog/1", "/blog/2", "/blog/3")]


def _frontier() -> Frontier:
    fetches = [
        _fetch("/blog/3", "/sitemap-blog-2.xml", "lastmod-advanced"),
        _fetch("/p/2", "/sitemap-products.xml"),
        _fetch("/p/2", "/sitemap-products.xml"),  # again, later in the horizon
        _fetch("/other", "/sitemap.xml", site="https://other.example"),
    ]
    return Frontier.of(fetches, [(SITE, FILES, LISTED)])


def test_a_planned_url_is_due_with_its_meta_and_its_rank_within_its_host():
    frontier = _frontier()
    assert frontier.is_due(SITE + "/blog/3") and frontier.is_due(SITE + "/p/2")
    meta = frontier.meta(SITE + "/p/2")
    assert meta is not None and meta["rank"] == 1 and meta["verdict"] == "trusted"
    assert frontier.meta("https://other.example/other")["rank"] == 0  # its own host's first
    assert len(frontier) == 3


def test_a_listed_url_not_planned_is_not_due_and_an_unlisted_one_is_the_crawlers():
    frontier = _frontier()
    assert not frontier.is_due(SITE + "/p/1")
    assert frontier.is_due(SITE + "/p/new")  # new since the walk, or found by a link
    assert frontier.is_due("https://elsewhere.example/p/1")  # a site not planned
    assert not frontier.covers("https://elsewhere.example/p/1")
    assert frontier.covers(SITE + "/p/new") and frontier.meta(SITE + "/p/1") is None


def test_sitemaps_with_nothing_due_are_pruned_and_their_ancestors_kept():
    frontier = _frontier()
    keeps = {f["url"].removeprefix(SITE): frontier.keeps_sitemap(f["url"]) for f in FILES}
    assert keeps == {
        "/sitemap.xml": True,
        "/sitemap-products.xml": True,
        "/sitemap-blog-index.xml": True,  # leads to sitemap-blog-2
        "/sitemap-blog-1.xml": False,
        "/sitemap-blog-2.xml": True,
    }
    assert frontier.keeps_sitemap(SITE + "/sitemap-new.xml")  # unknown to the walk: read it
    assert frontier.is_sitemap(SITE + "/sitemap-blog-1.xml")


def test_an_index_loop_in_the_walk_stops_the_climb():
    files = [{"url": SITE + "/a.xml", "parent": SITE + "/b.xml"},
             {"url": SITE + "/b.xml", "parent": SITE + "/a.xml"}]  # fmt: skip
    frontier = Frontier.of([_fetch("/p/1", "/a.xml")], [(SITE, files, LISTED)])
    assert frontier.due_files == {SITE + "/a.xml", SITE + "/b.xml"}


def test_a_url_set_holds_its_urls_as_hashes():
    urls = UrlSet([f"{SITE}/p/{i}" for i in range(1000)], [f"{SITE}/p/5"])
    assert len(urls) == 1000
    assert f"{SITE}/p/999" in urls and f"{SITE}/p/1000" not in urls and 5 not in urls
    both = UrlSet.union([UrlSet(["a"]), UrlSet(["b", "a"])])
    assert "a" in both and "b" in both and len(both) == 2 and "c" not in UrlSet()
