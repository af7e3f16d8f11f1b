"""Plain example tests for the defects the fuzz suite found, one per defect, kept forever.

Each was first a falsifying example of a property in this folder; written out here
so the defect stays covered whatever the properties draw next.
"""

from __future__ import annotations

import codecs
from datetime import UTC, datetime

import pytest

from auditor.evidence import read_page
from auditor.walker.discovery import sitemaps_from_robots
from tests.fuzz.sitemaps import read

URLSET = (
    '<?xml version="1.0" encoding="{encoding}"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    "<url><loc>https://example.com/{path}</loc></url></urlset>\n"
)


# -- sniff.py: the first chunk decided too much --------------------------------------------------


@pytest.mark.parametrize("first", [1, 2])
def test_a_utf8_bom_split_across_the_first_chunks_is_still_skipped(first):
    data = codecs.BOM_UTF8 + URLSET.format(encoding="UTF-8", path="a").encode()
    result = read([data[:first], data[first:]])
    assert result.kind == "urlset"
    assert result.records == [("https://example.com/a", None, None)]
    assert result.problems == []


@pytest.mark.parametrize("encoding", ["Shift_JIS", "EUC-JP", "GB18030", "Big5", "EUC-KR"])
def test_an_xml_declaration_split_across_chunks_still_names_the_encoding(encoding):
    path = "中文" if encoding in ("GB18030", "Big5") else "한국" if encoding == "EUC-KR" else "日本"
    data = URLSET.format(encoding=encoding, path=path).encode(encoding)
    result = read([data[:20], data[20:]])
    assert result.problems == []
    assert result.records == [(f"https://example.com/{path}", None, None)]


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF8 + URLSET.format(encoding="UTF-8", path="日本").encode(),
        URLSET.format(encoding="Shift_JIS", path="日本").encode("shift_jis"),
    ],
)
def test_a_file_read_one_byte_at_a_time_reads_as_a_whole(data):
    whole = read([data])
    dripped = read([data[i : i + 1] for i in range(len(data))])
    assert (dripped.kind, dripped.records, dripped.problems) == (
        whole.kind,
        whole.records,
        whole.problems,
    )


# -- plaintext.py: a file of nothing but blanks had no problem ---------------------------------


@pytest.mark.parametrize("data", [b"\x1f", b"\x0c\x0b", b"\x1c\n\x1d\n", "\u3000\n".encode()])
def test_text_of_only_unicode_blanks_is_not_a_sitemap(data):
    result = read([data])
    assert result.kind is None
    assert result.records == []
    assert [code for code, _ in result.problems] == ["not-a-sitemap"]


# -- discovery.py: Sitemap lines after a bare CR were missed -----------------------------------


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_sitemap_lines_are_found_whatever_ends_the_lines(end):
    text = end.join(["User-agent: *", "Disallow:", "Sitemap: /a.xml", "sitemap: /b.xml", ""])
    found = sitemaps_from_robots(text, "https://example.com")
    assert found == ["https://example.com/a.xml", "https://example.com/b.xml"]


# -- evidence: a node about another page outranked the page's own tags ---------------------------

_TEASER = (
    '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article",'
    ' "url": "https://example.com/other", "dateModified": "2001-02-03T04:05:06Z",'
    ' "datePublished": "2001-02-03T04:05:06Z"}</script>'
)


@pytest.mark.parametrize(
    ("own", "source"),
    [
        ('<meta property="article:modified_time" content="2024-05-03T10:00:00Z">'
         '<meta property="article:published_time" content="2024-05-03T10:00:00Z">', "opengraph"),
        ('<meta name="dcterms.modified" content="2024-05-03T10:00:00Z">'
         '<meta name="dcterms.issued" content="2024-05-03T10:00:00Z">', "meta"),
    ],
)  # fmt: skip
def test_a_node_about_another_page_never_outranks_the_pages_own_tags(own, source):
    html = f"<html><head>{own}{_TEASER}</head><body><p>story</p></body></html>".encode()
    evidence = read_page(
        html,
        url="https://example.com/news/story",
        headers={"Content-Type": "text/html"},
        status=200,
        fetched_at=datetime(2026, 11, 29, tzinfo=UTC),
    )
    for found in (evidence.date_modified, evidence.date_published):
        assert found is not None
        assert (found.raw, found.source) == ("2024-05-03T10:00:00Z", source)


def test_a_node_about_another_page_is_still_read_when_nothing_else_dates_the_page():
    html = f"<html><head>{_TEASER}</head><body><p>story</p></body></html>".encode()
    evidence = read_page(
        html,
        url="https://example.com/news/story",
        headers={"Content-Type": "text/html"},
        status=200,
        fetched_at=datetime(2026, 11, 29, tzinfo=UTC),
    )
    assert evidence.date_modified is not None and evidence.date_modified.source == "json-ld"


# -- plaintext.py: a text sitemap whose lines end in a bare CR read as one URL -------------------


def test_a_text_sitemap_with_bare_cr_line_ends_has_one_url_a_line():
    data = b"https://example.com/a\rhttps://example.com/b\r"
    result = read([data[:22], data[22:]])
    assert result.records == [
        ("https://example.com/a", None, None),
        ("https://example.com/b", None, None),
    ]
    assert result.problems == []
