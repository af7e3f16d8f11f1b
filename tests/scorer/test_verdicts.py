"""The scorer's verdicts on synthetic evidence: each route to trust, each reason against it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.dispersion import analyse_entries
from auditor.models import SitemapEntry
from auditor.scorer import ScoreInputs, score
from auditor.scorer.result import PageObservation
from auditor.walker.inventory import entries_to_dataframe

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
SPREAD = "spread.xml"
STAMPED = "stamped.xml"
UNDATED = "undated.xml"


def _entries(sitemap: str, count: int):
    for i in range(count):
        loc = f"https://s.example/{sitemap}/{i}"
        if sitemap == UNDATED:
            yield SitemapEntry(loc, None, None, None, sitemap)
        elif sitemap == STAMPED:
            yield SitemapEntry(loc, NOW - timedelta(hours=3), "second", "x", sitemap)
        else:
            yield SitemapEntry(loc, NOW - timedelta(days=3 + i), "second", "x", sitemap)


def _dispersion(**segments: int):
    entries = [e for name, n in segments.items() for e in _entries(f"{name}.xml", n)]
    return analyse_entries(entries_to_dataframe(entries), [], now=NOW)


def _page(
    sitemap: str,
    i: int,
    *,
    dm_offset: float | None = 0.0,
    credible: bool = True,
    fp: str = "same",
    lastmod_shift: float = 0.0,
    fetched: datetime = NOW,
    **kw,
) -> PageObservation:
    lastmod = (
        None if sitemap == UNDATED else NOW - timedelta(days=3 + i) + timedelta(days=lastmod_shift)
    )
    dm = None if dm_offset is None or lastmod is None else lastmod + timedelta(seconds=dm_offset)
    return PageObservation(
        loc=f"https://s.example/{sitemap}/{i}",
        sitemap=sitemap,
        stratum="newest",
        fetched_at=fetched,
        lastmod=lastmod,
        lastmod_precision=None if lastmod is None else "second",
        status=200,
        date_modified=dm,
        date_modified_precision="second",
        date_modified_source="json-ld",
        date_modified_credible=credible if dm else None,
        why_not_credible=None if credible else "render-time-date-modified",
        fp_exact=fp,
        fp_simhash=1,
        fp_structured="s",
        **kw,
    )


def _score(dispersion, pages, previous=(), previous_verdict=None):
    inputs = ScoreInputs(
        "https://s.example", NOW, {"urls": 1}, True, dispersion, pages, previous, previous_verdict
    )
    return score(inputs)


def _codes(result):
    return {r.code for r in result.reasons}


def test_agreeing_credible_date_modified_earns_trust():
    result = _score(_dispersion(spread=100), [_page(SPREAD, i) for i in range(16)])

    assert result.verdict == "trusted"
    assert result.sample.agree == 16 and result.sample.agreement_low == pytest.approx(
        0.806, abs=1e-3
    )
    assert result.changes is None  # a first run


def test_too_few_comparisons_stay_inconclusive():
    result = _score(_dispersion(spread=100), [_page(SPREAD, i) for i in range(12)])

    assert result.verdict == "inconclusive"
    assert _codes(result) == {"unverified"}


def test_disagreeing_date_modified_is_untrusted():
    pages = [_page(SPREAD, i, dm_offset=-86_400 * 30 if i % 2 else 0) for i in range(12)]
    result = _score(_dispersion(spread=100), pages)

    assert result.verdict == "untrusted"
    assert "date-modified-mismatch" in _codes(result)
    assert result.sample.disagree == 6


def test_a_tidy_distribution_alone_is_never_trusted():
    result = _score(_dispersion(spread=100), [])
    assert result.verdict == "inconclusive"


def test_generation_time_is_untrusted_even_with_render_time_date_modified():
    pages = [_page(STAMPED, i, credible=False) for i in range(10)]
    result = _score(_dispersion(stamped=100), pages)

    assert result.verdict == "untrusted"
    assert {"generation-time", "shared-timestamp", "render-time-date-modified"} <= _codes(result)
    assert result.sample.render_time == 10 and result.sample.with_date_modified == 0


def test_no_lastmod():
    result = _score(_dispersion(undated=50), [_page(UNDATED, i) for i in range(10)])
    assert result.verdict == "no-lastmod"
    assert result.segments[0].reasons[0].code == "no-lastmod"


def test_mixed_sub_sitemaps_are_partial():
    pages = [_page(SPREAD, i) for i in range(16)] + [_page(STAMPED, i) for i in range(4)]
    result = _score(_dispersion(spread=100, stamped=100), pages)

    assert result.verdict == "partial"
    by_name = {s.sitemap: s.verdict for s in result.segments}
    assert by_name == {SPREAD: "trusted", STAMPED: "untrusted"}
    assert result.reasons[0].segment == STAMPED  # what is wrong comes first


def test_small_clean_sub_sitemaps_share_pooled_evidence():
    pages = [_page(SPREAD, i) for i in range(8)]
    pages += [replace_sitemap(_page(SPREAD, 100 + i), "spread2.xml") for i in range(8)]
    entries = list(_entries(SPREAD, 100)) + [
        e._replace(sitemap="spread2.xml", loc=e.loc.replace(SPREAD, "spread2.xml"))
        for e in _entries(SPREAD, 100)
    ]
    dispersion = analyse_entries(entries_to_dataframe(entries), [], now=NOW)
    result = _score(dispersion, pages)

    assert [s.verdict for s in result.segments] == ["trusted", "trusted"]
    assert result.verdict == "trusted"


def replace_sitemap(page: PageObservation, sitemap: str) -> PageObservation:
    from dataclasses import replace

    return replace(page, sitemap=sitemap, loc=page.loc.replace(SPREAD, sitemap))


# -- across runs -----------------------------------------------------------------------------
EARLIER = NOW - timedelta(days=7)


def _runs(changed: set[int], advanced: set[int], count: int = 12):
    """Panel pages seen a week apart, without dateModified (the across-runs route alone)."""
    before = [_page(SPREAD, i, dm_offset=None, fetched=EARLIER, fp=f"v1-{i}") for i in range(count)]
    after = [
        _page(
            SPREAD,
            i,
            dm_offset=None,
            fp=f"v2-{i}" if i in changed else f"v1-{i}",
            lastmod_shift=5 if i in advanced else 0,
        )
        for i in range(count)
    ]
    return before, after


def test_changes_observed_with_lastmod_earn_trust():
    before, after = _runs(changed={0, 1, 2, 3}, advanced={0, 1, 2, 3}, count=16)
    result = _score(_dispersion(spread=100), after, before)

    assert result.verdict == "trusted"
    changes = result.changes
    assert (changes.compared, changes.changed, changes.lastmod_advanced) == (16, 4, 4)
    assert result.changes.precision == 1.0 and result.changes.recall == 1.0
    segment = result.segments[0]
    assert segment.change_rate == pytest.approx(0.0397, abs=1e-3)  # Cho & Garcia-Molina
    assert 1.0 <= segment.recheck_days <= 30.0


def test_each_sub_sitemap_has_its_own_precision_and_recall():
    changed, advanced = {0, 1, 2, 3}, {0, 1, 2, 4, 5}
    before, after = _runs(changed=changed, advanced=advanced)
    other = "other.xml"
    before += [_page(other, i, dm_offset=None, fetched=EARLIER, fp=f"v1-{i}") for i in range(12)]
    after += [
        _page(other, i, dm_offset=None, fp=f"v2-{i}" if i < 2 else f"v1-{i}") for i in range(12)
    ]
    result = _score(_dispersion(spread=100, other=100), after, before)

    by_name = {s.sitemap: s for s in result.segments}
    spread, frozen = by_name[SPREAD], by_name[other]
    assert (spread.precision, spread.recall) == (0.6, 0.75)  # 3 of 5 advanced, 3 of 4 changed
    assert (frozen.precision, frozen.recall) == (None, 0.0)  # nothing advanced, 2 changed
    (spread_json,) = [s for s in result.to_dict()["segments"] if s["sitemap"] == SPREAD]
    assert (spread_json["precision"], spread_json["recall"]) == (0.6, 0.75)
    first = _score(_dispersion(spread=100), after)
    assert (first.segments[0].precision, first.segments[0].recall) == (None, None)


def test_no_change_observed_proves_nothing_yet():
    before, after = _runs(changed=set(), advanced=set())
    result = _score(_dispersion(spread=100), after, before, previous_verdict="inconclusive")

    assert result.verdict == "inconclusive"
    assert result.changes.compared == 12 and result.changes.precision is None
    assert result.segments[0].recheck_days == 14.0  # no change in 7 days: wait twice as long


def test_frozen_lastmod_is_untrusted():
    before, after = _runs(changed={0, 1, 2, 3, 4}, advanced=set())
    result = _score(_dispersion(spread=100), after, before)

    assert result.verdict == "untrusted"
    assert "changed-without-lastmod" in _codes(result)
    assert result.changes.recall == 0.0


def test_bumping_lastmod_is_untrusted():
    before, after = _runs(changed=set(), advanced=set(range(12)))
    result = _score(_dispersion(spread=100), after, before)

    assert result.verdict == "untrusted"
    assert "lastmod-without-change" in _codes(result)


def test_a_degradation_is_called_out():
    before, after = _runs(changed={0, 1, 2, 3, 4}, advanced=set())
    result = _score(_dispersion(spread=100), after, before, previous_verdict="trusted")

    assert result.degraded and result.to_dict()["degraded"] is True
    assert _score(_dispersion(spread=100), [], previous_verdict="untrusted").degraded is False


def test_unreadable_sitemaps_are_inconclusive():
    inputs = ScoreInputs("https://s.example", NOW, {"urls": 0}, False, _dispersion(), [])
    result = score(inputs)
    assert result.verdict == "inconclusive"
    assert _codes(result) == {"sitemap-unreadable"}


def test_result_json_follows_the_contract():
    result = _score(_dispersion(spread=100), [_page(SPREAD, i) for i in range(16)]).to_dict()

    assert list(result)[:12] == [
        "schema",
        "site",
        "run_id",
        "started_at",
        "verdict",
        "reasons",
        "inventory",
        "dispersion",
        "sample",
        "changes",
        "segments",
        "report",
    ]
    assert set(result["sample"]) >= {
        "requested",
        "fetched",
        "with_date_modified",
        "agree",
        "disagree",
        "skipped_robots",
    }
    assert result["segments"][0]["reasons"] == []
    assert {"sitemap", "urls", "verdict", "reasons"} <= set(result["segments"][0])


def test_a_date_only_lastmod_is_not_blamed_for_changes_within_its_day():
    """Two fetches on the day of a date-only lastmod: a change between them cannot show."""
    from dataclasses import replace as change

    day = NOW.replace(hour=0)
    before = [
        change(
            _page(SPREAD, i, dm_offset=None, fetched=NOW - timedelta(hours=2), fp=f"v1-{i}"),
            lastmod=day,
            lastmod_precision="day",
        )
        for i in range(16)
    ]
    after = [
        change(p, fetched_at=NOW, fp_exact=f"v2-{i}" if i < 5 else p.fp_exact)
        for i, p in enumerate(before)
    ]
    result = _score(_dispersion(spread=100), after, before)

    assert result.changes.compared == 0  # nothing lastmod could have shown
    assert result.verdict == "inconclusive"
    assert "changed-without-lastmod" not in _codes(result)


# -- HTTP Last-Modified, on pages without a structured dateModified ---------------------------
def _with_last_modified(pages, value_of):
    from dataclasses import replace as change

    return [change(p, http_last_modified=value_of(i, p)) for i, p in enumerate(pages)]


def test_an_agreeing_last_modified_can_earn_trust_when_pages_carry_no_date_modified():
    pages = _with_last_modified(
        [_page(SPREAD, i, dm_offset=None) for i in range(16)], lambda i, p: p.lastmod
    )
    result = _score(_dispersion(spread=100), pages)

    assert result.verdict == "trusted"
    assert (result.sample.with_last_modified, result.sample.last_modified_agree) == (16, 16)
    assert result.sample.with_date_modified == 0


def test_a_last_modified_shared_by_every_page_or_stamped_at_serving_time_says_nothing():
    deploy = NOW - timedelta(days=1)
    shared = _with_last_modified(
        [_page(SPREAD, i, dm_offset=None) for i in range(16)], lambda i, p: deploy
    )
    served = _with_last_modified(
        [_page(SPREAD, i, dm_offset=None) for i in range(16)], lambda i, p: p.fetched_at
    )
    for pages in (shared, served):
        result = _score(_dispersion(spread=100), pages)
        assert result.verdict == "inconclusive"
        assert result.sample.with_last_modified == 0


def test_a_disagreeing_last_modified_never_condemns_on_its_own():
    pages = _with_last_modified(
        [_page(SPREAD, i, dm_offset=None) for i in range(16)],
        lambda i, p: p.lastmod - timedelta(days=40 + i),
    )
    result = _score(_dispersion(spread=100), pages)

    assert result.verdict == "inconclusive"
    assert "date-modified-mismatch" not in _codes(result)
    assert (result.sample.with_last_modified, result.sample.last_modified_agree) == (16, 0)


def test_a_structured_date_modified_wins_over_last_modified():
    pages = _with_last_modified(
        [_page(SPREAD, i) for i in range(16)], lambda i, p: p.lastmod - timedelta(days=9)
    )
    result = _score(_dispersion(spread=100), pages)

    assert result.verdict == "trusted"
    assert result.sample.with_last_modified == 0


def test_two_contrary_pages_alone_do_not_condemn():
    before, after = _runs(changed={0, 1}, advanced=set(), count=3)
    assert _score(_dispersion(spread=100), after, before).verdict == "inconclusive"
    before, after = _runs(changed={0, 1, 2}, advanced=set(), count=3)
    assert _score(_dispersion(spread=100), after, before).verdict == "untrusted"


def _with_previous(after, before, verdict: str):
    from dataclasses import replace

    inputs = ScoreInputs(
        "https://s.example", NOW, {"urls": 1}, True, _dispersion(spread=100), after, before
    )
    return score(replace(inputs, previous_segments={SPREAD: verdict}))


def test_trust_earned_before_turns_only_on_evidence_at_99_percent():
    # 3 of 5 changed pages without lastmod moving: under the bar at 95%, not at 99%
    before, after = _runs(changed={0, 1, 2, 3, 4}, advanced={0, 1})
    assert _score(_dispersion(spread=100), after, before).verdict == "untrusted"

    kept = _with_previous(after, before, "trusted")
    assert kept.verdict == "trusted" and not kept.degraded
    (reason,) = [r for r in kept.reasons if r.code == "changed-without-lastmod"]
    assert "short of the 99%" in reason.detail
    assert kept.segments[0].recheck_days == 1.0  # confirmed or not on the next run

    # 5 of 5 without lastmod holds at 99% too: the trust earned before does not hold
    before, after = _runs(changed={0, 1, 2, 3, 4}, advanced=set())
    assert _with_previous(after, before, "trusted").verdict == "untrusted"


def test_trust_that_only_just_clears_the_bar_says_so():
    just = _score(_dispersion(spread=100), [_page(SPREAD, i) for i in range(16)])
    assert just.verdict == "trusted"
    (note,) = [n for n in just.notes if n.code == "near-bar"]
    assert "lower bound of 0.81, bar 0.8" in note.detail
    clear = _score(_dispersion(spread=100), [_page(SPREAD, i) for i in range(40)])
    assert clear.verdict == "trusted" and not [n for n in clear.notes if n.code == "near-bar"]


def test_trust_kept_on_doubt_keeps_the_sample_open():
    from auditor.scorer.doubt import OPEN, segment_status
    from auditor.scorer.tally import Tally
    from auditor.scorer.verdict import judge_segment
    from auditor.scorer.window import SegmentEvidence

    # 16 agreeing dates would decide a trusted segment, but contrary changes wait
    own = Tally(fetched=16, with_date_modified=16, agree=16, compared=5, changed=5, both=2,
                advanced=2)  # fmt: skip
    evidence = SegmentEvidence(own=own, pooled=own, has_previous=True)
    segment = _dispersion(spread=100).segments[0]
    verdict = judge_segment(segment, evidence, "trusted")
    assert verdict.verdict == "trusted"
    assert segment_status(verdict, segment, evidence) == OPEN


def test_trust_earned_before_is_kept_when_nothing_contradicts_it():
    """Issue 31, item 7: a segment trusted on the previous run whose evidence in this run
    falls short of the bar (one disagreeing date among 17 takes the lower bound to 0.73, a
    matter of the draw) but holds nothing contrary stays trusted, says why, and is
    re-checked within the default week."""
    pages = [_page(SPREAD, i) for i in range(16)]
    pages.append(_page(SPREAD, 16, dm_offset=-9 * 86_400.0))  # one page's date is off
    thin = _score(_dispersion(spread=100), pages)
    assert thin.verdict == "inconclusive"  # on its own, short of the bar

    kept = _with_previous(pages, [], "trusted")
    assert kept.verdict == "trusted" and not kept.degraded
    (reason,) = [r for r in kept.reasons if r.code == "trust-kept"]
    assert "nothing in this run contradicts it" in reason.detail
    assert "0.73" in reason.detail  # what kept it from earning trust anew
    assert kept.segments[0].recheck_days <= 7.0

    earlier_inconclusive = _with_previous(pages, [], "inconclusive")
    assert earlier_inconclusive.verdict == "inconclusive"  # trust is kept, never given


def test_kept_trust_still_falls_to_a_condemning_flag_or_firm_contrary_evidence():
    stamped = [_page(STAMPED, i, dm_offset=None) for i in range(6)]
    inputs = ScoreInputs(
        "https://s.example", NOW, {"urls": 1}, True, _dispersion(stamped=100), stamped
    )
    from dataclasses import replace

    condemned = score(replace(inputs, previous_segments={STAMPED: "trusted"}))
    assert condemned.verdict == "untrusted"
    before, after = _runs(changed={0, 1, 2, 3, 4}, advanced=set())
    assert _with_previous(after, before, "trusted").verdict == "untrusted"
