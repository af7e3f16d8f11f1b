"""The sampler reads an inventory's rows and strata without boxing each value through
pandas (issue 36): the same pages and strata as main's reading, for any inventory frame.

Touches: nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.models import SitemapEntry
from auditor.sampler.choose import SampledPage, _Rows, _strata
from auditor.walker.inventory import entries_to_dataframe

SITEMAPS = ("https://a.test/sitemap.xml", "https://a.test/s-é.xml", "https://A.test/Z.xml")


def _main_page(frame: pd.DataFrame, row: int, stratum: str) -> SampledPage:
    """Row ``row`` as main read it (every value through ``iat``)."""
    lastmod: Any = frame["lastmod"].iat[row]
    value = None if lastmod is None or lastmod != lastmod else lastmod.to_pydatetime()
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    precision: Any = frame["lastmod_precision"].iat[row]
    segment = frame["segment"] if "segment" in frame.columns else None
    return SampledPage(
        str(frame["loc"].iat[row]),
        str(frame["sitemap"].iat[row]),
        value,
        None if precision is None or precision != precision else str(precision),
        stratum,
        str(segment.iat[row]) if segment is not None else "",
    )


def _main_strata(frame: pd.DataFrame) -> np.ndarray:
    column = "segment" if "segment" in frame.columns else "sitemap"
    return frame[column].astype(str).to_numpy()


_entries = st.builds(
    SitemapEntry,
    loc=st.text(min_size=1, max_size=8),
    lastmod=st.one_of(
        st.none(),
        st.datetimes(
            min_value=datetime(1990, 1, 1),
            max_value=datetime(2040, 1, 1),
            timezones=st.sampled_from([UTC, timezone(timedelta(hours=2))]),
        ),
    ),
    lastmod_precision=st.sampled_from([None, "day", "second"]),
    lastmod_raw=st.none(),
    sitemap=st.sampled_from(SITEMAPS),
    extensions=st.none(),
)
_segments = st.one_of(
    st.none(),
    st.just("texts"),
    st.just("categories"),
    st.just("numbers"),
)


_LASTMODS = (None, "datetime64[s, UTC]", "datetime64[ns, UTC]", "datetime64[us, Europe/Paris]")


def _frame(
    entries: list[SitemapEntry], segments: str | None, plain: bool, lastmods: str | None = None
) -> pd.DataFrame:
    frame = entries_to_dataframe(entries)
    if lastmods is not None:  # instants as another reader may hold them
        frame = frame.astype({"lastmod": lastmods})
    elif plain:
        frame["lastmod"] = frame["lastmod"].dt.tz_localize(None)  # naive: read as UTC
    if plain:  # columns as a file read back makes them: no categorical
        frame = frame.astype({"sitemap": object, "lastmod_precision": object})
    n = len(frame)
    if segments == "texts":
        frame = frame.assign(segment=[f"{s}#g{i % 2}" for i, s in enumerate(frame["sitemap"])])
    elif segments == "categories":
        frame = frame.assign(segment=pd.Categorical([f"g{i % 3}" for i in range(n)]))
    elif segments == "numbers":
        frame = frame.assign(segment=list(range(n)))
    return frame


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_entries, min_size=1, max_size=10),
    _segments,
    st.booleans(),
    st.sampled_from(_LASTMODS),
)
def test_pages_and_strata_read_as_main_read_them(
    entries: list[SitemapEntry], segments: str | None, plain: bool, lastmods: str | None
) -> None:
    frame = _frame(entries, segments, plain, lastmods)
    rows = _Rows(frame)
    for row in range(len(frame)):
        page, expected = rows.page(row, "newest"), _main_page(frame, row, "newest")
        assert page == expected
        assert repr(page.lastmod) == repr(expected.lastmod)
    strata, expected_strata = _strata(frame), _main_strata(frame)
    assert strata.dtype == expected_strata.dtype
    assert [repr(v) for v in strata] == [repr(v) for v in expected_strata]


def test_a_missing_sitemap_reads_as_main_read_it() -> None:
    frame = entries_to_dataframe(
        [SitemapEntry(f"https://a.test/{i}", None, None, None, SITEMAPS[0]) for i in range(3)]
    )
    frame["sitemap"] = frame["sitemap"].cat.set_categories([SITEMAPS[1]])  # all missing
    assert [repr(v) for v in _strata(frame)] == [repr(v) for v in _main_strata(frame)]
    assert _Rows(frame).page(1, "older") == _main_page(frame, 1, "older")


def test_a_frame_indexed_otherwise_is_sampled_by_row_position() -> None:
    from auditor.sampler.choose import choose_sample

    dated = datetime(2025, 3, 1, tzinfo=UTC)
    entries = [
        SitemapEntry(f"https://a.test/{i}", dated + timedelta(days=i), "day", None, SITEMAPS[i % 2])
        for i in range(30)
    ]
    frame = entries_to_dataframe(entries)
    shifted = frame.set_axis(range(100, 130))
    reordered = frame.iloc[::-1].reset_index(drop=True).iloc[::-1]  # index 29..0
    for other in (shifted, reordered):
        expected = choose_sample(other.reset_index(drop=True), 8, seed=3)
        assert choose_sample(other, 8, seed=3) == expected
