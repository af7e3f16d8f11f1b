"""Dates from each kind of structured data, and which node speaks for the page."""

from __future__ import annotations

import pytest

from auditor.evidence import PageEvidence, read_page
from tests.evidence.helpers import FETCHED_AT, read_fixture, utc


@pytest.mark.parametrize(
    ("name", "url", "source", "node_type", "modified", "published"),
    [
        # The Article of a Yoast-style @graph wins over WebPage, WebSite and Organization.
        (
            "graph.html",
            "https://news.example/2026/11/graph-story/",
            "json-ld",
            "NewsArticle",
            utc(2026, 11, 3, 9, 15, 30),
            utc(2026, 11, 1, 8),
        ),
        # A top-level array: the BlogPosting, never the Organization.
        (
            "array.html",
            "https://blog.example/a",
            "json-ld",
            "BlogPosting",
            utc(2025, 3, 5, 7, 8, 9),
            utc(2025, 3, 4),
        ),
        # An article nested as the WebPage's mainEntity.
        (
            "main-entity.html",
            "https://shop.example/guide",
            "json-ld",
            "TechArticle",
            utc(2024, 6, 15, 21, 30),
            utc(2024, 2, 1, 15),
        ),
        (
            "microdata.html",
            "https://md.example/a",
            "microdata",
            "Article",
            utc(2023, 9, 12, 16, 45),
            utc(2023, 9, 10, 6),
        ),
        (
            "opengraph.html",
            "https://og.example/a",
            "opengraph",
            "article:modified_time",
            utc(2025, 6, 6, 7),
            utc(2025, 6, 5, 12, 46, 12),
        ),
        (
            "meta-only.html",
            "https://meta.example/a",
            "meta",
            "last-modified",
            utc(2022, 12, 24, 10),
            utc(2022, 12, 1),
        ),
        # Broken JSON-LD blocks are counted and skipped; the microdata beside them is read.
        (
            "invalid-jsonld.html",
            "https://bad.example/a",
            "microdata",
            "BlogPosting",
            utc(2021, 4, 2, 11, 22, 33),
            utc(2021, 4, 1),
        ),
        # Teasers naming other URLs lose to the section page's own node.
        (
            "teasers.html",
            "https://news.example/politics/",
            "json-ld",
            "CollectionPage",
            utc(2026, 11, 28, 6),
            None,
        ),
    ],
)
def test_each_syntax_gives_its_dates(name, url, source, node_type, modified, published):
    page = read_fixture(name, url=url)
    assert page.error is None
    assert page.date_modified is not None
    assert (page.date_modified.source, page.date_modified.node_type) == (source, node_type)
    assert page.date_modified.value == modified
    assert page.date_modified.credible
    if published is None:
        assert page.date_published is None
    else:
        assert page.date_published is not None
        assert page.date_published.value == published


def test_meta_tags_prefer_the_exact_time_over_a_day():
    # meta-only.html has dcterms.modified (a day) and http-equiv last-modified (a time):
    # last-modified is listed first among the meta names, and keeps its precision.
    page = read_fixture("meta-only.html")
    assert page.date_modified is not None
    assert page.date_modified.precision == "second"
    assert page.date_published is not None
    assert page.date_published.precision == "day"


def test_broken_json_ld_is_noted_not_fatal():
    page = read_fixture("invalid-jsonld.html")
    assert "invalid-json-ld" in page.notes
    assert page.date_modified is not None
    assert page.date_modified.value.year == 2021  # not the broken block's 2099


def test_a_page_without_dates():
    page = read_fixture("no-dates.html")
    assert page.error is None
    assert page.date_modified is None
    assert page.date_published is None
    assert page.fingerprint is not None
    assert page.fingerprint.words > 0


def test_modified_before_published_is_noted():
    page = read_fixture("modified-before-published.html")
    assert "modified-before-published" in page.notes
    assert page.date_published is not None
    assert page.date_published.raw == "2024-05-03T15:47:42.389+0000"
    assert page.date_published.value == utc(2024, 5, 3, 15, 47, 42, 389000)
    assert page.date_published.precision == "fraction"


def test_precision_and_raw_are_kept():
    page = read_fixture("array.html")
    assert page.date_published is not None
    assert (page.date_published.raw, page.date_published.precision) == ("2025-03-04", "day")


def test_rdfa_is_read_only_when_asked():
    html = b"""<html><head><title>r</title></head><body vocab="http://schema.org/">
    <div typeof="Article" resource="https://r.example/a"><span property="headline">R</span>
    <span property="dateModified" content="2020-02-02T02:02:02Z">2 Feb</span></div></body></html>"""

    def read(rdfa: bool) -> PageEvidence:
        return read_page(
            html, url="https://r.example/a", headers={}, status=200,
            fetched_at=FETCHED_AT, rdfa=rdfa,
        )  # fmt: skip

    assert read(False).date_modified is None
    with_rdfa = read(True).date_modified
    assert with_rdfa is not None
    assert (with_rdfa.source, with_rdfa.node_type) == ("rdfa", "Article")
    assert with_rdfa.value == utc(2020, 2, 2, 2, 2, 2)
