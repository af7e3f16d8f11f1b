"""A shared lastmod value is evidence to weigh, not a verdict on its own.

The real case: a Hugo documentation site whose lastmod is each page's last commit.
136 of 195 URLs share the date of one months-old commit that touched them all,
unmoved between runs; the pages' own dateModified agree.
"""

from __future__ import annotations

from datetime import timedelta

from auditor.dispersion import flag_codes
from auditor.models import SitemapEntry
from tests.scorer.helpers import NOW, codes, dispersion, page, run_score

DOCS = "docs.xml"
SHARED = NOW - timedelta(days=150, hours=2)  # one commit touched 136 pages


def _lastmod(i: int):
    if i < 20:
        return NOW - timedelta(days=200 + i)  # older pages, untouched by that commit
    if i < 156:
        return SHARED
    return NOW - timedelta(days=3 + i - 156)  # edited since


def _entries(moved_from: timedelta | None = None) -> list[SitemapEntry]:
    entries = []
    for i in range(195):
        lastmod = _lastmod(i)
        if moved_from is not None and lastmod == SHARED:
            lastmod = SHARED - moved_from
        entries.append(SitemapEntry(f"https://s.example/{DOCS}/{i}", lastmod, "second", "x", DOCS))
    return entries


def _page(i: int, dm_offset: float = 0.0):
    return page(i, sitemap=DOCS, lastmod=_lastmod(i), dm_offset=dm_offset)


def _agreeing(shared: int, others: int):
    return [_page(20 + i) for i in range(shared)] + [_page(156 + i) for i in range(others)]


def test_the_fixture_is_flagged_shared_and_nothing_else():
    analysis = dispersion(_entries(), previous=_entries())
    assert flag_codes(analysis.segments[0].flags) == ["shared-timestamp"]


def test_an_unmoved_shared_value_the_pages_confirm_is_trusted():
    result = run_score(dispersion(_entries(), previous=_entries()), _agreeing(18, 8))

    assert result.verdict == "trusted", result.reasons
    note = next(r for r in result.reasons if r.code == "shared-timestamp")
    assert "136 of 195" in note.detail


def test_a_shared_value_with_too_few_of_its_pages_checked_is_not_trusted_yet():
    result = run_score(dispersion(_entries()), _agreeing(2, 24))

    assert result.verdict == "inconclusive"
    assert {"shared-timestamp", "unverified"} <= codes(result)
    unverified = next(r for r in result.reasons if r.code == "unverified")
    assert "2 of the pages carrying the shared value" in unverified.detail


def test_a_shared_value_its_own_pages_contradict_condemns():
    pages = [_page(20 + i, dm_offset=30 * 86_400) for i in range(4)] + _agreeing(0, 30)
    result = run_score(dispersion(_entries()), pages)

    assert result.verdict == "untrusted"
    shared = next(r for r in result.reasons if r.code == "shared-timestamp")
    assert "contradict" in shared.detail and "4 of 4" in shared.detail


def test_a_shared_value_that_moved_together_condemns():
    analysis = dispersion(_entries(), previous=_entries(moved_from=timedelta(days=30)))
    result = run_score(analysis, _agreeing(18, 8))

    assert result.verdict == "untrusted"
    assert {"generation-time", "shared-timestamp"} <= codes(result)
