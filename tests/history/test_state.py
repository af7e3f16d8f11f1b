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
from auditor.history.state import FULL_STATE_COLUMNS, STATE_COLUMNS, STATE_VERSION
from auditor.models import PRECISIONS, SitemapEntry
from auditor.walker.inventory import entries_to_dataframe


def _frame(entries: list[SitemapEntry]) -> pd.DataFrame:
    return entries_to_dataframe(entries)


def _round_trip(frame: pd.DataFrame) -> None:
    """Equal, lastmod always in microseconds (the inventory uses seconds when all are NaT)."""
    back = decode_state(encode_state(frame))
    expected = frame[list(FULL_STATE_COLUMNS)]
    expected = expected.assign(
        lastmod=expected["lastmod"].astype("datetime64[us, UTC]"),
        news_publication_date=expected["news_publication_date"].astype("datetime64[us, UTC]"),
        lastmod_raw=pd.Series(  # the inventory's NaN (pandas infers str) reads back as None
            [t if isinstance(t, str) else None for t in expected["lastmod_raw"]], dtype=object
        ),
    )
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
            st.one_of(st.none(), st.text(max_size=12)),
            _instants,
        ),
        max_size=40,
    )
)
def test_any_inventory_round_trips(rows):
    entries = [SitemapEntry(*row) for row in rows]
    _round_trip(_frame(entries))


def test_lastmods_as_written_and_news_dates_round_trip():
    news = datetime(2026, 11, 29, 6, 0, 0, 500_000, tzinfo=UTC)
    rows = [
        SitemapEntry("https://a.example/1", None, None, "15/10/2026", "s1"),
        SitemapEntry(
            "https://a.example/2", news, "second", "2026-11-29T07:00:00+01:00", "s1", news
        ),
        SitemapEntry("https://a.example/3", None, None, None, "s2"),
        SitemapEntry("https://a.example/4", None, None, "été\u00e9", "s2"),
    ]
    back = decode_state(encode_state(_frame(rows)))
    assert back["lastmod_raw"].tolist() == ["15/10/2026", rows[1][3], None, "été\u00e9"]
    assert back["news_publication_date"].iloc[1] == news
    assert back["news_publication_date"].iloc[[0, 2, 3]].isna().all()
    assert b'"raw_format":"lines"' in encode_state(_frame(rows))


@pytest.mark.parametrize("odd", ["", "2026-11-29\n12:00"], ids=["empty", "line break"])
def test_an_empty_or_multiline_lastmod_as_written_switches_to_json(odd):
    rows = [
        SitemapEntry("https://a.example/1", None, None, odd, "s"),
        SitemapEntry("https://a.example/2", None, None, None, "s"),
        SitemapEntry("https://a.example/3", None, None, "2026", "s"),
    ]
    frame = _frame(rows)
    assert b'"raw_format":"json"' in encode_state(frame)
    _round_trip(frame)


def _version_1(frame: pd.DataFrame) -> bytes:
    """The blob an auditor of state version 1 wrote: four sections, no raw or news keys."""
    import json
    import struct

    blob = encode_state(frame[list(STATE_COLUMNS)])
    size = struct.unpack_from("<I", blob, 1)[0]
    header = json.loads(blob[5 : 5 + size])
    del header["raw_format"], header["news"]
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<BI", 1, len(text)) + text + blob[5 + size :]


def test_a_version_1_state_is_read_without_the_lastmods_as_written():
    frame = _site(30)
    back = decode_state(_version_1(frame))
    assert list(back.columns) == list(STATE_COLUMNS)
    assert back["loc"].tolist() == frame["loc"].tolist()
    assert back["lastmod"].equals(frame["lastmod"].astype("datetime64[us, UTC]"))


def test_a_frame_without_the_lastmods_as_written_is_stored_without_them():
    frame = _site(10)[list(STATE_COLUMNS)]
    assert list(decode_state(encode_state(frame)).columns) == list(STATE_COLUMNS)


@pytest.mark.parametrize(
    "dtype", ["datetime64[us, UTC]", "datetime64[s, UTC]", "datetime64[ns, UTC]", "object"]
)
def test_instants_of_a_utc_column_are_read_without_a_conversion(dtype, monkeypatch):
    """A column already of UTC instants (what the walker makes: microseconds, or seconds
    when the news dates are all missing) is read as it is; any other goes through
    pandas' conversion. Both give the same microseconds, NaT as int64's minimum."""
    from auditor.history.state import _microseconds

    fraction = 0 if dtype.startswith("datetime64[s") else 678_000  # seconds hold none
    first = datetime(1, 1, 1, tzinfo=UTC)
    stamps = [datetime(2026, 1, 2, 3, 4, 5, fraction, tzinfo=UTC), None, first]
    if dtype != "datetime64[ns, UTC]":  # year 1 does not fit nanoseconds
        column = pd.Series(stamps, dtype=dtype)
    else:
        column = pd.Series(stamps[:2], dtype=dtype)
    expected = [
        int((s - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(microseconds=1))
        if s is not None
        else np.iinfo(np.int64).min
        for s in stamps[: len(column)]
    ]
    converted = []
    original = pd.to_datetime
    monkeypatch.setattr(pd, "to_datetime", lambda *a, **k: converted.append(1) or original(*a, **k))
    assert _microseconds(column).tolist() == expected
    assert converted == ([1] if dtype == "object" else [])
