"""Walking a whole fixture site over loopback HTTP: discovery, index, gzip, news."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor.walker import walk


def test_walks_a_site_from_robots_txt(serve):
    server = serve("sites/basic")
    w = walk(server.origin)
    entries = list(w)

    assert w.problems == []
    locs = [e.loc for e in entries]
    # posts (newest in the index) before pages; then the second robots.txt sitemap
    assert locs == [
        server.url("/posts/hello"),
        server.url("/posts/world"),
        server.url("/"),
        server.url("/about"),
        server.url("/contact"),
        server.url("/news/launch"),
    ]
    by_loc = {e.loc: e for e in entries}
    hello = by_loc[server.url("/posts/hello")]
    assert hello.lastmod == datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
    assert hello.lastmod_precision == "second"
    assert hello.sitemap == server.url("/sitemap-posts.xml.gz")
    about = by_loc[server.url("/about")]
    assert (about.lastmod, about.lastmod_precision, about.lastmod_raw) == (
        datetime(2025, 3, 1, tzinfo=UTC),
        "month",
        "2025-03",
    )
    assert by_loc[server.url("/contact")].lastmod is None
    news = by_loc[server.url("/news/launch")]
    assert news.news_publication_date == datetime(2026, 11, 28, 8, 30, tzinfo=UTC)

    kinds = {f.url: (f.kind, f.gzipped, f.via_robots) for f in w.files}
    assert kinds == {
        server.url("/sitemap_index.xml"): ("sitemapindex", False, True),
        server.url("/sitemap-posts.xml.gz"): ("urlset", True, True),
        server.url("/sitemap-pages.xml"): ("urlset", False, True),
        server.url("/news-sitemap.xml"): ("urlset", False, True),
    }
    assert server.paths()[0] == "/robots.txt"
    assert all("auditor/" in r.headers["User-Agent"] for r in server.log)
