"""One fetched page read into :class:`PageEvidence`: pure, no network, never raises on content.

The caller fetches (``auditor page`` through :class:`auditor.http.HttpClient`, the
sampler later); :func:`read_page` reads the bytes and headers it got.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

import lxml.html
from lxml import etree
from w3lib.encoding import html_to_unicode

from auditor.evidence.credibility import judge_date_modified, modified_before_published
from auditor.evidence.fingerprint import fingerprint_tree
from auditor.evidence.indexing import canonical_of, noindex_of
from auditor.evidence.listing import content_links
from auditor.evidence.markup import Markup
from auditor.evidence.model import DatedValue, PageEvidence
from auditor.evidence.structured import read_structured
from auditor.http.walls import WALL_PROBE_BYTES, wall_of
from auditor.walker.dates import parse_rfc822

__all__ = [
    "HTML_TYPES",
    "MAX_PARSE_BYTES",
    "PAGE_MAX_BYTES",
    "failed_page",
    "parse_html",
    "read_page",
]

#: Bytes of one page downloaded at most; a page over the cap is read up to it and
#: marked truncated.
PAGE_MAX_BYTES = 10 * 1024 * 1024

#: Bytes of a page parsed at most; the rest is ignored and noted, so one page's reading
#: stays bounded in time (extraction and fingerprint are linear in this size).
MAX_PARSE_BYTES = 5 * 1024 * 1024
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: lxml.html's element classes, chosen in C: lxml.html's own lookup is a Python call for
#: every element object a walk makes (4% of reading a real page). The classes are the
#: same but for form controls, plain HtmlElement here (their form values are never read).
_HTML_CLASSES = etree.ElementDefaultClassLookup(
    element=lxml.html.HtmlElement,
    comment=lxml.html.HtmlComment,
    pi=lxml.html.HtmlProcessingInstruction,
    entity=lxml.html.HtmlEntity,
)


def read_page(
    html: bytes,
    *,
    url: str,
    headers: Mapping[str, str],
    status: int,
    fetched_at: datetime,
    final_url: str | None = None,
    truncated: bool = False,
    rdfa: bool = False,
) -> PageEvidence:
    """What the page says about its own changes: dates, HTTP validators, fingerprints.

    ``headers`` are the response's (any case); ``fetched_at`` aware UTC. A bot wall
    (``blocked``, :mod:`auditor.http.walls`), a non-2xx status or a non-HTML content type
    gives a page with ``error`` set and nothing parsed (but what its headers say of
    indexing: ``X-Robots-Tag``, a canonical ``Link``).
    """
    head = {k.lower(): v for k, v in headers.items()}
    content_type = head.get("content-type")
    page_url = final_url or url
    base = PageEvidence(
        url=url,
        final_url=final_url or url,
        status=status,
        fetched_at=fetched_at,
        date_header=head.get("date"),
        http_last_modified=_date(head.get("last-modified")),
        etag=head.get("etag"),
        content_type=content_type,
        truncated=truncated,
        noindex=noindex_of(head, None),
        canonical=canonical_of(head, None, page_url),
    )
    failure = _refusal(status, head, html)
    if failure is not None:
        return replace(base, error=failure[0], error_detail=failure[1])
    notes: list[str] = []
    if len(html) > MAX_PARSE_BYTES:
        html = html[:MAX_PARSE_BYTES]
        notes.append("html-cut-for-parsing")
    tree, source = _parsed(html, content_type)
    markup = Markup(source)
    structured = read_structured(
        tree, urls=[final_url or url, url], html=html if rdfa else None, markup=markup
    )
    notes += structured.notes
    reference = _date(head.get("date"))
    modified = judge_date_modified(
        structured.date_modified, reference.value if reference else fetched_at
    )
    published = structured.date_published
    if modified_before_published(modified, published):
        notes.append("modified-before-published")
    return replace(
        base,
        date_modified=modified,
        date_published=published,
        fingerprint=fingerprint_tree(tree, structured.items, markup),
        notes=tuple(notes),
        noindex=noindex_of(head, tree),
        canonical=canonical_of(head, tree, page_url),
        links=content_links(tree, page_url),
    )


def failed_page(
    url: str,
    error: str,
    detail: str,
    *,
    fetched_at: datetime,
    status: int | None = None,
    final_url: str | None = None,
) -> PageEvidence:
    """A page that could not be read, as a value (``error`` is a reason code;
    ``final_url`` where the redirects followed led, when known)."""
    return PageEvidence(
        url=url,
        fetched_at=fetched_at,
        final_url=final_url,
        status=status,
        error=error,
        error_detail=detail,
    )


def parse_html(html: bytes, content_type: str | None = None) -> etree._Element:
    """The page as an lxml tree, decoded by BOM, then the Content-Type charset, then
    ``<meta charset>``, else UTF-8 (undecodable bytes replaced). Never raises."""
    return _parsed(html, content_type)[0]


def _parsed(html: bytes, content_type: str | None) -> tuple[etree._Element, bytes]:
    """:func:`parse_html`'s tree, and the UTF-8 bytes it was parsed from."""
    _, text = html_to_unicode(content_type, html)
    source = text.encode("utf-8", "replace")
    parser = lxml.html.HTMLParser(encoding="utf-8")
    parser.set_element_class_lookup(_HTML_CLASSES)
    try:
        return lxml.html.document_fromstring(source, parser=parser), source
    except (etree.ParserError, ValueError):  # an empty or whitespace-only document
        empty = b"<html><body></body></html>"
        return lxml.html.document_fromstring(empty, parser=parser), empty


def _refusal(status: int, headers: Mapping[str, str], html: bytes) -> tuple[str, str] | None:
    wall = wall_of(status, headers, html[:WALL_PROBE_BYTES])
    if wall is not None:  # a bot wall is no page, whatever its status
        return "blocked", wall.detail()
    content_type = headers.get("content-type")
    if not 200 <= status < 300:
        return "http-error", f"HTTP {status}"
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media and media not in HTML_TYPES:
        return "not-html", f"Content-Type {media}"
    if not media and not html.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
        return "not-html", "no Content-Type and the body does not look like HTML"
    return None


def _date(header: str | None) -> DatedValue | None:
    """An HTTP date header (``Last-Modified``, ``Date``) as a DatedValue, or None."""
    parsed = parse_rfc822(header) if header else None
    if parsed is None or header is None:
        return None
    return DatedValue(parsed.value, header.strip(), "http", parsed.precision, "Last-Modified")
