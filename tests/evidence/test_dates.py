"""Page dates: what real pages write, read leniently; sitemap forms read exactly as the walker."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.evidence import parse_page_date
from auditor.walker import parse_w3c
from tests.evidence.helpers import utc

CASES = [
    # shapes counted on the fundus corpus pages
    ("2024-05-03T15:47:42.389+0000", utc(2024, 5, 3, 15, 47, 42, 389000), "fraction"),
    ("2024-05-03T15:47:42+0200", utc(2024, 5, 3, 13, 47, 42), "second"),
    ("2024-05-03T15:47+0200", utc(2024, 5, 3, 13, 47), "minute"),
    ("2024-05-03T15:47:42+02", utc(2024, 5, 3, 13, 47, 42), "second"),
    ("2025-06-05 14:46:12 +02:00", utc(2025, 6, 5, 12, 46, 12), "second"),
    ("2024-05-03 15:47:42Z", utc(2024, 5, 3, 15, 47, 42), "second"),
    ("2024-05-03T15:47:42 UTC", utc(2024, 5, 3, 15, 47, 42), "second"),
    ("2024-05-03T15:47:42.9999999Z", utc(2024, 5, 3, 15, 47, 42, 999999), "fraction"),
    ("2024-05-03T15:47:42,5+01:00", utc(2024, 5, 3, 14, 47, 42, 500000), "fraction"),
    ("Fri, 03 May 2024 15:47:42 GMT", utc(2024, 5, 3, 15, 47, 42), "second"),
    ("2024-05-03", utc(2024, 5, 3), "day"),
    # no zone: the day is certain, the instant is not (kept as the day)
    ("2024-05-03T23:47:42.389", utc(2024, 5, 3), "day"),
    ("2024-05-03 15:47", utc(2024, 5, 3), "day"),
]


@pytest.mark.parametrize(("text", "value", "precision"), CASES)
def test_real_page_shapes(text, value, precision):
    parsed = parse_page_date(text)
    assert parsed is not None
    assert (parsed.value, parsed.precision) == (value, precision)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  ",
        "yesterday",
        "2024-13-03T10:00Z",
        "2024-05-03T25:00Z",
        "03/05/2024",
        "x" * 200,
        "2024-05-03T10:00+25:00",
        "Fri, 03 May 2024 15:47:42",
    ],
)
def test_not_dates(text):
    assert parse_page_date(text) is None


@given(st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat(timespec="seconds")))
def test_whatever_the_walker_reads_is_read_the_same(text):
    strict = parse_w3c(text)
    if strict is not None:
        assert parse_page_date(text) == strict


@given(st.text(max_size=80))
def test_never_raises(text):
    parsed = parse_page_date(text)
    assert parsed is None or parsed.value.utcoffset() is not None
