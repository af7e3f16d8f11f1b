"""url_state: a whole inventory in one compact blob, and back unchanged."""

from __future__ import annotations

import zlib
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.errors import HistoryError
from auditor.history import decode_state, encode_state
from auditor.history.state import STATE_COLUMNS, STATE_VERSION
from auditor.models import PRECISIONS, SitemapEntry
from auditor.walker.inventory import entries_to_dataframe


def _frame(entries: list[SitemapEntry]) -> pd.DataFrame:
    return entries_to_dataframe(entries)


def _round_trip(frame: pd.DataFrame) -> None:
    """Equal, lastmod always in microseconds (the inventory uses seconds when all are NaT)."""
    back = decode_state(encode_state(frame))
    expected = frame[list(STATE_COLUMNS)]
    expected = expected.assign(lastmod=expected["lastmod"].astype("datetime64[us, UTC]"))
    for name in ("lastmod_precision", "sitemap"):  # no category at all: float64 categories
        if expected[name].cat.categories.empty:
            expected[name] = expected[name].cat.set_categories(pd.Index([], dtype=str))
    pd.testing.assert_frame_equal(back, expected)


def _site(n: int, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = datetime(2026, 11, 29, tzinfo=UTC)
    offsets = rng.integers(0, 10**12, size=n)  # microseconds: about 11 days
    rows = []
    for i in range(n):
        undated = i % 7 == 0
        lastmod = None if undated else base - timedelta(microseconds=int(offsets[i]))
        precision = None if undated else PRECISIONS[i % len(PRECISIONS)]
        sitemap = f"https://example.com/sitemap-{i % 13}.xml"
        loc = f"https://example.com/p/{i}?x={offsets[i]}"
        rows.append(SitemapEntry(loc, lastmod, precision, None, sitemap))
    return _frame(rows)


def test_ten_thousand_urls_round_trip_and_stay_small():
    frame = _site(10_000)
    blob = encode_state(frame)
    _round_trip(frame)
    assert blob[0] == STATE_VERSION
    assert len(blob) < 20 * 10_000  # well under 20 bytes a URL


def test_extreme_and_missing_values_survive():
    rows = [
        SitemapEntry("https://a.example/1", datetime(1, 1, 1, tzinfo=UTC), "year", None, "s1"),
        SitemapEntry(
            "https://a.example/2",
            datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
            "fraction",
            None,
            "s2",
        ),
        SitemapEntry("https://a.example/ü/😀", None, None, None, "s1"),
        SitemapEntry("", datetime(1970, 1, 1, tzinfo=UTC), "second", None, "s1"),
        SitemapEntry(
            "https://a.example/3",
            datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
            "fraction",
            None,
            "s2",
        ),
    ]
    _round_trip(_frame(rows))


def test_a_loc_with_a_line_break_switches_to_json():
    locs = ("https://a.example/x\ny", "", "https://a.example/z")
    frame = _frame([SitemapEntry(loc, None, None, None, "s") for loc in locs])
    blob = encode_state(frame)
    assert b'"loc_format":"json"' in blob
    _round_trip(frame)


def test_empty_and_single_inventories():
    _round_trip(_frame([]))
    _round_trip(_frame([SitemapEntry("", None, None, None, "s")]))


def test_a_frame_without_categoricals_is_encoded_too():
    frame = _site(50)
    plain = frame.assign(
        sitemap=frame["sitemap"].astype(object),
        lastmod_precision=frame["lastmod_precision"].astype(object),
        lastmod=frame["lastmod"].astype("datetime64[ns, UTC]"),
    )
    back = decode_state(encode_state(plain))
    assert back["sitemap"].tolist() == frame["sitemap"].tolist()
    assert back["lastmod"].equals(frame["lastmod"])


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:3],
        lambda b: bytes([STATE_VERSION + 1]) + b[1:],
        lambda b: b[:-5],
        lambda b: b[:10] + b"\x00" * 20 + b[30:],
        lambda b: b[:5] + zlib.compress(b"{}"),
    ],
    ids=["short", "newer-version", "truncated", "overwritten", "no-sections"],
)
def test_a_damaged_blob_is_a_history_error(damage):
    blob = encode_state(_site(100))
    with pytest.raises(HistoryError, match="url_state"):
        decode_state(damage(blob))


_instants = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(min_size=0, max_size=30),
            _instants,
            st.sampled_from((None, *PRECISIONS)),
            st.sampled_from(("a.xml", "b.xml", "ü.xml")),
        ),
        max_size=40,
    )
)
def test_any_inventory_round_trips(rows):
    entries = [SitemapEntry(loc, when, precision, None, sm) for loc, when, precision, sm in rows]
    _round_trip(_frame(entries))
