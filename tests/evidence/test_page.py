"""read_page: decoding, refusals, bounds, headers, and the JSON shape (docs/commands/page.md)."""

from __future__ import annotations

import json
from email.utils import format_datetime

import pytest

from auditor.evidence import read_page
from auditor.evidence.fingerprint import main_text
from auditor.evidence.page import MAX_PARSE_BYTES, parse_html
from tests.evidence.helpers import FETCHED_AT, PAGES, read_fixture, utc


def read(html: bytes, **kwargs: object):
    options = {"url": "https://p.example/a", "headers": {}, "status": 200, "fetched_at": FETCHED_AT}
    options.update(kwargs)
    return read_page(html, **options)  # type: ignore[arg-type]


def test_json_shape_keeps_the_contract_keys():
    page = read_fixture("graph.html", url="https://news.example/2026/11/graph-story/")
    data = json.loads(json.dumps(page.to_dict()))
    for key in ("date_modified", "date_published", "http_last_modified", "fingerprint"):
        assert key in data
    assert {"value", "source", "credible"} <= set(data["date_modified"])
    assert data["date_modified"]["value"] == "2026-11-03T09:15:30+00:00"
    assert data["date_modified"]["source"] == "json-ld"
    assert {"exact", "simhash"} <= set(data["fingerprint"])
    assert len(data["fingerprint"]["exact"]) == 64
    assert int(data["fingerprint"]["simhash"], 16) == page.fingerprint.simhash
    assert data["http_last_modified"] is None


def test_http_headers_are_kept_in_any_case():
    page = read_fixture(
        "no-dates.html",
        headers={
            "content-type": "text/html",
            "LAST-MODIFIED": "Tue, 24 Nov 2026 10:00:00 GMT",
            "ETag": '"abc"',
            "Date": "Sun, 29 Nov 2026 20:00:00 GMT",
        },
    )
    assert page.http_last_modified is not None
    assert (page.http_last_modified.value, page.http_last_modified.source) == (
        utc(2026, 11, 24, 10),
        "http",
    )
    assert page.etag == '"abc"'
    assert page.date_header == "Sun, 29 Nov 2026 20:00:00 GMT"


def test_render_time_is_judged_against_the_date_header():
    html = b"""<html><head><script type="application/ld+json">{"@type": "WebPage",
    "dateModified": "2026-11-29T19:00:02Z"}</script></head><body>x</body></html>"""
    served = format_datetime(utc(2026, 11, 29, 19, 0, 0), usegmt=True)
    page = read(html, headers={"Date": served})
    assert page.date_modified is not None
    assert page.date_modified.why_not_credible == "render-time-date-modified"
    # without a Date header the fetch time (20:00, an hour later) is the reference
    assert read(html).date_modified.credible


def test_charset_from_meta():
    page = read((PAGES / "windows-1252.html").read_bytes())
    text = main_text(parse_html((PAGES / "windows-1252.html").read_bytes()))
    assert "un café crème – déjà servi." in text
    assert page.date_modified is not None


def test_charset_from_the_header_and_bom():
    body = "<html><body><p>naïve</p></body></html>"
    latin = read(body.encode("latin-1"), headers={"Content-Type": "text/html; charset=ISO-8859-1"})
    bom = read(b"\xef\xbb\xbf" + body.encode("utf-8"), headers={"Content-Type": "text/html"})
    assert latin.fingerprint == bom.fingerprint


@pytest.mark.parametrize(
    ("status", "headers", "body", "error"),
    [
        (404, {"Content-Type": "text/html"}, b"<html>gone</html>", "http-error"),
        (500, {}, b"", "http-error"),
        (200, {"Content-Type": "application/pdf"}, b"%PDF-1.7", "not-html"),
        (200, {"Content-Type": "application/json"}, b"{}", "not-html"),
        (200, {}, b"%PDF-1.7 binary", "not-html"),
    ],
)
def test_pages_that_are_not_read(status, headers, body, error):
    page = read(body, status=status, headers=headers)
    assert page.error == error
    assert not page.ok
    assert page.fingerprint is None
    assert page.date_modified is None
    assert page.to_dict()["error"] == error


@pytest.mark.parametrize(
    "body",
    [b"", b"   ", b"\x00\x01\x02<", b"<", b"<html", b"<!-- only a comment -->", b"\xff\xfe<\x00"],
)
def test_garbage_is_read_without_raising(body):
    page = read(body, headers={"Content-Type": "text/html"})
    assert page.ok
    assert page.fingerprint is not None


def test_xhtml_with_an_xml_declaration():
    body = b"""<?xml version="1.0" encoding="utf-8"?>
    <html xmlns="http://www.w3.org/1999/xhtml"><head><meta property="article:modified_time"
    content="2020-01-01T00:00:00Z"/></head><body><p>x</p></body></html>"""
    page = read(body, headers={"Content-Type": "application/xhtml+xml"})
    assert page.date_modified is not None


def test_a_huge_page_is_parsed_up_to_the_cap():
    head = b"""<html><head><meta property="article:modified_time"
    content="2020-01-01T00:00:00Z"></head><body><p>"""
    page = read(head + b"word " * (MAX_PARSE_BYTES // 5 + 10), truncated=True)
    assert "html-cut-for-parsing" in page.notes
    assert page.truncated
    assert page.date_modified is not None


def test_deeply_nested_json_ld_is_contained():
    deep = b'{"@type": "Article", "a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    page = read(b'<html><head><script type="application/ld+json">' + deep + b"</script></head>")
    assert page.ok


def test_a_parsed_page_makes_its_elements_without_a_python_call_each(monkeypatch):
    """lxml.html's own class lookup runs Python for every element object the walks make (4%
    of reading a real page); the parser's lookup is lxml's C one, giving the same classes
    (form controls as plain HtmlElement: nothing here reads their form values)."""
    import lxml.html

    from auditor.evidence.page import parse_html

    calls = []
    original = lxml.html.HtmlElementClassLookup.lookup
    monkeypatch.setattr(
        lxml.html.HtmlElementClassLookup,
        "lookup",
        lambda self, *args: calls.append(args) or original(self, *args),
    )
    html = b"<html><head><title>t</title></head><body><!-- c --><p>a <b>b</b></p></body></html>"
    tree = parse_html(html, "text/html")
    kinds = {type(node) for node in tree.iter()}
    assert calls == []
    assert kinds == {lxml.html.HtmlElement, lxml.html.HtmlComment}
    assert tree.head is not None and tree.body.text_content() == "a b"
