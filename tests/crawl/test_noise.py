"""Noisy hashes (auditor.crawl.noise): the test and its thresholds, and a run's hash
comparisons taken back from the evidence and the rates when its hashes look noisy."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from auditor.crawl.noise import (
    NOISY_MIN_COMPARED,
    NOISY_MIN_QUIET,
    QUIET_SPAN,
    HashNoise,
    quiet,
)
from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.crawl.resolve import spans
from auditor.history import History
from tests.history.helpers import STARTED, save

SITE = "https://example.com"
T = STARTED + timedelta(days=2)


def _noise(compared: int, differ: int, quiet_: int, quiet_differ: int) -> HashNoise:
    noise = HashNoise()
    for i in range(compared):
        noise.add(i < differ, i < quiet_differ or differ <= i < differ + quiet_ - quiet_differ,
                  False)  # fmt: skip
    assert (noise.quiet, noise.quiet_differ) == (quiet_, quiet_differ)
    return noise


def test_nearly_every_rehash_differing_the_quiet_ones_too_is_noisy():
    assert _noise(NOISY_MIN_COMPARED, NOISY_MIN_COMPARED, NOISY_MIN_QUIET, NOISY_MIN_QUIET).noisy
    assert _noise(20, 19, 10, 10).noisy  # 95%
    assert not _noise(20, 18, 10, 10).noisy  # 90%: a busy site's busiest pages
    assert not _noise(NOISY_MIN_COMPARED - 1, 19, 19, 19).noisy  # too few to say
    assert not _noise(300, 300, NOISY_MIN_QUIET - 1, 9).noisy  # nothing rules a change out
    assert not _noise(300, 290, 20, 18).noisy  # the quiet ones changed less


def test_a_refetch_is_quiet_close_in_time_or_vouched_for_by_lastmod():
    span, hour = QUIET_SPAN.total_seconds(), 3_600.0
    f1 = np.zeros(5)
    f2 = np.array([span / 2, 5 * span, 5 * span, 5 * span, 5 * span])
    lastmod = np.array([np.nan, -hour, -hour, hour, -hour])  # before F1 but for one
    walked = np.array([np.nan, 4.5 * span, 3 * span, 4.5 * span, -hour])
    listed = np.ones(5, dtype=bool)
    precisions = ["second"] * 5
    found = quiet(spans(f1, precisions), spans(f2, precisions), spans(lastmod, precisions),
                  listed, walked)  # fmt: skip
    # close in time; lastmod vouched for all but half the span; for too little of it; lastmod
    # moved after F1; the only walk made before F1
    assert found.tolist() == [True, True, False, False, False]


def _fetches(n: int, at: datetime, tag: str) -> list[FetchRecord]:
    return [FetchRecord(f"{SITE}/p/{i}", at, 200, content_hash=f"{tag}{i}") for i in range(n)]


def test_a_run_of_noisy_hashes_is_taken_back_from_the_evidence_and_the_rates(db_url):
    with History.open(db_url) as history:
        save(history, SITE)
        site_id = history.site_id(SITE)
        assert site_id is not None
        record_fetches(history, _fetches(25, T, "a"), now=T)
        minutes_later = T + timedelta(minutes=10)  # whole-page hashes: all differ
        summary = record_fetches(history, _fetches(25, minutes_later, "b"), now=minutes_later)
        states = history.crawl_states(site_id, [f"{SITE}/p/{i}" for i in range(25)])
        counts = history.crawl_counts(SITE, T)
        # a later run with a main-content hash counts again
        later = T + timedelta(days=1)
        hashes = [FetchRecord(f"{SITE}/p/{i}", later, 200, content_hash=f"b{i}") for i in range(25)]
        after = record_fetches(history, hashes, now=later)

    assert (summary.recorded, summary.changed, summary.unchanged, summary.refused) == (25, 0, 0, 25)
    assert summary.pending == 0 and list(summary.noisy) == [SITE]
    assert summary.to_dict()["noisy_hashes"] == [
        {"site": SITE, "compared": 25, "differ": 25, "detail": summary.noisy[SITE].sentence()}
    ]
    assert "the hashes of 25 of 25 re-fetched pages differ" in summary.noisy[SITE].sentence()
    assert {(s.intervals, s.changes, s.observed_days) for s in states.values()} == {(0, 0, 0.0)}
    assert {s.content_hash for s in states.values()} == {f"b{i}" for i in range(25)}  # the copy
    assert all(not c.compared and not c.pending for c in counts.values())
    assert (after.unchanged, after.refused, after.noisy) == (25, 0, {})


def test_few_or_far_apart_rehashes_are_not_judged_noisy(db_url):
    with History.open(db_url) as history:
        save(history, SITE)
        few = NOISY_MIN_COMPARED - 1
        record_fetches(history, _fetches(few, T, "a"), now=T)
        soon = T + timedelta(minutes=10)
        small = record_fetches(history, _fetches(few, soon, "b"), now=soon)
        # days apart, the only walk before the first fetch: nothing says the pages did not
        # change, so all of them differing is no proof of noise
        other = "https://example.com/q"
        record_fetches(history, [FetchRecord(f"{other}/{i}", T, 200, content_hash="a") for i in
                                 range(30)], now=T)  # fmt: skip
        days = T + timedelta(days=2)
        apart = record_fetches(
            history, [FetchRecord(f"{other}/{i}", days, 200, content_hash="b") for i in range(30)],
            now=days,
        )  # fmt: skip
    assert (small.changed, small.refused) == (few, 0)
    assert (apart.changed, apart.refused, apart.noisy) == (30, 0, {})
    assert apart.pending == 0  # URLs listed in no sitemap: evidence for none, never pending
