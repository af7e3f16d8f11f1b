"""Fuzzing the evidence stage (auditor/evidence): what a page says about its own changes.

Properties:

- the page's own dateModified and datePublished (in JSON-LD, microdata, OpenGraph
  or meta tags) win over every other date on the page (the site's, the
  publisher's, teasers' and related items' of other pages, weaker tags), whatever
  the JSON-LD shape (``@graph``, lists, ``mainEntity``, CDATA wrappers, trailing
  commas) and whatever broken block sits beside it;
- a page reads the same in any encoding it is correctly declared in (header
  charset, ``<meta charset>``, BOM);
- any bytes with any headers give a PageEvidence whose JSON (``auditor page
  --json``) can be written: never an exception, every error a named code;
- a saved page (gzip'd or not) reads as the same page fetched.
"""

from __future__ import annotations

import gzip
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from auditor.evidence import parse_page_date, read_page, read_page_file
from auditor.evidence.model import SOURCES, PageEvidence
from auditor.models import PRECISIONS
from tests.fuzz.budget import fuzz
from tests.fuzz.mutations import HOSTILE_TOKENS, mutated
from tests.fuzz.pages import OTHER_DATE, PAGE_ENCODINGS, URL, pages, render

FETCHED_AT = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
HTML_HEADERS = {"Content-Type": "text/html; charset=utf-8", "Date": "Sun, 29 Nov 2026 20:00:00 GMT"}


def read(html: bytes, headers: dict[str, str] | None = None, **kwargs: object) -> PageEvidence:
    return read_page(
        html,
        url=URL,
        headers=HTML_HEADERS if headers is None else headers,
        status=kwargs.pop("status", 200),  # type: ignore[arg-type]
        fetched_at=FETCHED_AT,
        **kwargs,  # type: ignore[arg-type]
    )


def assert_evidence_invariants(evidence: PageEvidence) -> None:
    assert evidence.error in (None, "http-error", "not-html"), evidence.error
    if evidence.error is None:
        assert evidence.fingerprint is not None
    for dated in (evidence.date_modified, evidence.date_published, evidence.http_last_modified):
        if dated is not None:
            assert dated.value.utcoffset().total_seconds() == 0
            assert dated.source in SOURCES and dated.precision in PRECISIONS
    json.dumps(evidence.to_dict())  # the `auditor page --json` document can be written


# -- the article's own dates win ---------------------------------------------------------------


@fuzz(100)
@given(pages(), st.booleans())
def test_the_pages_own_dates_win_over_every_other_date(page, rdfa):
    evidence = read(render(page).encode(), rdfa=rdfa)
    event(f"own dates in {page.syntax}")
    assert_evidence_invariants(evidence)
    assert evidence.error is None
    for written, found in (
        (page.modified, evidence.date_modified),
        (page.published, evidence.date_published),
    ):
        meant = parse_page_date(written) if written else None
        if meant is None:
            event("article date absent or unreadable")
            continue
        assert found is not None, f"{written!r} not found ({page.placement}, {page.noise})"
        assert (found.value, found.precision, found.source) == (
            meant.value,
            meant.precision,
            page.syntax,
        ), f"{page.syntax} date lost to {found.source} {found.node_type} ({page.noise})"
        assert found.raw != OTHER_DATE or written == OTHER_DATE
    if "broken-json-ld" in page.noise:
        assert "invalid-json-ld" in evidence.notes


# -- encodings ---------------------------------------------------------------------------------


@st.composite
def encoded_pages(draw: st.DrawFn) -> tuple[bytes, bytes, dict[str, str], str]:
    """A page in UTF-8 and in another encoding, declared one way, with the headers to send."""
    encoding = draw(st.sampled_from(sorted(PAGE_ENCODINGS)))
    chars, name = PAGE_ENCODINGS[encoding]
    page = draw(pages(extra=chars))
    how = draw(st.sampled_from(["header", "meta", "both"]))
    if encoding.startswith("utf-16"):
        how = "bom"
    headers = {"Content-Type": "text/html"}
    if how in ("header", "both"):
        headers["Content-Type"] = f"text/html; charset={name}"
    meta = name if how in ("meta", "both") else None
    text = render(page, charset_meta=meta)
    data = text.encode(encoding)
    if how == "bom":
        data = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[encoding] + data
    return render(page).encode(), data, headers, f"{encoding} by {how}"


@fuzz(60)
@given(encoded_pages())
def test_a_page_reads_the_same_in_any_declared_encoding(case):
    utf8, data, headers, how = case
    event(how.split(" by ")[1])
    reference, other = read(utf8), read(data, headers)
    assert other.error is None
    assert other.fingerprint == reference.fingerprint, how
    assert other.date_modified == reference.date_modified, how
    assert other.date_published == reference.date_published, how


# -- any bytes at all --------------------------------------------------------------------------

_content_types = st.sampled_from(
    [
        None,
        "text/html",
        "text/html; charset=utf-8",
        "text/html; charset=bogus",
        'text/html; charset="utf-16"',
        "text/html; charset=utf-7",
        "application/xhtml+xml",
        "TEXT/HTML; Charset=ISO-8859-1",
        "application/json",
        "image/png",
        "",
        ";;;",
    ]
)
_header_dates = st.sampled_from(
    [None, "Sun, 29 Nov 2026 20:00:00 GMT", "garbage", "", "Sun, 31 Feb 2026 99:00:00 GMT"]
)


@st.composite
def hostile_pages(draw: st.DrawFn) -> bytes:
    choice = draw(st.sampled_from(["mutated", "binary", "tokens"]))
    if choice == "binary":
        return draw(st.binary(max_size=400))
    if choice == "tokens":
        tokens = [*HOSTILE_TOKENS, b"<script type='application/ld+json'>", b"{", b"[", b"<div>"]
        return b"".join(draw(st.lists(st.sampled_from(tokens), max_size=40)))
    return draw(mutated(render(draw(pages())).encode()))


@fuzz(120)
@given(
    hostile_pages(),
    _content_types,
    _header_dates,
    _header_dates,
    st.sampled_from([200, 200, 203, 204, 301, 404, 500]),
    st.booleans(),
)
def test_any_bytes_and_headers_give_evidence_never_an_exception(
    html, content_type, date, last_modified, status, rdfa
):
    headers = {
        k: v
        for k, v in {
            "Content-Type": content_type,
            "Date": date,
            "Last-Modified": last_modified,
        }.items()
        if v is not None
    }
    evidence = read(html, headers, status=status, rdfa=rdfa)
    assert_evidence_invariants(evidence)
    if not 200 <= status < 300:
        assert evidence.error == "http-error"
    event(f"error: {evidence.error}")


# -- saved pages -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pages")


_counter = itertools.count()


@fuzz(30)
@given(pages(), st.booleans())
def test_a_saved_page_reads_as_the_same_page_fetched(folder, page, gzipped):
    html = render(page).encode()
    path = folder / f"p{next(_counter)}.html"
    path.write_bytes(gzip.compress(html, mtime=0) if gzipped else html)
    saved = read_page_file(path)
    fetched = read(html, {})
    assert saved.error is None and not saved.truncated
    assert saved.fingerprint == fetched.fingerprint
    assert (saved.date_published, saved.notes) == (fetched.date_published, fetched.notes)
    assert (saved.date_modified is None) == (fetched.date_modified is None)
