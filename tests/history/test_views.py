"""The views a team's tools read: the latest verdict per site and per sub-sitemap, and
since when it holds, the same on both backends."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from auditor.history import History
from tests.history.helpers import STARTED, entries, files, pages, result

SITE, OTHER = "https://example.com", "https://other.example"
SITE_COLUMNS = [
    "site", "verdict", "since", "run_id", "started_at", "finished_at", "runs", "precision",
    "recall", "recheck_days",
]  # fmt: skip
SEGMENT_COLUMNS = [
    "site", "sitemap", "verdict", "since", "run_id", "started_at", "finished_at", "urls",
    "compared", "changed", "lastmod_advanced", "change_rate", "recheck_days", "precision",
    "recall", "group_pattern",
]  # fmt: skip


@pytest.fixture
def history(db_url):
    with History.open(db_url) as opened:
        yield opened


def _save(history: History, site: str, day: int, verdict: str, blog: str) -> int:
    """A run of ``site`` started ``day`` days after STARTED; the blog segment's verdict."""
    base = result(site, started=STARTED + timedelta(days=day), verdict=verdict)
    news, old_blog = base.segments
    run = replace(base, segments=(news, replace(old_blog, verdict=blog)))
    return history.save_run(run, files=files(site), entries=entries(site), pages=pages(site))


def _instant(value: object) -> datetime:
    """A view's instant: ISO text on SQLite, an aware datetime on PostgreSQL."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    assert moment.tzinfo is not None
    return moment.astimezone(UTC)


def _view(history: History, name: str) -> tuple[list[str], list[dict[str, object]]]:
    columns, rows = history._db.described(f"SELECT * FROM {name}")
    return columns, sorted((dict(zip(columns, row, strict=True)) for row in rows), key=str)


def test_the_latest_verdict_of_each_site_and_since_when(history):
    _save(history, SITE, 0, "trusted", "trusted")
    _save(history, SITE, 3, "untrusted", "trusted")  # saved before the run of day 2
    _save(history, SITE, 2, "trusted", "inconclusive")
    _save(history, SITE, 4, "untrusted", "trusted")
    _save(history, OTHER, 1, "inconclusive", "inconclusive")
    columns, rows = _view(history, "latest_site_verdicts")
    assert columns == SITE_COLUMNS
    site, other = sorted(rows, key=lambda row: str(row["site"]))
    assert (site["site"], site["verdict"], site["run_id"], site["runs"]) == (
        SITE,
        "untrusted",
        4,
        4,
    )
    assert _instant(site["since"]) == STARTED + timedelta(days=3)  # runs by start, not id
    assert _instant(site["started_at"]) == STARTED + timedelta(days=4)
    assert _instant(site["finished_at"]) == STARTED + timedelta(days=4, minutes=3)
    assert (site["precision"], site["recall"], site["recheck_days"]) == (0.667, 1.0, 3.5)
    assert (other["verdict"], other["runs"]) == ("inconclusive", 1)
    assert _instant(other["since"]) == _instant(other["started_at"]) == STARTED + timedelta(1)


def test_a_first_run_has_no_precision_or_recall(history):
    run = replace(result(), changes=None)
    history.save_run(run, files=[], entries=entries(), pages=[])
    _, (row,) = _view(history, "latest_site_verdicts")
    assert (row["precision"], row["recall"]) == (None, None)


def test_the_latest_verdict_of_each_sub_sitemap_and_since_when(history):
    _save(history, SITE, 0, "partial", "trusted")
    _save(history, SITE, 1, "partial", "inconclusive")
    _save(history, SITE, 2, "partial", "inconclusive")
    _save(history, OTHER, 0, "partial", "trusted")
    columns, rows = _view(history, "latest_segment_verdicts")
    assert columns == SEGMENT_COLUMNS
    by_key = {(row["site"], row["sitemap"]): row for row in rows}
    assert sorted(by_key) == [
        (SITE, f"{SITE}/blog.xml"),
        (SITE, f"{SITE}/news.xml"),
        (OTHER, f"{OTHER}/blog.xml"),
        (OTHER, f"{OTHER}/news.xml"),
    ]
    blog, news = by_key[SITE, f"{SITE}/blog.xml"], by_key[SITE, f"{SITE}/news.xml"]
    assert (blog["verdict"], blog["run_id"], blog["urls"]) == ("inconclusive", 3, 2)
    assert _instant(blog["since"]) == STARTED + timedelta(days=1)
    assert (news["verdict"], news["compared"], news["change_rate"]) == ("untrusted", 3, None)
    assert _instant(news["since"]) == STARTED  # untrusted in every run
    assert (blog["change_rate"], blog["recheck_days"]) == (0.05, 7.25)
    assert (news["precision"], news["recall"]) == (0.5, 1.0)  # the sub-sitemap's own
    assert (blog["precision"], blog["recall"]) == (None, None)  # nothing advanced or changed
    assert by_key[OTHER, f"{OTHER}/blog.xml"]["verdict"] == "trusted"


def test_views_of_an_empty_history_are_empty(history):
    assert _view(history, "latest_site_verdicts") == (SITE_COLUMNS, [])
    assert _view(history, "latest_segment_verdicts") == (SEGMENT_COLUMNS, [])
