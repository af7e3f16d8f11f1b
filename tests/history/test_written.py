"""The lastmods as written: a text in a shape of its instant is kept as the shape's number
and rendered back exactly; any other text is kept as written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.errors import HistoryError
from auditor.history import decode_state, encode_state
from auditor.history.state import STATE_COLUMNS
from auditor.history.written import (
    NO_TEXT,
    SHAPES,
    VERBATIM,
    decode_written,
    encode_written,
    render,
)
from auditor.models import SitemapEntry
from auditor.walker.dates import parse_w3c
from auditor.walker.inventory import entries_to_dataframe

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MOMENTS = [
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
    EPOCH,
    datetime(2024, 2, 29, 12, 5, 9, 7_000, tzinfo=UTC),
    datetime(2026, 11, 29, 20, 0, 0, 250_000, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
]


def _micros(moments: list[datetime | None]) -> np.ndarray:
    nat = np.iinfo(np.int64).min
    return np.array(
        [nat if m is None else (m - EPOCH) // timedelta(microseconds=1) for m in moments],
        dtype=np.int64,
    )


def _written(moment: datetime, shape: int) -> str:
    """How a generator writes ``moment`` in ``shape`` (Python's own formatting)."""
    unit, suffix = SHAPES[shape - 1]
    m = moment
    text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
    if unit == "day":
        return text
    text += f"T{m.hour:02d}:{m.minute:02d}"
    if unit != "minute":
        text += f":{m.second:02d}"
    if unit == "milli":
        text += f".{m.microsecond // 1000:03d}"
    elif unit == "micro":
        text += f".{m.microsecond:06d}"
    return text + suffix


@pytest.mark.parametrize("shape", range(1, len(SHAPES) + 1))
def test_each_shape_renders_as_python_writes_it(shape):
    rendered = render(_micros(MOMENTS), shape).tolist()
    assert rendered == [_written(m, shape) for m in MOMENTS]


def test_shaped_texts_become_numbers_and_others_stay_as_written():
    moment = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    texts = [
        "2026-11-29",  # a day: the day of the instant, which the walker puts at midnight
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:00+00:00",
        "2026-11-29T11:00:00+01:00",  # another offset
        "2026-11-29T10:00:00Z",  # the right shape for another instant
        "15/10/2026",  # invalid: no instant
        None,
        "",
    ]
    moments = [
        datetime(2026, 11, 29, tzinfo=UTC),
        moment,
        moment,
        moment,
        moment + timedelta(seconds=1),
        None,
        None,
        None,
    ]
    codes, verbatim = encode_written(texts, _micros(moments))

    assert codes.tolist() == [1, 4, 5, VERBATIM, VERBATIM, VERBATIM, NO_TEXT, VERBATIM]
    assert verbatim == [texts[3], texts[4], texts[5], ""]
    assert decode_written(codes, _micros(moments), verbatim).tolist() == texts


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23)),
            st.integers(0, len(SHAPES)),  # 0: some other text
            st.text(max_size=20),
        ),
        max_size=30,
    )
)
def test_any_texts_round_trip(rows):
    moments = [when.replace(tzinfo=UTC) for when, _, _ in rows]
    pairs = zip(moments, rows, strict=True)
    texts = [_written(m, shape) if shape else other for m, (_, shape, other) in pairs]
    codes, verbatim = encode_written(texts, _micros(moments))
    assert decode_written(codes, _micros(moments), verbatim).tolist() == texts
    for code, (_, shape, _) in zip(codes.tolist(), rows, strict=True):
        assert code == shape or (shape == 0 and code in (0, *range(1, len(SHAPES) + 1)))


def test_the_walkers_instant_of_a_shaped_text_renders_back_to_it():
    for shape in range(1, len(SHAPES) + 1):
        for moment in MOMENTS[2:]:
            text = _written(moment, shape)
            parsed = parse_w3c(text)
            assert parsed is not None, text
            assert render(_micros([parsed.value]), shape).tolist() == [text]


@pytest.mark.parametrize(
    "codes", [[1, 2, 99], [-2, 0, 0], [0, 0, 0]], ids=["unknown shape", "below none", "count"]
)
def test_damaged_codes_are_a_history_error(codes):
    micros = _micros(MOMENTS[:3])
    with pytest.raises(HistoryError, match="url_state"):
        decode_written(np.array(codes, dtype=np.int8), micros, ["only one"])


def test_a_shape_without_its_instant_is_a_history_error():
    with pytest.raises(HistoryError, match="url_state"):
        decode_written(np.array([4], dtype=np.int8), _micros([None]), [])


def test_distinct_stamps_in_one_shape_cost_almost_nothing_to_keep():
    """100,000 URLs, each its own second: the texts add under 10% to the blob."""
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(100_000):
        moment = base + timedelta(seconds=i * 317)
        text = moment.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        rows.append(SitemapEntry(f"https://example.com/p/{i}", moment, "second", text, "s.xml"))
    frame = entries_to_dataframe(rows)
    with_texts, without = encode_state(frame), encode_state(frame[list(STATE_COLUMNS)])
    assert len(with_texts) < 1.1 * len(without)
    back = decode_state(with_texts)
    assert back["lastmod_raw"].tolist() == [r.lastmod_raw for r in rows]
    pd.testing.assert_series_equal(back["loc"], frame["loc"])


_ANY_MICROS = st.one_of(
    st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999),  # Python's years
    st.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max),  # any, NaT among them
    st.just(int(np.iinfo(np.int64).min)),
    st.integers(-(10**17), 10**17).map(lambda m: m - m % 1_000_000),  # whole seconds
    st.integers(-(10**17), 10**17).map(lambda m: m - m % 1_000),  # whole milliseconds
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(_ANY_MICROS, st.integers(0, len(SHAPES)), st.none() | st.text(max_size=33)),
        max_size=12,
    ),
    st.integers(0, 2),
)
def test_a_few_texts_are_coded_as_the_arrays_code_them(rows, off_by):
    """A small site's texts, compared one by one, get the codes and verbatim texts the
    whole-array comparison gives (an instant Python cannot write: the arrays' way)."""
    from auditor.history.written import FEW_TEXTS, _encode_many

    micros = np.array([m for m, _, _ in rows], dtype=np.int64)
    rendered = [
        render(micros[i : i + 1] + off_by, shape).tolist()[0] if shape else other
        for i, (_, shape, other) in enumerate(rows)
    ]
    assert len(rendered) <= FEW_TEXTS
    codes, verbatim = encode_written(rendered, micros)
    expected_codes, expected_verbatim = _encode_many(rendered, micros)
    assert codes.dtype == expected_codes.dtype
    assert codes.tolist() == expected_codes.tolist() and verbatim == expected_verbatim


def test_each_shape_has_a_length_of_its_own() -> None:
    """The one-by-one comparison (``_encode_few``) finds a text's shape by its length
    alone: a new shape sharing a length with another would make it read texts of one as
    the other's, unlike the arrays' way."""
    from auditor.history import written

    assert len(set(written._WIDTHS)) == len(written.SHAPES)
    assert sorted(written._SHAPE_OF_WIDTH.values()) == list(range(1, len(written.SHAPES) + 1))
