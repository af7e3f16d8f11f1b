"""Hypothesis: the statistics' invariants hold for any set of values, in any order."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.dispersion import analyse_entries, compute_figures
from auditor.dispersion.figures import LastmodArrays, normalised_entropy
from auditor.models import SitemapEntry
from auditor.walker.inventory import entries_to_dataframe

FETCHED = datetime(2026, 11, 29, 12, tzinfo=UTC).timestamp()
PRECISIONS = ["year", "month", "day", "minute", "second", "fraction"]

# A few clustered moments and some spread ones, so ties and distinct values both occur.
moments = st.one_of(
    st.sampled_from([1_700_000_000, 1_700_000_001, 1_764_417_600, 0]),
    st.integers(min_value=0, max_value=4_200_000_000),
)
entry = st.tuples(
    st.one_of(st.none(), moments),
    st.sampled_from(PRECISIONS),
    st.booleans(),  # an unreadable lastmod where there is none
    st.sampled_from(["a.xml", "b.xml", "c.xml"]),
)


def _arrays(rows: list[tuple]) -> LastmodArrays:
    seconds = np.array([r[0] or 0 for r in rows], dtype=np.int64)
    dated = np.array([r[0] is not None for r in rows], dtype=bool)
    date_only = np.array([r[1] in ("year", "month", "day") for r in rows], dtype=bool) & dated
    invalid = np.array([r[2] for r in rows], dtype=bool) & ~dated
    return LastmodArrays(seconds, dated, date_only, invalid, np.zeros(len(rows), dtype=bool))


def _frame(rows: list[tuple]) -> pd.DataFrame:
    entries = [
        SitemapEntry(
            f"https://x.example/{i}",
            datetime.fromtimestamp(r[0], UTC) if r[0] is not None else None,
            r[1] if r[0] is not None else None,
            "raw" if r[0] is not None or r[2] else None,
            r[3],
        )
        for i, r in enumerate(rows)
    ]
    return entries_to_dataframe(entries)


@given(st.lists(entry, max_size=60))
def test_shares_are_within_0_and_1_and_counts_add_up(rows):
    f = compute_figures(_arrays(rows), FETCHED)

    for share in (f.share_with_lastmod, f.invalid_share, f.top_share, f.top3_share):
        assert 0.0 <= share <= 1.0
    for share in (f.date_only_share, f.future_share):
        assert 0.0 <= share <= 1.0
    assert f.top_share <= f.top3_share
    assert f.date_only + f.with_time == f.with_lastmod <= f.urls
    assert f.distinct_days <= f.distinct_seconds <= f.with_lastmod
    assert (f.oldest is None) == (f.with_lastmod == 0)
    if f.oldest is not None:
        assert f.oldest <= f.top_value <= f.newest
    if f.entropy is not None:
        assert 0.0 <= f.entropy <= 1.0


@given(st.lists(entry, max_size=60), st.randoms(use_true_random=False))
def test_the_order_of_entries_is_irrelevant(rows, random):
    shuffled = list(rows)
    random.shuffle(shuffled)
    first = analyse_entries(_frame(rows), [], now=datetime.fromtimestamp(FETCHED, UTC))
    second = analyse_entries(_frame(shuffled), [], now=datetime.fromtimestamp(FETCHED, UTC))

    assert first.figures == second.figures
    assert first.flags == second.flags
    assert first.generation == second.generation
    assert sorted(first.segments, key=lambda s: s.sitemap) == sorted(
        second.segments, key=lambda s: s.sitemap
    )


@settings(max_examples=50)
@given(st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=30))
def test_entropy_bounds(counts):
    total = sum(counts)
    entropy = normalised_entropy(np.array(sorted(counts, reverse=True)), total)
    if total < 2:
        assert entropy is None
        return
    assert 0.0 <= entropy <= 1.0
    if len(counts) == 1:
        assert entropy == 0.0
    if all(c == 1 for c in counts):
        assert entropy == 1.0


def test_site_shares_and_segment_urls_add_up():
    rows = [
        (1_700_000_000 + i * 3600, "second", False, ["a.xml", "b.xml"][i % 2]) for i in range(40)
    ]
    report = analyse_entries(_frame(rows), [], now=datetime.fromtimestamp(FETCHED, UTC))

    assert sum(s.figures.urls for s in report.segments) == report.figures.urls == 40
    assert report.figures.entropy == 1.0
    assert report.flags == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(entry, max_size=40))
def test_typed_and_plain_columns_give_the_same_report(rows):
    """The inventory's columns as it types them (categoricals, UTC datetimes) and the
    same values as plain object and naive columns (a frame read back from a file) are
    read alike: the typed ones are not converted again."""
    typed = _frame(rows)
    plain = typed.astype(object)
    plain["lastmod"] = typed["lastmod"].dt.tz_localize(None).astype(object)
    now = datetime.fromtimestamp(FETCHED, UTC)
    assert analyse_entries(typed, [], now=now) == analyse_entries(plain, [], now=now)
