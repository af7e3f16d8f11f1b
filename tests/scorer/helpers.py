"""Synthetic evidence for the scorer's tests: sub-sitemaps, sampled pages, earlier runs."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from auditor.dispersion import analyse_entries
from auditor.models import SitemapEntry
from auditor.scorer import PastRun, ScoreInputs, score
from auditor.scorer.result import AuditResult, PageObservation
from auditor.walker.inventory import entries_to_dataframe

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
SPREAD = "spread.xml"
WEEK = timedelta(days=7)


def spread_entries(sitemap: str = SPREAD, count: int = 100) -> list[SitemapEntry]:
    """Entries whose lastmods are each their own day: nothing flagged."""
    return [
        SitemapEntry(f"https://s.example/{sitemap}/{i}", lastmod_of(i), "second", "x", sitemap)
        for i in range(count)
    ]


def dispersion(entries: list[SitemapEntry], previous: list[SitemapEntry] | None = None):
    """The analysis of ``entries`` (against an earlier walk when given)."""
    earlier = entries_to_dataframe(previous) if previous is not None else None
    return analyse_entries(entries_to_dataframe(entries), [], previous=earlier, now=NOW)


def lastmod_of(i: int) -> datetime:
    """The lastmod of page ``i`` of a spread sub-sitemap."""
    return NOW - timedelta(days=3 + i)


def page(
    i: int,
    *,
    sitemap: str = SPREAD,
    lastmod: datetime | None = None,
    dm_offset: float | None = 0.0,
    fp: str = "same",
    fetched: datetime = NOW,
) -> PageObservation:
    """Page ``i`` as sampled: lastmod, a credible dateModified ``dm_offset`` s from it."""
    lastmod = lastmod_of(i) if lastmod is None else lastmod
    dm = None if dm_offset is None else lastmod + timedelta(seconds=dm_offset)
    return PageObservation(
        loc=f"https://s.example/{sitemap}/{i}",
        sitemap=sitemap,
        stratum="newest",
        fetched_at=fetched,
        lastmod=lastmod,
        lastmod_precision="second",
        status=200,
        date_modified=dm,
        date_modified_precision="second" if dm else None,
        date_modified_source="json-ld" if dm else None,
        date_modified_credible=True if dm else None,
        fp_exact=fp,
        fp_simhash=1,
        fp_structured="s",
    )


def earlier(pages: list[PageObservation], delta: timedelta = WEEK) -> list[PageObservation]:
    """The same pages, fetched ``delta`` before."""
    return [replace(p, fetched_at=p.fetched_at - delta) for p in pages]


def run_score(
    analysis,
    pages: list[PageObservation],
    past: list[tuple[datetime, list[PageObservation]]] = (),  # type: ignore[assignment]
    previous_verdict: str | None = None,
) -> AuditResult:
    """Score this run against earlier runs given newest first as (started_at, pages)."""
    past_runs = [PastRun(started, tuple(run_pages)) for started, run_pages in past]
    return score(
        ScoreInputs(
            "https://s.example",
            NOW,
            {"urls": 1},
            True,
            analysis,
            pages,
            previous_pages=list(past_runs[0].pages) if past_runs else [],
            previous_verdict=previous_verdict,
            past_runs=past_runs,
        )
    )


def codes(result: AuditResult) -> set[str]:
    """The reason codes of a result."""
    return {r.code for r in result.reasons}
