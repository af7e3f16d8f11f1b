"""``auditor inspect`` on sitemap extensions and Google's index rules, over loopback."""

from __future__ import annotations

import json

from auditor.cli import main


def _inspect(capsys, target: str, *extra: str) -> str:
    assert main(["inspect", target, *extra]) == 0
    return capsys.readouterr().out


def test_a_news_sitemap_stamped_at_generation_with_right_publication_dates(serve, capsys):
    server = serve("sites/news-generation")
    found = json.loads(_inspect(capsys, server.url("/news-sitemap.xml"), "--json"))
    assert "generation-time" in found["flags"]
    [note] = found["notes"]
    assert note["code"] == "publication-date-right"
    assert note["segment"] == server.url("/news-sitemap.xml")
    assert found["extensions"]["share_news"] == 1.0
    assert found["extensions"]["by_sitemap"][server.url("/news-sitemap.xml")]["news"] == 12
    text = _inspect(capsys, server.url("/news-sitemap.xml"))
    assert "note publication-date-right: /news-sitemap.xml: lastmod says nothing" in text
    assert "news 100% of 12 URLs" in text


def test_shares_of_hreflang_images_and_video(serve, capsys):
    server = serve("sites/fmt-formats")
    found = json.loads(_inspect(capsys, server.url("/extensions.xml"), "--json"))
    shares = found["extensions"]
    assert (shares["with_hreflang"], shares["with_images"], shares["with_video"]) == (2, 1, 1)
    assert shares["share_with_hreflang"] == round(2 / 3, 4)
    assert "notes" not in found


def test_a_plain_sitemap_has_no_extensions_key(serve, capsys):
    server = serve("sites/basic")
    found = json.loads(_inspect(capsys, server.url("/sitemap-pages.xml"), "--json"))
    assert "extensions" not in found and "notes" not in found


def test_index_rules_listed_as_search_console_reports_them(serve, capsys):
    server = serve("sites/google-index-rules")
    text = _inspect(capsys, server.url("/a/sitemap_index.xml"))
    said = text.split("Search Console would report:\n", 1)[1].split("problems:", 1)[0]
    lines = said.splitlines()
    assert [line.rsplit("(", 1)[1] for line in lines] == [
        "url-in-index)",
        "changefreq-in-index)",
        "url-not-allowed)",
        "duplicate-sitemap)",
    ]
    assert lines[2].startswith("  /a/sitemap_index.xml: URL not allowed: 1 sitemap(s) outside")
    found = json.loads(_inspect(capsys, server.url("/a/sitemap_index.xml"), "--json"))
    assert found["inventory"]["urls"] == 2  # both children read once, the <url> entry not used
