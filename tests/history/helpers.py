"""Real values for history tests: an audit result, its files, entries and pages."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pandas as pd

from auditor.history.written import render
from auditor.models import FileContent, SitemapEntry, SitemapFile
from auditor.scorer.result import (
    AuditResult,
    ChangeFigures,
    PageObservation,
    Reason,
    SampleFigures,
    SegmentVerdict,
)
from auditor.walker.inventory import entries_to_dataframe

STARTED = datetime(2026, 11, 29, 20, 0, 0, 250_000, tzinfo=UTC)
BIG_SIMHASH = 2**64 - 12_345  # > 2**63: negative once stored as signed 64-bit
PARIS = timezone(timedelta(hours=1))


def result(
    site: str = "https://example.com",
    *,
    started: datetime = STARTED,
    verdict: str = "untrusted",
    recheck_days: float | None = 3.5,
    run_id: int | None = 99,
) -> AuditResult:
    """A result with reasons, both segments, a sample and changes."""
    news, blog = f"{site}/news.xml", f"{site}/blog.xml"
    generation = Reason("generation-time", "98% of lastmods within 2 s", news)
    return AuditResult(
        site=site,
        started_at=started,
        verdict=verdict,
        reasons=(generation, Reason("unverified", "no credible dateModified")),
        inventory={"sitemaps": 3, "urls": 5, "with_lastmod": 3, "problems": 1},
        dispersion={"site": {"urls": 5, "top_share": 0.6}, "flags": ["generation-time"]},
        sample=SampleFigures(10, 9, 4, 3, 1, 1, render_time=2, agreement_low=0.3),
        changes=ChangeFigures(6, 2, 3, 2, 0.667, 1.0, (0.2, 0.94), (0.34, 1.0), 0.42),
        segments=(
            SegmentVerdict(
                news, 3, "untrusted", (generation,), agree=1, compared=3, precision=0.5, recall=1.0
            ),
            SegmentVerdict(blog, 2, "inconclusive", change_rate=0.05, recheck_days=7.25),
        ),
        run_id=run_id,
        report="reports/example.com/index.html",
        previous_verdict="trusted",
        recheck_days=recheck_days,
        finished_at=started + timedelta(minutes=3),
    )


def files(site: str = "https://example.com") -> list[SitemapFile]:
    """An index, two readable children (one gzip'd, with validators, one reused on a 304)
    and a 404; what a later run needs to reuse them (content) on the first three."""
    at = STARTED + timedelta(seconds=1)
    index = f"{site}/sitemap.xml"
    children = ((f"{site}/news.xml", "2026-11-29T19:58Z"), (f"{site}/blog.xml", None))
    news_content = FileContent(
        problems=(("relative-url", "1 relative loc(s) not used, e.g. 'a/b'"),),
        without_loc=2,
    )
    return [
        SitemapFile(
            index,
            "sitemapindex",
            None,
            True,
            at,
            200,
            records=3,
            bytes_read=420,
            content=FileContent(children=(*children, (f"{site}/gone.xml", "15/10/2026"))),
        ),
        SitemapFile(
            f"{site}/news.xml",
            "urlset",
            index,
            False,
            at.astimezone(PARIS),
            200,
            final_url=f"{site}/news.xml.gz",
            date_header="Sun, 29 Nov 2026 20:00:01 GMT",
            last_modified_header="Sun, 29 Nov 2026 19:58:00 GMT",
            etag='W/"abc"',
            index_lastmod=datetime(2026, 11, 29, 19, 58, tzinfo=UTC),
            records=3,
            urls=3,
            bytes_read=900,
            gzipped=True,
            readable=True,
            content=news_content,
        ),
        SitemapFile(
            f"{site}/blog.xml",
            "urlset",
            index,
            False,
            at,
            304,
            urls=2,
            readable=True,
            reused=True,
            content=FileContent(duplicates=1),
        ),
        SitemapFile(f"{site}/gone.xml", "unreadable", index, False, at, 404),
    ]


def entries(site: str = "https://example.com") -> pd.DataFrame:
    """Five URLs: fractions of a second, a date-only value, an offset, two without lastmod."""
    news, blog = f"{site}/news.xml", f"{site}/blog.xml"
    fraction = datetime(2026, 11, 29, 19, 58, 1, 123_456, tzinfo=UTC)
    rows = [
        SitemapEntry(f"{site}/a", fraction, "fraction", "2026-11-29T19:58:01.123456Z", news),
        SitemapEntry(f"{site}/b", datetime(2026, 11, 1, tzinfo=UTC), "day", "2026-11-01", news),
        SitemapEntry(f"{site}/é?q=1", None, None, None, news),
        SitemapEntry(
            f"{site}/c",
            datetime(2026, 10, 5, 8, 30, tzinfo=UTC),
            "minute",
            "2026-10-05T09:30+01:00",
            blog,
        ),
        SitemapEntry(f"{site}/d", None, None, "15/10/2026", blog),
    ]
    return entries_to_dataframe(rows)


def pages(site: str = "https://example.com") -> list[PageObservation]:
    """A credible page with a big simhash, a render-time one, and a failed fetch."""
    at = STARTED + timedelta(minutes=1)
    credible = PageObservation(
        loc=f"{site}/a",
        sitemap=f"{site}/news.xml",
        stratum="newest",
        fetched_at=at,
        lastmod=datetime(2026, 11, 29, 19, 58, 1, 123_456, tzinfo=UTC),
        lastmod_precision="fraction",
        status=200,
        date_modified=datetime(2026, 11, 29, 19, 0, tzinfo=UTC),
        date_modified_precision="second",
        date_modified_source="json-ld",
        date_modified_credible=True,
        date_published=datetime(2026, 1, 2, tzinfo=UTC),
        http_last_modified=datetime(2026, 11, 29, 19, 1, tzinfo=UTC),
        etag='"v1"',
        fp_exact="ab" * 32,
        fp_simhash=BIG_SIMHASH,
        fp_structured="cd" * 32,
        extra={"attempts": 2, "note": "ünïcode"},
        fp_blocks=b"\x01\x00\x00\x00\x00\xff binary, as kept",
        content_changed=True,
        change_share=0.125,
        change_distance=9,
        change_summary="+2 paragraphs in the article body",
        template_changed=True,
        template_regions="footer, sidebar",
        change_method="blocks",
    )
    render_time = replace(
        credible,
        loc=f"{site}/c",
        sitemap=f"{site}/blog.xml",
        stratum="panel",
        date_modified=at,
        date_modified_credible=False,
        why_not_credible="equals the fetch time",
        fp_simhash=7,
        truncated=True,
        extra={},
        fp_blocks=None,
        content_changed=False,
        change_share=0.0,
        change_summary="template only: footer",
        template_regions="footer",
    )
    failed = PageObservation(f"{site}/b", f"{site}/news.xml", "older", at, error="timeout")
    return [credible, render_time, failed]


def save(history, site: str = "https://example.com", **kwargs) -> int:  # type: ignore[no-untyped-def]
    """Save one complete run of ``site``; its run id."""
    return history.save_run(
        result(site, **kwargs), files=files(site), entries=entries(site), pages=pages(site)
    )


def large_inventory(n: int, seed: int = 1) -> pd.DataFrame:
    """An entries-like frame of ``n`` URLs (the columns url_state keeps), each lastmod
    written as generators write it (to the second with ``Z``, or to the microsecond)."""
    rng = np.random.default_rng(seed)
    sitemap = rng.integers(0, 20, size=n)
    words = np.array(["news", "sport", "culture", "city", "world", "tech", "health", "money"])
    slugs = words[rng.integers(0, len(words), size=n)]
    locs = [
        f"https://www.example.com/{s}/2026/{i:07d}-a-title-of-some-length.html"
        for i, s in enumerate(slugs)
    ]
    start = np.datetime64("2025-11-29T00:00:00", "us").astype(np.int64)
    micros = start + rng.integers(0, 365 * 86_400 * 10**6, size=n)
    whole = rng.random(n) < 0.7  # most generators write whole seconds
    micros[whole] -= micros[whole] % 1_000_000
    lastmod = pd.Series(micros.view("datetime64[us]")).dt.tz_localize("UTC")
    lastmod[rng.random(n) < 0.1] = pd.NaT
    precision = np.where(whole, "second", "fraction").astype(object)
    precision[lastmod.isna().to_numpy()] = None
    names = [f"https://www.example.com/sitemap-{i}.xml" for i in range(20)]
    written = np.where(whole, render(micros, 4), render(micros, 9)).astype(object)  # Z, +00:00
    written[lastmod.isna().to_numpy()] = None
    return pd.DataFrame(
        {
            "loc": pd.Series(locs, dtype=object),
            "lastmod": lastmod,
            "lastmod_precision": pd.Categorical(precision, categories=["second", "fraction"]),
            "sitemap": pd.Categorical.from_codes(sitemap, names),
            "lastmod_raw": pd.Series(written, dtype=object),
            "news_publication_date": pd.Series(pd.NaT, index=range(n), dtype="datetime64[us, UTC]"),
        }
    )
