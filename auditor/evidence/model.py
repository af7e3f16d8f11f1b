"""What one fetched page says about its own changes, as frozen values.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["SOURCES", "DatedValue", "Fingerprint", "PageEvidence"]

#: Where a date came from (contract: docs/commands/page.md, ``auditor page --json``).
SOURCES = ("json-ld", "microdata", "rdfa", "opengraph", "meta", "http")

#: Why a date vouches for nothing (the scorer reports both as ``render-time-date-modified``).
RENDER_TIME = "render-time-date-modified"  # within seconds of the response's own Date
SHARED = "shared-date-modified"  # the same value on (nearly) every sampled page of the site


@dataclass(frozen=True, slots=True)
class DatedValue:
    """One date a page states about itself, with where it came from.

    ``value`` is aware UTC and stands for the start of its period, as the walker's
    lastmod does (``precision`` says what was written: ``2024-05-03`` is ``day``).
    """

    value: datetime
    raw: str
    source: str  # one of SOURCES
    precision: str  # one of auditor.models.PRECISIONS
    node_type: str | None = None  # e.g. NewsArticle, WebPage, article:modified_time
    credible: bool = True
    why_not_credible: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``auditor page --json``."""
        return {
            "value": self.value.isoformat(),
            "source": self.source,
            "credible": self.credible,
            "precision": self.precision,
            "raw": self.raw,
            "node_type": self.node_type,
            "why_not_credible": self.why_not_credible,
        }


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The main content of a page, reduced to hashes that survive boilerplate churn.

    ``exact`` is the hex SHA-256 of the normalised main text; ``simhash`` a 64-bit
    similarity hash of its word shingles (see ``simhash_distance``); ``structured``
    the hex SHA-256 of the page's structured data with every date removed; ``blocks``
    the page's text blocks in compact form (:mod:`auditor.evidence.blocks`: a hash,
    word count and place per block), for comparisons that tell template from content.
    """

    exact: str
    simhash: int
    structured: str
    words: int
    blocks: bytes = b""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; the simhash as 16 hex digits (a 64-bit integer overflows JSON numbers
        in JavaScript); of the blocks, their count and version."""
        from auditor.evidence.blocks import block_count, blocks_version

        return {
            "exact": self.exact,
            "simhash": f"{self.simhash:016x}",
            "structured": self.structured,
            "words": self.words,
            "blocks": block_count(self.blocks),
            "blocks_version": blocks_version(self.blocks),
        }


@dataclass(frozen=True, slots=True)
class PageEvidence:
    """Everything read from one page; a page that could not be read carries ``error``.

    ``error`` is a reason code (``http-error``, ``timeout``, ``not-html``, ``robots``,
    ``too-many-redirects``, ``redirect``...) with ``error_detail`` in words.
    ``notes`` name oddities that do not stop the reading (``modified-before-published``,
    ``date-modified-in-future``, ``html-cut-for-parsing``...). ``noindex`` says where the
    page asks not to be indexed (``meta``, ``header``; None: it does not) and
    ``canonical`` is the absolute URL it names as canonical, if any
    (:mod:`auditor.evidence.indexing`).
    """

    url: str
    fetched_at: datetime
    final_url: str | None = None
    status: int | None = None
    date_header: str | None = None
    http_last_modified: DatedValue | None = None
    etag: str | None = None
    content_type: str | None = None
    date_modified: DatedValue | None = None
    date_published: DatedValue | None = None
    fingerprint: Fingerprint | None = None
    notes: tuple[str, ...] = field(default=())
    truncated: bool = False
    error: str | None = None
    error_detail: str | None = None
    noindex: str | None = None
    canonical: str | None = None
    #: The links of its content area (:mod:`auditor.evidence.listing`): what a list lists.
    links: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when the page was read (whatever it said)."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``auditor page --json`` (docs/commands/page.md)."""

        def dated(value: DatedValue | None) -> dict[str, Any] | None:
            return None if value is None else value.to_dict()

        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "fetched_at": self.fetched_at.isoformat(),
            "date_header": self.date_header,
            "etag": self.etag,
            "content_type": self.content_type,
            "date_modified": dated(self.date_modified),
            "date_published": dated(self.date_published),
            "http_last_modified": dated(self.http_last_modified),
            "fingerprint": None if self.fingerprint is None else self.fingerprint.to_dict(),
            "notes": list(self.notes),
            "truncated": self.truncated,
            "error": self.error,
            "error_detail": self.error_detail,
            "noindex": self.noindex,
            "canonical": self.canonical,
        }
