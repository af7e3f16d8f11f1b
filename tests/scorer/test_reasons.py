"""An `unverified` reason names what actually kept trust away, with the figure that decided."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.scorer.helpers import NOW, WEEK, dispersion, page, run_score, spread_entries


def _unverified(result) -> str:
    assert result.verdict == "inconclusive", result.reasons
    return next(r.detail for r in result.reasons if r.code == "unverified")


def _panel(count: int, changed: int, advanced: int):
    """``count`` panel pages a week apart without dateModified: the first ``changed``
    changed, the first ``advanced`` of them had their lastmod moved."""
    before = [page(i, dm_offset=None, fp=f"v1-{i}", fetched=NOW - WEEK) for i in range(count)]
    after = []
    for i, p in enumerate(before):
        now = replace(p, fetched_at=NOW, fp_exact=f"v2-{i}" if i < changed else p.fp_exact)
        if i < advanced:
            now = replace(now, lastmod=p.lastmod + timedelta(days=5))
        after.append(now)
    return before, after


def test_both_minimums_met_the_agreement_is_named():
    """12 compared, 12 changed, lastmod moved on 9: the minimums hold, agreement does not."""
    before, after = _panel(12, changed=12, advanced=9)
    detail = _unverified(run_score(dispersion(spread_entries()), after, [(NOW - WEEK, before)]))

    assert "9 of 12" in detail
    assert "lower bound 0.47" in detail and "bar 0.8" in detail
    assert "need 10+" not in detail and "need 3+" not in detail


def test_too_few_panel_pages_is_named_as_such():
    before, after = _panel(6, changed=3, advanced=3)
    detail = _unverified(run_score(dispersion(spread_entries()), after, [(NOW - WEEK, before)]))

    assert "6 panel pages compared" in detail and "need 10+" in detail


def test_too_few_changes_is_named_as_such():
    before, after = _panel(12, changed=1, advanced=1)
    detail = _unverified(run_score(dispersion(spread_entries()), after, [(NOW - WEEK, before)]))

    assert "1 changed" in detail and "need 3+ changes" in detail


def test_agreeing_dates_short_of_the_bar_say_how_many_more_are_needed():
    detail = _unverified(run_score(dispersion(spread_entries()), [page(i) for i in range(12)]))

    assert "12 of 12" in detail and "lower bound 0.76" in detail
    assert "4 more agreeing" in detail  # 16 of 16 clear 0.8
    assert "no earlier run" in detail
