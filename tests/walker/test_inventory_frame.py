"""The inventory's DataFrame (:func:`entries_to_dataframe`): built from its columns in one
go, the same frame as the plain construction (a frame of lists, each column converted in
place) for any entries, and no column set on a frame one at a time.

Touches: nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from auditor.models import Extensions, SitemapEntry
from auditor.walker.inventory import ENTRY_COLUMNS, entries_to_dataframe
from tests.walker.inventory_reference import reference_frame

SITEMAPS = ("https://a.test/sitemap.xml", "https://a.test/s-é.xml", "https://A.test/Z.xml", "")
PRECISIONS = (None, "day", "second", "minute")


def _plain(entries: list[SitemapEntry]) -> pd.DataFrame:
    """The frame as the inventory was first built: a frame of lists, each column then
    converted in place (the reference the one-go construction must equal)."""
    columns: list[list[Any]] = [[] for _ in SitemapEntry._fields]
    for entry in entries:
        for column, value in zip(columns, entry, strict=True):
            column.append(value)
    columns.pop()
    frame = pd.DataFrame(dict(zip(ENTRY_COLUMNS, columns, strict=True)))
    for name in ("lastmod", "news_publication_date"):
        frame[name] = pd.to_datetime(frame[name], utc=True)
    for name in ("sitemap", "lastmod_precision"):
        frame[name] = frame[name].astype("category")
    frame["loc"] = frame["loc"].astype(object)
    frame["lastmod_raw"] = frame["lastmod_raw"].astype(object)
    return frame


def _assert_same(actual: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert_frame_equal(actual, expected, check_exact=True)
    for name in expected.columns:
        assert [repr(v) for v in actual[name]] == [repr(v) for v in expected[name]], name
        if isinstance(expected[name].dtype, pd.CategoricalDtype):
            left, right = actual[name].cat.categories, expected[name].cat.categories
            assert left.dtype == right.dtype and list(left) == list(right), name


_instants = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1990, 1, 1),
        max_value=datetime(2040, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
    ),
)
_entries = st.builds(
    SitemapEntry,
    loc=st.text(min_size=1, max_size=12),
    lastmod=_instants,
    lastmod_precision=st.sampled_from(PRECISIONS),
    lastmod_raw=st.one_of(st.none(), st.text(max_size=8)),
    sitemap=st.sampled_from(SITEMAPS),
    news_publication_date=_instants,
    extensions=st.none(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_entries, max_size=12))
def test_the_frame_is_the_plain_constructions(entries: list[SitemapEntry]) -> None:
    _assert_same(entries_to_dataframe(entries), _plain(entries))


def test_edge_frames_are_the_plain_constructions() -> None:
    dated = datetime(2025, 3, 1, 12, tzinfo=UTC)
    cases = [
        [],
        [SitemapEntry("https://a.test/1", None, None, None, SITEMAPS[0])],
        [SitemapEntry(f"https://a.test/{n}", dated, "second", "x", SITEMAPS[n]) for n in range(3)],
        [SitemapEntry("https://a.test/n", dated, "day", None, SITEMAPS[1], dated)],
    ]
    for entries in cases:
        _assert_same(entries_to_dataframe(entries), _plain(entries))


def test_extensions_follow_the_entry_columns() -> None:
    plain = SitemapEntry("https://a.test/1", None, None, None, SITEMAPS[0])
    extended = plain._replace(loc="https://a.test/2", extensions=Extensions(image_count=2))
    frame = entries_to_dataframe([plain, extended])
    assert list(frame.columns[: len(ENTRY_COLUMNS)]) == list(ENTRY_COLUMNS)
    assert frame["image_count"].tolist() == [0, 2]
    _assert_same(frame[list(ENTRY_COLUMNS)], _plain([plain, extended]))


def test_no_column_is_set_on_the_frame_one_at_a_time(monkeypatch: Any) -> None:
    """Setting a column on a built frame is pandas' costliest step for a small site's
    60 URLs; the frame is made from its finished columns."""
    sets: list[str] = []
    original = pd.DataFrame.__setitem__

    def counting(frame: pd.DataFrame, key: Any, value: Any) -> None:
        sets.append(str(key))
        original(frame, key, value)

    monkeypatch.setattr(pd.DataFrame, "__setitem__", counting)
    dated = datetime(2025, 3, 1, tzinfo=UTC)
    entries_to_dataframe(
        [SitemapEntry(f"https://a.test/{i}", dated, "day", "x", SITEMAPS[0]) for i in range(60)]
    )
    assert sets == []


# -- the frame main made (tests/walker/inventory_reference.py), for any entries -----------

_PARIS = ZoneInfo("Europe/Paris")  # an offset that moves
_aware = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-9, minutes=-30)), _PARIS]),
)
_any_instant = st.one_of(st.none(), _aware, st.datetimes(), st.just(pd.Timestamp("2025-01-02")))
_extensions = st.builds(
    Extensions,
    hreflang_count=st.integers(0, 60),
    hreflang=st.lists(
        st.tuples(st.sampled_from(["de", "en", "fr-CA", "é"]), st.text(max_size=3))
    ).map(tuple),
    image_count=st.one_of(st.integers(0, 9), st.just(2**31)),  # int32 refuses it alike
    first_image=st.one_of(st.none(), st.text(max_size=6)),
    video_count=st.integers(0, 3),
    news_title=st.one_of(st.none(), st.text(max_size=6)),
    news_language=st.one_of(st.none(), st.sampled_from(["en", "de", "zh-Hant"])),
)
_varied = st.builds(
    SitemapEntry,
    loc=st.text(max_size=12),
    lastmod=st.one_of(st.none(), _aware),
    lastmod_precision=st.sampled_from(PRECISIONS),
    lastmod_raw=st.one_of(st.none(), st.text(max_size=8)),
    sitemap=st.sampled_from(SITEMAPS),
    news_publication_date=st.one_of(st.none(), _aware),
    extensions=st.one_of(st.none(), _extensions),
)
_odd = _varied.flatmap(
    lambda entry: st.builds(
        entry._replace,
        lastmod=_any_instant,
        news_publication_date=_any_instant,
        lastmod_raw=st.one_of(st.none(), st.text(max_size=3), st.just("\ud800")),
        lastmod_precision=st.one_of(st.sampled_from(PRECISIONS), st.just(3)),
    )
)


def _assert_as_main_made(entries: list[SitemapEntry]) -> None:
    try:
        expected = reference_frame(entries)
    except Exception as exc:  # what main refused, refused alike
        with pytest.raises(type(exc)):
            entries_to_dataframe(entries)
        return
    actual = entries_to_dataframe(entries)
    assert_frame_equal(actual, expected, check_dtype=True, check_categorical=True, check_exact=True)
    assert actual.index.equals(expected.index) and type(actual.index) is type(expected.index)
    assert actual.columns.dtype == expected.columns.dtype
    _assert_same(actual, expected)


@settings(max_examples=300, deadline=None)
@given(st.lists(_varied, max_size=10))
def test_the_frame_is_mains_for_varied_entries(entries: list[SitemapEntry]) -> None:
    _assert_as_main_made(entries)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_varied, _odd), max_size=6))
def test_the_frame_is_mains_for_odd_values(entries: list[SitemapEntry]) -> None:
    """Naive datetimes, pandas' Timestamps, texts pandas' string dtype refuses, a
    precision that is no text: each goes through the plain construction, as on main."""
    _assert_as_main_made(entries)


def test_the_frame_is_mains_for_a_demo_sized_site() -> None:
    dated = datetime(2025, 3, 1, 12, tzinfo=UTC)
    entries = [
        SitemapEntry(
            f"https://a.test/{n}",
            None if n % 7 == 0 else dated + timedelta(hours=n, microseconds=n),
            None if n % 7 == 0 else ("day", "second")[n % 2],
            None if n % 7 == 0 else f"2025-03-{n % 28 + 1:02d}",
            SITEMAPS[n % 3],
            dated if n % 5 == 0 else None,
            Extensions(image_count=1, hreflang=(("en", "x"),)) if n % 4 == 0 else None,
        )
        for n in range(60)
    ]
    for some in (entries, [e._replace(extensions=None) for e in entries], entries[:1]):
        _assert_as_main_made(some)
