"""What one fetch of a listed URL shows against its place in a sitemap: the findings.

An :class:`Observation` is one fetch, by the team's crawler (a crawl log's record, or
the history's ``crawl_state``) or by the audit's sample (a stored page); :func:`judge`
names what it shows:

- ``redirect``: a 3xx (not 304), a redirect the fetch followed to another URL, or one it
  refused to follow (off the origin, a loop);
- ``client-error`` (4xx, but 429, which says the crawler was too fast, not what the page
  is) and ``server-error`` (5xx);
- ``noindex`` and ``canonical-elsewhere`` on a 2xx (or a 304, on the copy it confirms):
  the page asks not to be indexed, or names another URL as canonical (after
  :func:`~auditor.evidence.indexing.normal_url`, a canonical naming the URL itself is not
  a finding).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from auditor.crawl.records import FetchRecord
from auditor.evidence.indexing import (
    canonical_of,
    header_value,
    noindex_of,
    normal_url,
    resolved,
)
from auditor.history.crawl import CrawlState
from auditor.scorer.result import PageObservation

if TYPE_CHECKING:
    from lxml import etree

__all__ = [
    "BITS",
    "CRAWL",
    "FINDINGS",
    "PAGE_FINDINGS",
    "SAMPLE",
    "Observation",
    "judge",
    "of_page",
    "of_record",
    "of_state",
]

CRAWL, SAMPLE = "crawl", "sample"  # who fetched: the team's crawler, the audit's sample
#: What one fetch can show of a listed URL, each a bit of a slot's flags.
PAGE_FINDINGS = ("redirect", "client-error", "server-error", "noindex", "canonical-elsewhere")
BITS = {code: 1 << i for i, code in enumerate(PAGE_FINDINGS)}
#: Every finding of a coverage check, in the order reports give them.
FINDINGS = ("not-crawled", "orphan", "in-several-sitemaps", *PAGE_FINDINGS)
_REFUSED_REDIRECTS = frozenset({"redirect", "too-many-redirects"})
_HTML = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True, slots=True)
class Observation:
    """One fetch of a URL: its answer and what its page said of its indexing."""

    url: str
    fetched_at: datetime
    status: int | None
    source: str  # CRAWL or SAMPLE
    final_url: str | None = None  # where the redirects followed led
    redirect_to: str | None = None  # a 3xx's Location
    noindex: str | None = None
    canonical: str | None = None
    error: str | None = None


def judge(seen: Observation) -> dict[str, str]:
    """The findings of one fetch, each with its detail in words."""
    status = seen.status
    if status is None or status == 429:
        return {"redirect": seen.error} if seen.error in _REFUSED_REDIRECTS else {}
    if 300 <= status < 400 and status != 304:
        return {"redirect": seen.redirect_to or f"HTTP {status}"}
    if status >= 500:
        return {"server-error": f"HTTP {status}"}
    if status >= 400:
        return {"client-error": f"HTTP {status}"}
    found: dict[str, str] = {}
    if seen.final_url and seen.final_url != seen.url and not _same(seen.final_url, seen.url):
        found["redirect"] = seen.final_url
    if seen.noindex:
        found["noindex"] = seen.noindex
    if seen.canonical and seen.canonical != seen.url and not _same(seen.canonical, seen.url):
        found["canonical-elsewhere"] = seen.canonical
    return found


def _same(one: str, other: str) -> bool:
    return normal_url(one) == normal_url(other)


def of_record(record: FetchRecord) -> Observation:
    """A crawl log's record, its body (when given) read for noindex and canonical."""
    headers = record.headers
    status = record.status
    if not headers and record.body is None:  # a status-only log line
        return Observation(record.url, record.fetched_at, status, CRAWL)
    target = None
    if status is not None and 300 <= status < 400:
        target = resolved(header_value(headers, "location"), record.url)
    tree = _tree(record.body, headers) if status is not None and status < 300 else None
    return Observation(
        record.url,
        record.fetched_at,
        status,
        CRAWL,
        redirect_to=target,
        noindex=noindex_of(headers, tree),
        canonical=canonical_of(headers, tree, record.url),
    )


def _tree(body: bytes | None, headers: Mapping[str, str]) -> etree._Element | None:
    """The parsed page of an HTML body (None: no body, or not HTML)."""
    if not body:
        return None
    kind = (header_value(headers, "content-type") or "").split(";")[0].strip().lower()
    if kind and kind not in _HTML:
        return None
    from auditor.evidence.page import MAX_PARSE_BYTES, parse_html

    return parse_html(body[:MAX_PARSE_BYTES], header_value(headers, "content-type"))


def of_state(state: CrawlState) -> Observation:
    """The crawler's last fetch of a URL as the history keeps it: its status and where it
    redirected; the noindex and canonical of the copy it holds (meaningful on a 2xx)."""
    return Observation(
        state.loc,
        state.fetched_at,
        state.status,
        CRAWL,
        redirect_to=state.redirect_to,
        noindex=state.noindex,
        canonical=state.canonical,
    )


def of_page(page: PageObservation) -> Observation:
    """A page of the audit's sample (a page never requested, for robots.txt or an
    overload, says nothing: its status is None)."""
    return Observation(
        page.loc,
        page.fetched_at,
        page.status,
        SAMPLE,
        final_url=page.final_url,
        noindex=page.noindex,
        canonical=page.canonical,
        error=page.error,
    )
