"""Render-time, future and shared dateModified; lastmod comparison across precisions and zones."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.evidence import (
    RENDER_TIME_WINDOW,
    DatedValue,
    PageEvidence,
    compare_lastmod,
    mark_shared_date_modified,
)
from auditor.evidence.credibility import judge_date_modified, modified_before_published
from tests.evidence.helpers import FETCHED_AT, utc


def dated(value: datetime, precision: str = "second") -> DatedValue:
    return DatedValue(value, value.isoformat(), "json-ld", precision, "Article")


@pytest.mark.parametrize(
    ("offset", "precision", "why"),
    [
        (timedelta(0), "second", "render-time-date-modified"),
        (-RENDER_TIME_WINDOW, "fraction", "render-time-date-modified"),
        (RENDER_TIME_WINDOW, "second", "render-time-date-modified"),
        (timedelta(seconds=-50), "minute", "render-time-date-modified"),  # the minute covers it
        (-RENDER_TIME_WINDOW - timedelta(seconds=2), "second", None),
        (timedelta(minutes=-5), "second", None),
        (timedelta(0), "day", None),  # a date alone cannot show render time
        (timedelta(hours=1), "second", "future-date-modified"),
        (timedelta(days=3), "day", "future-date-modified"),
    ],
)
def test_judge_date_modified(offset, precision, why):
    value = dated(FETCHED_AT + offset, precision)
    judged = judge_date_modified(value, FETCHED_AT)
    assert judged is not None
    assert judged.why_not_credible == why
    assert judged.credible is (why is None)


def test_modified_before_published_respects_precision():
    day = dated(utc(2024, 5, 3), "day")
    assert not modified_before_published(day, dated(utc(2024, 5, 3, 15)))
    assert modified_before_published(dated(utc(2024, 5, 1)), dated(utc(2024, 5, 3)))
    assert not modified_before_published(None, dated(utc(2024, 5, 3)))


def _page(i: int, value: DatedValue | None) -> PageEvidence:
    return PageEvidence(url=f"https://s.example/{i}", fetched_at=FETCHED_AT, date_modified=value)


def test_a_date_modified_on_every_page_vouches_for_nothing():
    same = dated(utc(2026, 1, 1))
    pages = [_page(i, same) for i in range(6)] + [_page(9, None)]
    marked = mark_shared_date_modified(pages)
    assert [p.date_modified.why_not_credible for p in marked[:6]] == ["shared-date-modified"] * 6
    assert marked[6].date_modified is None


def test_varied_dates_or_too_few_pages_stay_credible():
    varied = [_page(i, dated(utc(2026, 1, 1 + i))) for i in range(8)]
    assert mark_shared_date_modified(varied) == varied
    few = [_page(i, dated(utc(2026, 1, 1))) for i in range(4)]
    assert mark_shared_date_modified(few) == few
    # 5 of 8 share a value: under the 90% share, a coincidence on a busy day is allowed
    mixed = [_page(i, dated(utc(2026, 1, 1))) for i in range(5)] + varied[1:4]
    assert all(p.date_modified.credible for p in mark_shared_date_modified(mixed))


def test_shared_keeps_an_earlier_reason():
    render = replace(dated(utc(2026, 1, 1)), credible=False, why_not_credible="x")
    pages = [_page(i, render) for i in range(6)]
    assert {p.date_modified.why_not_credible for p in mark_shared_date_modified(pages)} == {"x"}


# -- compare_lastmod -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lastmod", "precision", "observed", "agrees", "error"),
    [
        (utc(2026, 5, 3, 10), "second", dated(utc(2026, 5, 3, 10)), True, 0.0),
        (
            utc(2026, 5, 3, 10, 3),
            "second",
            dated(utc(2026, 5, 3, 10)),
            True,
            179.0,
        ),  # [10:00:00, 10:00:01]
        (utc(2026, 5, 3, 12), "second", dated(utc(2026, 5, 3, 10)), False, 7200.0 - 1),
        (utc(2026, 5, 3, 8), "second", dated(utc(2026, 5, 3, 10)), False, -7200.0 + 1),
        # a date-only lastmod agrees with any time of that local day, anywhere on Earth
        (utc(2026, 5, 3), "day", dated(utc(2026, 5, 2, 10)), True, 0.0),
        (utc(2026, 5, 3), "day", dated(utc(2026, 5, 4, 12)), True, 0.0),
        (utc(2026, 5, 3), "day", dated(utc(2026, 5, 5)), False, -12 * 3600.0),
        (utc(2026, 5, 1), "month", dated(utc(2026, 5, 31, 23)), True, 0.0),
        (utc(2026, 1, 1), "year", dated(utc(2027, 1, 1, 11)), True, 0.0),
        (utc(2026, 1, 1), "year", dated(utc(2025, 6, 1)), False, None),
        # the page's own date may be the coarse one
        (utc(2026, 5, 3, 22, 30), "minute", dated(utc(2026, 5, 3), "day"), True, 0.0),
    ],
)
def test_compare_lastmod(lastmod, precision, observed, agrees, error):
    result = compare_lastmod(lastmod, precision, observed)
    assert result.agrees is agrees
    if error is not None:
        assert result.signed_error_seconds == pytest.approx(error)


INSTANTS = st.datetimes(
    min_value=datetime(1995, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
PRECISIONS = st.sampled_from(["year", "month", "day", "minute", "second", "fraction"])


def _start_of(value: datetime, precision: str) -> datetime:
    if precision == "year":
        return value.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if precision == "month":
        return value.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if precision == "day":
        return value.replace(hour=0, minute=0, second=0, microsecond=0)
    if precision == "minute":
        return value.replace(second=0, microsecond=0)
    if precision == "second":
        return value.replace(microsecond=0)
    return value


@given(INSTANTS, PRECISIONS, PRECISIONS)
def test_an_instant_agrees_with_itself_at_any_precision(instant, lp, op):
    lastmod, observed = _start_of(instant, lp), dated(_start_of(instant, op), op)
    result = compare_lastmod(lastmod, lp, observed)
    assert result.agrees
    assert result.signed_error_seconds == 0


@given(INSTANTS, PRECISIONS, INSTANTS, PRECISIONS)
def test_swapping_sides_negates_the_error(a, ap, b, bp):
    a, b = _start_of(a, ap), _start_of(b, bp)
    forward = compare_lastmod(a, ap, dated(b, bp))
    backward = compare_lastmod(b, bp, dated(a, ap))
    assert forward.signed_error_seconds == -backward.signed_error_seconds
    assert forward.agrees is backward.agrees


@given(INSTANTS, INSTANTS)
def test_exact_error_is_the_difference(a, b):
    result = compare_lastmod(a, "fraction", dated(b, "fraction"))
    assert result.signed_error_seconds == pytest.approx((a - b).total_seconds())
    assert result.agrees is (abs((a - b).total_seconds()) <= 300)


@given(st.dates(min_value=datetime(1995, 1, 1).date(), max_value=datetime(2100, 1, 1).date()),
       st.integers(min_value=-12 * 60, max_value=14 * 60),
       st.integers(min_value=0, max_value=24 * 60 - 1))  # fmt: skip
def test_a_local_day_agrees_with_every_instant_of_it(day, offset_minutes, minute_of_day):
    local = datetime(day.year, day.month, day.day) + timedelta(minutes=minute_of_day)
    instant = (local - timedelta(minutes=offset_minutes)).replace(tzinfo=UTC)
    lastmod = datetime(day.year, day.month, day.day, tzinfo=UTC)
    assert compare_lastmod(lastmod, "day", dated(instant, "fraction")).agrees
