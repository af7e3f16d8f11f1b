"""When a sub-sitemap's verdict is decided, so that sampling it can stop."""

from __future__ import annotations

from datetime import timedelta

from auditor.models import SitemapEntry
from auditor.scorer import PastRun, ScoreInputs, sampling_status, score
from auditor.scorer.doubt import CONDEMNED, DECIDED, MIN_CONFIRM, OPEN, THIN_WANTED, wanted_pages
from tests.scorer.helpers import NOW, SPREAD, WEEK, dispersion, earlier, page, spread_entries

STAMPED = "stamped.xml"
UNDATED = "undated.xml"


def _status(analysis, pages, past=()) -> dict[str, str]:
    runs = [PastRun(started, tuple(p)) for started, p in past]
    inputs = ScoreInputs(
        "https://s.example",
        NOW,
        {"urls": 1},
        True,
        analysis,
        pages,
        previous_pages=list(runs[0].pages) if runs else [],
        past_runs=runs,
    )
    return sampling_status(inputs)


def _score_verdict(analysis, pages) -> str:
    return score(ScoreInputs("https://s.example", NOW, {"urls": 1}, True, analysis, pages)).verdict


def _entry(sitemap: str, i: int, lastmod, precision) -> SitemapEntry:
    return SitemapEntry(f"https://s.example/{sitemap}/{i}", lastmod, precision, None, sitemap)


def _site():
    stamped = [
        SitemapEntry(
            f"https://s.example/{STAMPED}/{i}", NOW - timedelta(hours=3), "second", "x", STAMPED
        )
        for i in range(50)
    ]
    undated = [
        SitemapEntry(f"https://s.example/{UNDATED}/{i}", None, None, None, UNDATED)
        for i in range(50)
    ]
    return dispersion(spread_entries() + stamped + undated)


def test_sub_sitemaps_condemned_by_their_lastmod_values_alone():
    status = _status(_site(), [])
    assert status == {SPREAD: OPEN, STAMPED: CONDEMNED, UNDATED: CONDEMNED}


def test_agreement_decides_once_its_lower_bound_clears_the_bar():
    analysis = dispersion(spread_entries())
    assert _status(analysis, [page(i) for i in range(15)])[SPREAD] == OPEN
    assert _status(analysis, [page(i) for i in range(16)])[SPREAD] == DECIDED


def test_contrary_evidence_decides_after_a_few_pages_once_it_is_sure():
    analysis = dispersion(spread_entries())
    wrong = [page(i, dm_offset=-30 * 86_400) for i in range(4)]
    assert _status(analysis, wrong[:2])[SPREAD] == OPEN  # too few pages to judge a sample
    assert _status(analysis, [*wrong, page(10)])[SPREAD] == DECIDED
    # 3 of 5 against: contrary at 95% (the verdict if sampling ended here), not at 99%
    assert _score_verdict(analysis, [*wrong[:3], page(10), page(11)]) == "untrusted"
    assert _status(analysis, [*wrong[:3], page(10), page(11)])[SPREAD] == OPEN


def test_trust_from_earlier_runs_needs_a_clean_confirming_sample_now():
    analysis = dispersion(spread_entries())
    past = [(NOW - WEEK, earlier([page(i) for i in range(20)]))]
    fresh = [page(30 + i) for i in range(MIN_CONFIRM)]

    assert _status(analysis, fresh[:-1], past)[SPREAD] == OPEN
    assert _status(analysis, fresh, past)[SPREAD] == DECIDED
    doubtful = [*fresh, page(60, dm_offset=-30 * 86_400)]
    assert _status(analysis, doubtful, past)[SPREAD] == OPEN  # a page against: keep looking


def test_mixed_contrary_evidence_stops_sampling_only_on_enough_pages_against():
    analysis = dispersion(spread_entries())
    wrong = [page(i, dm_offset=-30 * 86_400) for i in range(4)]
    undated = page(20, dm_offset=None)
    # 3 against, 1 for: under the bar even at 99%, but which pages came first decides it
    mixed = [*wrong[:3], page(10), undated]
    assert _score_verdict(analysis, mixed) == "untrusted"
    assert _status(analysis, mixed)[SPREAD] == OPEN
    assert _status(analysis, [*wrong, page(10), undated])[SPREAD] == DECIDED  # 4 against
    assert _status(analysis, [*wrong[:3], undated, page(21, dm_offset=None)])[SPREAD] == DECIDED


def test_only_segments_left_inconclusive_want_pages_first_next_run():
    previous = {"posts.xml": "trusted", "lists.xml": "inconclusive", "tags.xml": "untrusted"}
    assert wanted_pages(previous) == {"lists.xml": THIN_WANTED}
    assert wanted_pages({}) == {}
