"""Evidence accumulates across runs: a verdict weighs the comparisons of recent runs."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from auditor.scorer.window import WINDOW_DAYS, WINDOW_RUNS
from tests.scorer.helpers import (
    NOW,
    WEEK,
    dispersion,
    earlier,
    page,
    run_score,
    spread_entries,
)


def test_trust_earned_on_run_one_holds_when_run_two_compares_fewer_pages():
    """16 of 16 on run 1; 12 on run 2 (8 of them pages seen before): still trusted."""
    run_one = earlier([page(i) for i in range(16)])
    run_two = [page(i) for i in range(8, 20)]
    result = run_score(dispersion(spread_entries()), run_two, [(NOW - WEEK, run_one)])

    assert result.verdict == "trusted", result.reasons
    window = result.segments[0].window
    assert window.runs == 2
    assert window.with_date_modified == 20  # each page once, its newest comparison
    assert result.sample.with_date_modified == 12  # the run's own figures stay its own


def test_a_page_seen_in_two_runs_counts_once():
    run_one = earlier([page(i) for i in range(12)])
    result = run_score(
        dispersion(spread_entries()), [page(i) for i in range(12)], [(NOW - WEEK, run_one)]
    )

    assert result.verdict == "inconclusive"
    assert result.segments[0].window.with_date_modified == 12


def test_contrary_evidence_counts_in_the_run_it_appears():
    """A trusted history does not drown four pages that disagree now."""
    run_one = earlier([page(i) for i in range(30)])
    now = [page(i, dm_offset=-40 * 86_400) for i in range(40, 44)]
    result = run_score(
        dispersion(spread_entries()), now, [(NOW - WEEK, run_one)], previous_verdict="trusted"
    )

    assert result.verdict == "untrusted"
    assert result.degraded
    mismatch = next(r for r in result.reasons if r.code == "date-modified-mismatch")
    assert "4 of 4" in mismatch.detail and "this run" in mismatch.detail


def test_runs_older_than_the_window_do_not_count():
    old = NOW - timedelta(days=WINDOW_DAYS + 1)
    run_one = [page(i, fetched=old) for i in range(16)]
    result = run_score(dispersion(spread_entries()), [page(20)], [(old, run_one)])

    assert result.verdict == "inconclusive"
    assert result.segments[0].window.runs == 1


def test_at_most_the_window_s_runs_count():
    past = []
    for k in range(WINDOW_RUNS + 2):
        started = NOW - WEEK * (k + 1)
        past.append((started, [page(100 + 10 * k + i, fetched=started) for i in range(6)]))
    result = run_score(dispersion(spread_entries(count=200)), [page(i) for i in range(6)], past)

    window = result.segments[0].window
    assert window.runs == WINDOW_RUNS
    assert window.with_date_modified == 6 * WINDOW_RUNS


def _moved(p, days: int):
    return replace(p, lastmod=p.lastmod + timedelta(days=days))


def test_changes_observed_over_several_runs_add_up():
    """Two pairs of runs: 20 pages compared with 2 changes, then 10 with 2: 30 and 4."""
    two_weeks = NOW - 2 * WEEK
    oldest = [page(i, dm_offset=None, fp=f"a{i}", fetched=two_weeks) for i in range(20)]
    middle = [page(i, dm_offset=None, fp=f"a{i}", fetched=NOW - WEEK) for i in range(20)]
    for i in (0, 1):  # changed, and lastmod said so
        middle[i] = replace(_moved(middle[i], 1), fp_exact=f"b{i}")
    now = [page(i, dm_offset=None, fp=f"a{i}") for i in range(10, 20)]
    for k in (0, 1):
        now[k] = replace(_moved(now[k], 2), fp_exact=f"c{k}")
    result = run_score(
        dispersion(spread_entries()), now, [(NOW - WEEK, middle), (two_weeks, oldest)]
    )

    window = result.segments[0].window
    assert (window.runs, window.compared, window.changed, window.consistent) == (3, 30, 4, 30)
    assert result.changes.compared == 10  # this run's own pair
    assert result.verdict == "trusted", result.reasons
