"""Sitemap extensions in the inventory: hreflang, images, video, Google News fields.

Walker units on bytes, the real files of the shared corpus that carry them, the
``walk`` command's JSONL and CSV over loopback, and the inventory's columns.
"""

from __future__ import annotations

import csv
import io
import json

from auditor.cli import main
from auditor.models import Extensions
from auditor.walker import walk
from auditor.walker.extensions import MAX_ALTERNATES, RecordExtras
from auditor.walker.formats import SitemapReader
from auditor.walker.inventory import EXTENSION_COLUMNS, load_inventory
from tests.fuzz.sitemaps import normal
from tests.loopback import FIXTURES

SITEMAPS = "sitemaps"
CC = "peer_fixtures/crawler-commons/src/test/resources/sitemaps/extension"
ADVERTOOLS = "peer_fixtures/advertools/tests/data/sitemap_testing"
HEAD = (
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
)


def _records(data: bytes, fast: bool) -> list:
    reader = SitemapReader(fast=fast)
    return [r for batch in reader.batches([data]) for r in batch]


def _both(data: bytes) -> list:
    """The records, the same by the fast path and by expat alone."""
    fast, exact = _records(data, True), _records(data, False)
    assert normal(fast) == normal(exact)
    return exact


def test_alternates_beyond_the_bound_are_counted_not_kept():
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="l{i}" href="https://a.example/{i}"/>'
        for i in range(MAX_ALTERNATES + 5)
    )
    urls = "".join(f"<url><loc>https://a.example/p{n}</loc>{links}</url>" for n in range(40))
    (_, _, third), *_ = _both(f"{HEAD}{urls}</urlset>".encode())
    assert isinstance(third, RecordExtras)
    assert third.extensions.hreflang_count == MAX_ALTERNATES + 5
    assert len(third.extensions.hreflang) == MAX_ALTERNATES


def test_a_link_that_is_not_an_alternate_is_not_counted():
    body = (
        f'{HEAD}<url><loc>https://a.example/</loc><xhtml:link rel="canonical" href="x"/>'
        '<xhtml:link rel="alternate" href="no-lang"/></url></urlset>'
    )
    [(_, _, third)] = _both(body.encode())
    assert third == RecordExtras(None, Extensions())


def test_a_plain_sitemap_has_no_extension_columns_nor_keys(tmp_path, capsys):
    path = tmp_path / "plain.xml"
    path.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://a.example/</loc><lastmod>2026-01-01</lastmod></url></urlset>"
    )
    assert not set(EXTENSION_COLUMNS) & set(load_inventory(str(path)).entries.columns)
    assert main(["walk", str(path)]) == 0
    keys = list(json.loads(capsys.readouterr().out))
    assert keys == ["loc", "lastmod", "lastmod_precision", "lastmod_raw", "sitemap"]


# -- the corpus's real files ------------------------------------------------------------------


def test_hugo_hreflang_alternates_from_the_corpus(corpus):
    path = corpus / SITEMAPS / "18F+guides-and-methods-hugo/public/en/sitemap.xml"
    records = _both(path.read_bytes())
    home = next(r for r in records if r[0] == "/")  # relative locs: read, then refused
    assert home[2].extensions.hreflang == (("fr", "/fr/"), ("en", "/"))
    assert home[2].extensions.hreflang_count == 2


def test_yoast_images_from_the_corpus(corpus):
    path = corpus / SITEMAPS / "10beasts+10beasts.github.io/post-sitemap.xml"
    entries = {e.loc: e for e in walk(str(path))}
    keyboards = entries["http://www.10beasts.cn/best-gaming-keyboards/"]
    assert keyboards.extensions is not None and keyboards.extensions.image_count >= 2
    assert keyboards.extensions.first_image == (
        "http://www.10beasts.cn/wp-content/uploads/2016/03/best-gaming-keyboards-2016.jpg"
    )
    assert entries["http://www.10beasts.cn/"].extensions is None  # no image: nothing


def test_videos_from_the_corpus(corpus):
    entries = list(walk(str(corpus / CC / "sitemap-videos.xml")))
    assert entries and all(e.extensions and e.extensions.video_count >= 1 for e in entries)


def test_google_news_fields_from_the_corpus(corpus):
    path = corpus / SITEMAPS / "ThePOPPulse+thepoppulse-news-sitemap/news-sitemap.xml"
    [entry] = list(walk(str(path)))
    assert entry.news_publication_date is not None
    assert entry.extensions == Extensions(
        news_title="Philippine Arena's Best Concerts of All Time: SB19, Coldplay, Blackpink + More",
        news_language="en",
    )


def test_the_inventory_keeps_counts_and_the_first_image(corpus):
    path = corpus / SITEMAPS / "10beasts+10beasts.github.io/post-sitemap.xml"
    frame = load_inventory(str(path)).entries
    assert list(frame.columns[-len(EXTENSION_COLUMNS) :]) == list(EXTENSION_COLUMNS)
    assert frame["image_count"].dtype == "int32" and (frame["image_count"] > 0).sum() > 10
    assert frame["first_image"].notna().sum() == (frame["image_count"] > 0).sum()


def test_the_inventory_keeps_hreflang_languages_not_hrefs():
    frame = load_inventory(str(FIXTURES / "formats" / "extensions.xml")).entries
    assert list(frame["hreflang_langs"]) == ["de,en,fr", None, "en"] or (
        frame["hreflang_langs"].isna().iloc[1]
        and list(frame["hreflang_langs"].iloc[[0, 2]]) == ["de,en,fr", "en"]
    )
    assert frame["hreflang_langs"].dtype == "category"
    assert list(frame["hreflang_count"]) == [3, 0, 1] and list(frame["video_count"]) == [0, 1, 0]


# -- the walk command over loopback -----------------------------------------------------------


def test_walk_jsonl_and_csv_carry_the_extension_keys(serve, capsys):
    server = serve("sites/fmt-formats")
    assert main(["walk", server.url("/extensions.xml")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    page, video, german = lines
    assert page["hreflang_count"] == 3 and page["hreflang"][0] == {
        "hreflang": "de",
        "href": server.url("/de/page"),
    }
    assert page["image_count"] == 2 and page["first_image"] == "https://cdn.example.net/img/1.jpg"
    assert video["video_count"] == 1 and "hreflang" not in video and "image_count" not in video
    assert german["hreflang_count"] == 1
    assert main(["walk", server.url("/extensions.xml"), "--format", "csv", "--extensions"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["image_count"] == "2" and rows[1]["video_count"] == "1"
    assert json.loads(rows[0]["hreflang"]) == page["hreflang"]
    assert rows[1]["hreflang"] == "" and rows[1]["news_title"] == ""


def test_walk_csv_without_extensions_keeps_its_columns(serve, capsys):
    server = serve("sites/fmt-formats")
    assert main(["walk", server.url("/extensions.xml"), "--format", "csv"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "loc,lastmod,lastmod_precision,lastmod_raw,sitemap,news_publication_date"
