"""The rule: a fetch is judged against the lastmod of a walk made after it (unit tests of
auditor.crawl.resolve, and of the fetch times a log writes coarsely)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from auditor.crawl.fields import time_precision
from auditor.crawl.resolve import (
    ADVANCED,
    NOT_ADVANCED,
    PENDING,
    UNTOLD,
    judge,
    judge_one,
    resolve,
    spans,
)
from auditor.history.crawlcounts import PendingFetches

F1 = datetime(2026, 3, 1, 12, tzinfo=UTC)  # the previous good fetch
F2 = datetime(2026, 3, 5, 12, tzinfo=UTC)  # this one
AFTER = F2 + timedelta(hours=1)  # a walk made after the fetch
BEFORE = F1 + timedelta(days=2)  # ... and one made between the two fetches


def _at(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC)


@pytest.mark.parametrize(
    ("lastmod", "precision", "code"),
    [
        (_at(1, 11), "second", NOT_ADVANCED),  # the last change before F1: none in (F1, F2]
        (F1, "fraction", NOT_ADVANCED),  # L <= F1
        (F1, "second", UNTOLD),  # "12:00:00" stands for the second after F1 too
        (_at(3), "second", ADVANCED),  # F1 < L <= F2: changed between the fetches
        (F2, "fraction", ADVANCED),
        (_at(5, 13), "second", UNTOLD),  # L > F2: the last change came after; no telling
        (None, None, NOT_ADVANCED),  # listed undated: its sitemap never says it changed
    ],
)
def test_a_walk_after_the_fetch_decides(lastmod, precision, code):
    assert judge_one(F1, F2, lastmod, AFTER, lastmod_precision=precision) == code


def test_a_walk_before_the_fetch_proves_an_advance_and_nothing_else():
    assert judge_one(F1, F2, _at(2), BEFORE, lastmod_precision="second") == ADVANCED
    # a change between the walk and F2 would not show in it: no "not advanced" yet
    assert judge_one(F1, F2, _at(1), BEFORE, lastmod_precision="second") == PENDING
    assert judge_one(F1, F2, None, BEFORE) == PENDING
    assert judge_one(F1, F2, _at(1), BEFORE, listed=False) == PENDING
    assert judge_one(F1, F2, _at(1), F2, lastmod_precision="second") == NOT_ADVANCED  # W = F2
    # a walk before F1 showing a lastmod after it claims a change yet to come: no proof
    assert judge_one(F1, F2, _at(2), F1 - timedelta(hours=1), lastmod_precision="second") == -2


def test_a_date_only_lastmod_seen_by_a_walk_made_at_the_fetch_tells_the_change_came_by_it():
    day_of_f2 = datetime(2026, 3, 5, tzinfo=UTC)  # a local Mar 5: it may hold F2, or not
    assert judge_one(F1, F2, day_of_f2, F2, lastmod_precision="day") == ADVANCED
    assert judge_one(F1, F2, day_of_f2, F2 + timedelta(hours=1), lastmod_precision="day") == -1


def test_a_url_the_walk_does_not_list_says_nothing_once_the_walk_is_after():
    assert judge_one(F1, F2, None, AFTER, listed=False) == UNTOLD


@pytest.mark.parametrize(
    ("day", "code"),
    [
        (26, NOT_ADVANCED),  # Feb 26 is over, in every zone, before F1
        (28, NOT_ADVANCED),  # Feb 28 at UTC-12 ends at Mar 1 12:00 UTC: at F1, not after
        (1, UNTOLD),  # the day of F1
        (2, UNTOLD),  # Mar 2 at UTC+14 starts Mar 1 10:00 UTC: it may hold F1
        (3, ADVANCED),  # a day wholly between the fetches, in every zone
        (4, ADVANCED),  # Mar 4 at UTC-12 ends at F2
        (5, UNTOLD),  # the day of F2
        (6, UNTOLD),  # Mar 6 at UTC+14 starts before F2: the change may have come after
    ],
)
def test_a_date_only_lastmod_tells_only_with_days_clear_of_both_fetches(day, code):
    lastmod = datetime(2026, 2 if day > 20 else 3, day, tzinfo=UTC)
    assert judge_one(F1, F2, lastmod, AFTER + timedelta(days=2), lastmod_precision="day") == code


def test_a_log_of_dates_only_waits_for_a_walk_after_every_zones_end_of_the_fetch_day():
    f1, f2 = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 8, tzinfo=UTC)
    kwargs = {"previous_precision": "day", "fetched_precision": "day", "lastmod_precision": "day"}
    that_evening = datetime(2026, 3, 8, 23, tzinfo=UTC)  # UTC-12's Mar 8 is not over
    assert judge_one(f1, f2, _at(1), that_evening, **kwargs) == PENDING
    assert judge_one(f1, f2, _at(1), _at(10), **kwargs) == UNTOLD  # the day of F1
    assert judge_one(f1, f2, _at(3), _at(10), **kwargs) == UNTOLD  # Mar 2 12:00 to 3: zones
    assert judge_one(f1, f2, _at(4), _at(10), **kwargs) == ADVANCED
    assert judge_one(f1, f2, _at(4), that_evening, **kwargs) == ADVANCED  # proved already
    assert judge_one(f1, f2, _at(7), _at(10), **kwargs) == UNTOLD  # may hold F2
    earlier = datetime(2026, 2, 20, tzinfo=UTC)
    assert judge_one(f1, f2, earlier, _at(10), **kwargs) == NOT_ADVANCED


def test_fetch_times_written_to_the_minute_stand_for_their_minute():
    f1, f2 = _at(1, 12, 0), _at(1, 12, 10)
    minute = {"previous_precision": "minute", "fetched_precision": "minute"}
    exact = {"lastmod_precision": "second"}
    assert judge_one(f1, f2, _at(1, 12, 0) + timedelta(seconds=30), _at(2), **minute, **exact) == -1
    assert judge_one(f1, f2, _at(1, 12, 5), _at(2), **minute, **exact) == ADVANCED
    assert judge_one(f1, f2, _at(1, 12, 10), _at(2), **minute, **exact) == UNTOLD
    assert judge_one(f1, f2, _at(1, 12, 5), _at(1, 12, 10), **minute, **exact) == ADVANCED
    assert judge_one(f1, f2, _at(1, 11, 0), _at(1, 12, 10), **minute, **exact) == PENDING


def test_the_arrays_rule_as_one_fetch_does():
    """judge() over many fetches at once gives what each would alone."""
    rng = random.Random(3)
    precisions = [None, "second", "minute", "day", "month"]
    cases = []
    for _ in range(500):
        f1 = F1 + timedelta(hours=rng.uniform(-48, 48))
        f2 = f1 + timedelta(hours=rng.uniform(0, 200))
        lastmod = None if rng.random() < 0.1 else f1 + timedelta(hours=rng.uniform(-100, 300))
        walked = f1 + timedelta(hours=rng.uniform(0, 300))
        case = (f1, f2, lastmod, walked, rng.choice(precisions), rng.choice(precisions[:4]))
        cases.append((*case, rng.random() < 0.9))
    one = [
        judge_one(f1, f2, lm, w, lastmod_precision=lp, fetched_precision=fp, listed=listed)
        for f1, f2, lm, w, lp, fp, listed in cases
    ]
    many = judge(
        spans([c[0].timestamp() for c in cases], [None] * len(cases)),
        spans([c[1].timestamp() for c in cases], [c[5] for c in cases]),
        spans([c[2].timestamp() if c[2] else np.nan for c in cases], [c[4] for c in cases]),
        np.array([c[6] for c in cases]),
        np.array([c[3].timestamp() for c in cases]),
    )
    assert many.tolist() == one
    assert set(one) == {ADVANCED, NOT_ADVANCED, UNTOLD, PENDING}


def test_pending_fetches_are_resolved_against_a_walks_entries():
    base = "https://example.com/"
    entries = pd.DataFrame(
        {
            "loc": [base + "a", base + "b", base + "c", base + "a"],  # a listed twice
            "lastmod": pd.to_datetime([_at(3), _at(1), None, _at(9)], utc=True),
            "lastmod_precision": pd.Categorical(["second", "second", None, "second"]),
            "sitemap": pd.Categorical([base + "sitemap.xml"] * 4),
        }
    )
    locs = ["a", "b", "c", "gone", "a"]
    pending = PendingFetches(
        locs=np.array([base + x for x in locs], dtype=object),
        fetched=np.array(["t"] * 5, dtype=object),
        fetched_at=np.array([F2.timestamp()] * 4 + [_at(10).timestamp()]),
        fetched_precision=np.array([None] * 5, dtype=object),
        previous_at=np.array([F1.timestamp()] * 5),
        previous_precision=np.array([None] * 5, dtype=object),
        sitemaps=np.array([base + "sitemap.xml"] * 5, dtype=object),
        changed=np.array([True, True, False, True, False]),
        interval_days=np.array([4.0] * 5),
    )
    codes = resolve(pending, entries, AFTER)
    # a: its first listing; b: before F1; c: no lastmod; gone: not listed; a again:
    # fetched after the walk, which proves it changed between Mar 1 and Mar 10
    assert codes.tolist() == [ADVANCED, NOT_ADVANCED, NOT_ADVANCED, UNTOLD, ADVANCED]
    counts = pending.counted(codes, F1).keyed[base + "sitemap.xml"]
    assert (counts.compared, counts.changed, counts.advanced, counts.both) == (4, 2, 2, 1)
    assert (counts.pending, counts.interval_days) == (0, 16.0)
    later = resolve(pending, entries, BEFORE)  # a walk before every fetch
    assert later.tolist() == [ADVANCED, PENDING, PENDING, PENDING, ADVANCED]
    assert pending.counted(later, F1).keyed[base + "sitemap.xml"].pending == 3
    # a walk that read none of the files (its sitemap failed) tells nothing of any
    unread = resolve(pending, entries.iloc[:0], AFTER)
    assert unread.tolist() == [PENDING] * 5
    other = entries.assign(sitemap=pd.Categorical([base + "other.xml"] * 4))
    assert resolve(pending, other, AFTER).tolist()[3] == PENDING  # gone: its file unread


@pytest.mark.parametrize(
    ("written", "precision"),
    [
        ("2026-03-01", "day"),
        ("2026-03-01T10", "hour"),
        ("2026-03-01T10:00", "minute"),
        ("2026-03-01 10:00+02:00", "minute"),
        ("2026-03-01T10:00:00Z", "second"),
        ("2026-03-01T10:00:00.250Z", None),
        ("1772359200", "second"),
        (1772359200, "second"),
        ("1772359200.25", None),
        (1772359200.25, None),
    ],
)
def test_a_logs_fetched_at_keeps_how_precisely_it_was_written(written, precision):
    assert time_precision(written) == precision
