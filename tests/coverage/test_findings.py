"""The pure parts of coverage: noindex and canonical read from headers and pages, each
fetch judged, the latest fetch deciding, URLs repeated across files paired."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.coverage.findings import CRAWL, Observation, judge
from auditor.evidence.indexing import (
    canonical_from_header,
    canonical_of,
    header_noindex,
    noindex_of,
    normal_url,
)
from auditor.evidence.page import parse_html, read_page

AT = datetime(2026, 12, 1, tzinfo=UTC)
URL = "https://example.com/a/page"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("noindex", True),
        ("NONE", True),
        ("nofollow, noarchive", False),
        ("googlebot: noindex", True),
        ("otherbot: noindex", False),
        ("otherbot: nofollow, googlebot: noindex, follow", True),
        ("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex", True),
        ("", False),
    ],
)
def test_x_robots_tag(value: str, expected: bool) -> None:
    assert header_noindex(value) is expected


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('<meta name="robots" content="noindex">', "meta"),
        ('<meta name="GoogleBot" content="none">', "meta"),
        ('<meta name="bingbot" content="noindex">', None),
        ('<meta name="robots" content="index, follow">', None),
    ],
)
def test_meta_robots(head: str, expected: str | None) -> None:
    tree = parse_html(f"<html><head>{head}</head><body>x</body></html>".encode())
    assert noindex_of({}, tree) == expected


def test_canonical_from_the_page_then_the_header_resolved_against_the_page() -> None:
    tree = parse_html(b'<html><head><link rel="Canonical" href="../b"></head></html>')
    assert canonical_of({}, tree, URL) == "https://example.com/b"
    header = {"Link": '<https://cdn.example/x>; rel="preload", </c?x=1>; rel="canonical"'}
    assert canonical_of(header, None, URL) == "https://example.com/c?x=1"
    assert canonical_from_header("<mailto:a@b>; rel=canonical", URL) is None
    assert normal_url("HTTPS://Example.COM:443") == normal_url("https://example.com/#top")


def test_read_page_keeps_what_a_page_says_of_its_indexing() -> None:
    html = b'<html><head><link rel="canonical" href="/other"></head><body><p>x</p></body></html>'
    page = read_page(html, url=URL, headers={"X-Robots-Tag": "noindex"}, status=200, fetched_at=AT)
    assert (page.noindex, page.canonical) == ("header", "https://example.com/other")
    assert page.to_dict()["canonical"] == "https://example.com/other"


@pytest.mark.parametrize(
    ("seen", "expected"),
    [
        (
            Observation(URL, AT, 301, CRAWL, redirect_to="https://example.com/b"),
            {"redirect": "https://example.com/b"},
        ),
        (
            Observation(URL, AT, 200, CRAWL, final_url="https://example.com/b"),
            {"redirect": "https://example.com/b"},
        ),
        (
            Observation(URL, AT, None, CRAWL, error="too-many-redirects"),
            {"redirect": "too-many-redirects"},
        ),
        (Observation(URL, AT, 410, CRAWL), {"client-error": "HTTP 410"}),
        (Observation(URL, AT, 429, CRAWL), {}),
        (Observation(URL, AT, 503, CRAWL), {"server-error": "HTTP 503"}),
        (Observation(URL, AT, 304, CRAWL, noindex="meta"), {"noindex": "meta"}),
        (Observation(URL, AT, 200, CRAWL, canonical="HTTPS://EXAMPLE.com/a/page#x"), {}),
        (
            Observation(URL, AT, 200, CRAWL, canonical="https://example.com/a"),
            {"canonical-elsewhere": "https://example.com/a"},
        ),
        (Observation(URL, AT, None, CRAWL, error="timeout"), {}),
    ],
)
def test_each_fetch_is_judged(seen: Observation, expected: dict[str, str]) -> None:
    assert judge(seen) == expected


def test_the_latest_fetch_decides_and_examples_follow_it() -> None:
    import numpy as np

    from auditor.coverage.inventory import InventoryIndex
    from auditor.coverage.tracker import Tracker
    from auditor.history.state import encode_state, state_locs
    from tests.history.helpers import entries

    frame = entries()
    index = InventoryIndex(state_locs(encode_state(frame)))
    tracker = Tracker(index, limit=5)
    a = str(frame["loc"][0])
    tracker.observe([Observation(a, AT + timedelta(days=1), 404, CRAWL)])
    tracker.observe([Observation(a, AT, 200, CRAWL)])  # older: changes nothing
    assert tracker.flags.sum() > 0 and len(next(iter(tracker.examples.values()))) == 1
    tracker.observe([Observation(a, AT + timedelta(days=2), 200, CRAWL)])
    assert int(np.count_nonzero(tracker.flags)) == 0
    assert all(not kept for kept in tracker.examples.values())
    assert int(tracker.crawled.sum()) == 1
