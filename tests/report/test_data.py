"""The data behind each chart (tested instead of pixels)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

from auditor.models import SitemapEntry
from auditor.report.data import (
    history_points,
    lastmod_by_month,
    sample_points,
    short_name,
    top_shared_values,
)
from auditor.scorer.result import PageObservation
from auditor.walker.inventory import entries_to_dataframe

T0 = datetime(2026, 1, 15, 12, tzinfo=UTC)


def _frame(values: dict[str, list[datetime | None]]) -> pd.DataFrame:
    entries = [
        SitemapEntry(
            f"https://x.example/{name}/{i}",
            v,
            "second" if v else None,
            None,
            f"https://x.example/{name}.xml",
        )
        for name, moments in values.items()
        for i, v in enumerate(moments)
    ]
    return entries_to_dataframe(entries)


def test_lastmod_by_month_counts_per_sub_sitemap_with_empty_months_as_zero():
    table = lastmod_by_month(_frame({"a": [T0, T0, T0 + timedelta(days=90)], "b": [T0, None]}))

    assert list(table.columns) == ["/a.xml", "/b.xml"]
    assert [str(m.date()) for m in table.index] == [
        "2026-01-01",
        "2026-02-01",
        "2026-03-01",
        "2026-04-01",
    ]
    assert table["/a.xml"].tolist() == [2, 0, 0, 1]
    assert table["/b.xml"].tolist() == [1, 0, 0, 0]
    assert table.index.name == "month"


def test_lastmod_by_month_groups_small_sub_sitemaps_and_long_spans():
    many = {f"s{i}": [T0] * (10 - i) for i in range(8)}
    table = lastmod_by_month(_frame(many))
    assert len(table.columns) == 7 and "others" in table.columns
    assert int(table["others"].sum()) == 4 + 3  # the two smallest

    long = lastmod_by_month(_frame({"a": [T0, T0.replace(year=1990)]}))
    assert long.index.name == "year" and len(long) == 37
    assert lastmod_by_month(_frame({"a": [None]})).empty
    assert lastmod_by_month(None).empty


def test_top_shared_values_only_values_carried_twice_or_more():
    table = top_shared_values(
        _frame({"a": [T0] * 3 + [T0 + timedelta(seconds=1)] * 2 + [T0 + timedelta(days=1)]})
    )

    assert table["urls"].tolist() == [3, 2]
    assert table["share"].tolist() == [0.5, 2 / 6]
    assert top_shared_values(_frame({"a": [T0, None]})).empty


def test_sample_points_and_the_signed_error_in_days():
    page = PageObservation(
        loc="https://x.example/a",
        sitemap="s",
        stratum="newest",
        fetched_at=T0,
        lastmod=T0,
        lastmod_precision="second",
        date_modified=T0 - timedelta(days=2),
        date_modified_credible=True,
    )
    undated = PageObservation(
        loc="https://x.example/b", sitemap="s", stratum="undated", fetched_at=T0
    )
    points = sample_points([page, undated])

    assert len(points) == 1
    assert points.iloc[0]["error_days"] == 2.0 and bool(points.iloc[0]["credible"])
    assert sample_points([]).empty


def test_history_points():
    runs = [
        {"run_id": 1, "started_at": T0.isoformat(), "verdict": "inconclusive", "changes": None},
        {
            "run_id": 2,
            "started_at": (T0 + timedelta(days=7)).isoformat(),
            "verdict": "trusted",
            "changes": {
                "precision": 1.0,
                "recall": 0.8,
                "precision_interval": [0.7, 1.0],
                "recall_interval": [0.5, 0.95],
            },
        },
    ]
    points = history_points(runs)
    assert points["verdict"].tolist() == ["inconclusive", "trusted"]
    assert pd.isna(points.iloc[0]["precision"]) and points.iloc[1]["recall_low"] == 0.5


def test_short_name():
    assert short_name("https://x.example/sitemaps/a.xml?page=2") == "/sitemaps/a.xml?page=2"
    assert short_name("local.xml") == "local.xml"
