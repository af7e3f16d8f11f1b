"""A coverage check's result: counts per sub-sitemap with bounded examples, orphans,
URLs listed in several sub-sitemaps; as JSON and as the tables of an export.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.coverage.findings import FINDINGS, PAGE_FINDINGS
from auditor.coverage.tracker import Example

__all__ = ["CoverageResult", "SitemapCoverage", "SitemapPair"]

#: The findings counted per sub-sitemap (an orphan is in none).
SITEMAP_FINDINGS = tuple(code for code in FINDINGS if code != "orphan")


@dataclass(frozen=True)
class SitemapCoverage:
    """One sub-sitemap's URLs against the crawl: how many of each finding, examples."""

    sitemap: str
    urls: int
    crawled: int
    counts: dict[str, int]  # by finding code (SITEMAP_FINDINGS)
    examples: dict[str, list[Example]]

    def to_dict(self) -> dict[str, Any]:
        """The sub-sitemap as a JSON object."""
        return {
            "sitemap": self.sitemap,
            "urls": self.urls,
            "crawled": self.crawled,
            "counts": dict(self.counts),
            "examples": {
                code: [e.to_dict() for e in found] for code, found in self.examples.items() if found
            },
        }


@dataclass(frozen=True)
class SitemapPair:
    """URLs listed by two sub-sitemaps: ``first`` (where the walk kept them) and ``also``."""

    first: str
    also: str
    urls: int
    examples: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The pair as a JSON object."""
        return {
            "first": self.first,
            "also": self.also,
            "urls": self.urls,
            "examples": list(self.examples),
        }


@dataclass(frozen=True)
class CoverageResult:
    """What ``auditor coverage`` finds for one site (``to_dict``: its ``--json``)."""

    site: str
    crawled_from: str  # "history" (crawl_state), or the crawl log's name
    walked_at: datetime  # the inventory's walk
    urls: int
    fetches: int  # the site's fetches read: the crawl's and the sample's
    sample_pages: int  # ... of which the latest audit's sample
    other_sites: int  # crawl log records of other sites, ignored
    sitemaps: tuple[SitemapCoverage, ...]
    orphans: int
    orphans_exact: bool
    orphan_examples: tuple[Example, ...]
    several: int  # distinct URLs listed in more than one sub-sitemap
    several_exact: bool  # False: some file repeated more URLs than the walk names
    pairs: tuple[SitemapPair, ...]

    @property
    def totals(self) -> dict[str, int]:
        """Each finding's count over the site."""
        totals = {code: sum(s.counts.get(code, 0) for s in self.sitemaps) for code in FINDINGS}
        totals["orphan"] = self.orphans
        totals["in-several-sitemaps"] = self.several
        return totals

    @property
    def crawled(self) -> int:
        """Listed URLs crawled at least once."""
        return sum(s.crawled for s in self.sitemaps)

    def to_dict(self) -> dict[str, Any]:
        """The result as one JSON object."""
        return {
            "schema": 1,
            "site": self.site,
            "crawled_from": self.crawled_from,
            "walked_at": self.walked_at.isoformat(),
            "inventory": {"urls": self.urls, "sitemaps": len(self.sitemaps)},
            "crawl": {
                "fetches": self.fetches,
                "sample_pages": self.sample_pages,
                "other_sites": self.other_sites,
                "listed_crawled": self.crawled,
            },
            "totals": self.totals,
            "sitemaps": [s.to_dict() for s in self.sitemaps],
            "orphans": {
                "urls": self.orphans,
                "exact": self.orphans_exact,
                "examples": [e.to_dict() for e in self.orphan_examples],
            },
            "in_several_sitemaps": {
                "urls": self.several,
                "exact": self.several_exact,
                "pairs": [p.to_dict() for p in self.pairs],
            },
        }

    def sitemap_rows(self) -> list[dict[str, Any]]:
        """One row per sub-sitemap: its counts (the export's ``coverage`` table)."""
        return [
            {
                "site": self.site,
                "sitemap": s.sitemap,
                "urls": s.urls,
                "crawled": s.crawled,
                **{code.replace("-", "_"): s.counts.get(code, 0) for code in SITEMAP_FINDINGS},
                "walked_at": self.walked_at,
            }
            for s in self.sitemaps
        ]

    def finding_rows(self) -> list[dict[str, Any]]:
        """One row per finding and URL among those kept (all of them when the check kept
        every example; never-crawled URLs are counted, not listed): the export's
        ``coverage_findings`` table."""
        rows = [
            _row(self.site, s.sitemap, code, e)
            for s in self.sitemaps
            for code in PAGE_FINDINGS
            for e in s.examples.get(code, [])
        ]
        rows += [
            _row(self.site, p.first, "in-several-sitemaps", Example(url, p.also))
            for p in self.pairs
            for url in p.examples
        ]
        rows += [_row(self.site, None, "orphan", e) for e in self.orphan_examples]
        return rows


def _row(site: str, sitemap: str | None, code: str, example: Example) -> dict[str, Any]:
    return {
        "site": site,
        "sitemap": sitemap,
        "finding": code,
        "url": example.url,
        "detail": example.detail,
        "source": example.source,
    }
