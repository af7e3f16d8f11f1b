"""Values passed between pipeline stages.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

#: Walker problem codes (contract: the table in docs/commands/walk.md).
PROBLEM_CODES = frozenset(
    {
        "http-error",
        "timeout",
        "too-large",
        "not-well-formed",
        "not-a-sitemap",
        "forbidden-xml",
        "cross-host",
        "relative-url",
        "nested-index",
        "index-loop",
        "redirect",
        "too-many-redirects",
        "too-many-urls",
        "duplicate-url",
        "invalid-lastmod",
        "wrong-namespace",
        "max-files",
        "blocked",
        # Google's index rules (auditor/walker/indexrules.py)
        "url-not-allowed",
        "path-mismatch",
        "url-in-index",
        "changefreq-in-index",
        "too-many-sitemaps",
        "duplicate-sitemap",
        "unsupported-encoding",
    }
)

#: lastmod precisions, coarsest first.
PRECISIONS = ("year", "month", "day", "minute", "second", "fraction")


class Extensions(NamedTuple):
    """What one URL's sitemap extensions say (:mod:`auditor.walker.extensions`); a field
    is 0, None or () when the entry has none of it."""

    hreflang_count: int = 0
    hreflang: tuple[tuple[str, str], ...] = ()  # (language, href), the first 50
    image_count: int = 0
    first_image: str | None = None
    video_count: int = 0
    news_title: str | None = None
    news_language: str | None = None


class SitemapEntry(NamedTuple):
    """One unique URL of a site's sitemaps.

    A NamedTuple rather than a dataclass: the walker makes a million of these a
    run and a tuple is built several times faster, while staying immutable.
    """

    loc: str
    lastmod: datetime | None
    lastmod_precision: str | None
    lastmod_raw: str | None
    sitemap: str
    news_publication_date: datetime | None = None
    #: hreflang alternates, images, videos and Google News fields; None when the entry
    #: has none (:mod:`auditor.walker.extensions`)
    extensions: Extensions | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with one sitemap file (or robots.txt), by code."""

    sitemap: str
    code: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        """The problem as the ``--problems`` JSON object."""
        return {"sitemap": self.sitemap, "code": self.code, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class FileContent:
    """What a sitemap file said besides its page entries (picklable).

    With the entries it gave, enough for a later walk to stand in for reading the file
    again when the server says it has not changed (a 304): ``problems`` found reading it
    (its format, a cut, locs refused: ``(code, detail)``), an index's ``children`` as
    written (``(loc, lastmod text or None)``, the ones it may list), and the counts of
    entries without a URL and of URLs already listed. ``repeated`` names the first of
    those (at most ``auditor.walker.pages.REPEATED_MAX``), in the file's order: the
    inventory gives each to the file that listed it first, so coverage tells which other
    sub-sitemaps list it too.
    """

    problems: tuple[tuple[str, str], ...] = ()
    children: tuple[tuple[str, str | None], ...] = ()
    without_loc: int = 0
    duplicates: int = 0
    repeated: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SitemapFile:
    """What the walker learnt about one sitemap file it tried to read.

    ``reused`` is true when the server answered 304 Not Modified to a conditional
    request: the file's entries (an index's children) are the previous run's, nothing
    was downloaded (``bytes_read`` 0). ``content`` is what a later walk needs to reuse
    the file (None when it was not read from a 2xx answer).
    """

    url: str
    kind: str  # urlset | sitemapindex | text | rss | atom | unreadable
    parent: str | None
    via_robots: bool
    fetched_at: datetime
    status: int | None = None
    final_url: str | None = None
    date_header: str | None = None
    last_modified_header: str | None = None
    etag: str | None = None
    index_lastmod: datetime | None = None
    records: int = 0
    urls: int = 0
    bytes_read: int = 0
    gzipped: bool = False
    readable: bool = False
    reused: bool = False
    content: FileContent | None = None
