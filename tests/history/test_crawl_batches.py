"""Crawl batches in the history (auditor.history.batches), on SQLite and PostgreSQL: each
recording of fetches is a batch; the states it replaced are kept, once each, in the same
transaction; taking it back restores them and removes its fetches; a batch a later one
built on waits for it; the crawl counts say which batches they came from."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from auditor.errors import HistoryError, UsageError
from auditor.history import History
from auditor.history.batches import TAKE_BACK_DAYS
from auditor.history.crawl import CrawlLogRow, CrawlState
from tests.history.helpers import save

SITE = "https://example.com"
SITEMAP = f"{SITE}/blog.xml"
URLS = [f"{SITE}/p/{i}" for i in range(6)]
DAY1 = datetime(2026, 11, 30, 8, tzinfo=UTC)


def _state(
    loc: str, at: datetime, version: str, changes: int = 0, blocks: bytes = b""
) -> CrawlState:
    return CrawlState(loc, SITEMAP, at, 200, 0, at, at - timedelta(days=2), "second",
                      version, f"fp-{version}", 2**64 - 7, blocks or None, changes,
                      changes, float(changes), 1, 0.5)  # fmt: skip


def _row(loc: str, at: datetime, changed: bool | None, agrees: bool | None = None) -> CrawlLogRow:
    return CrawlLogRow(loc, SITEMAP, at, 200, "h", at - timedelta(days=2), changed,
                       None if changed is None else False, None if changed is None else 1.0,
                       agrees)  # fmt: skip


def _fetch(history: History, urls: list[str], at: datetime, version: str, **kwargs: Any) -> int:
    """One save of ``urls`` fetched ``at`` (their copy ``version``), the states built on
    the stored ones as the recorder does; the batch id."""
    site_id = history.site_ids()[SITE]
    before = history.crawl_states(site_id, urls)
    states = [
        _state(u, at, version, before[u].changes + 1 if u in before else 0, version.encode())
        for u in urls
    ]
    log = [_row(u, at, True if u in before else None) for u in urls]
    return history.save_fetches(site_id, states, log, at + timedelta(minutes=5), **kwargs)


def _crawl_tables(history: History) -> dict[str, list[tuple[Any, ...]]]:
    found = {}
    for table in ("crawl_state", "crawl_log", "crawl_replaced"):
        rows = history._db.rows(f"SELECT * FROM {table}")
        found[table] = sorted(
            (tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows), key=repr
        )
    return found


@pytest.fixture
def history(db_url):  # type: ignore[no-untyped-def]
    with History.open(db_url) as opened:
        save(opened, SITE)
        yield opened


def test_a_batch_keeps_the_states_it_replaced_once_and_taking_it_back_restores_them(history):
    one = _fetch(history, URLS[:4], DAY1, "a", sources=["day1.jsonl"])
    before = _crawl_tables(history)
    two = _fetch(history, URLS[2:], DAY1 + timedelta(days=1), "b", sources=["day2.jsonl"])
    again = _fetch(history, URLS[2:4], DAY1 + timedelta(days=2), "c", batch=two)  # a second save
    assert (one, two, again) == (1, 2, 2)

    replaced = history._db.rows("SELECT loc, content_hash, prior_batch FROM crawl_replaced"
                                " WHERE batch_id = 2 ORDER BY loc")  # fmt: skip
    assert replaced == [(u, "a", 1) for u in URLS[2:4]]  # the states before the batch, once
    (listed,) = [b for b in history.crawl_batches() if b.id == two]
    assert listed.sources == ("day2.jsonl",) and listed.fetches == 6 and listed.changed == 4
    assert listed.first_fetched_at == DAY1 + timedelta(days=1)
    assert listed.last_fetched_at == DAY1 + timedelta(days=2)

    undone = history.take_back([two], now=DAY1 + timedelta(days=3))
    assert undone.batches == (2,) and undone.fetches == 6
    assert (undone.restored, undone.removed) == (2, 2)
    assert _crawl_tables(history) == before
    (listed,) = [b for b in history.crawl_batches() if b.id == two]
    assert listed.taken_back_at == DAY1 + timedelta(days=3)


def test_a_batch_a_later_one_replaced_states_of_waits_for_it(history):
    _fetch(history, URLS[:3], DAY1, "a")
    _fetch(history, URLS[3:], DAY1, "a")  # batch 2: other URLs, no bearing on batch 1
    _fetch(history, URLS[1:2], DAY1 + timedelta(days=1), "b")  # batch 3 built on batch 1
    with pytest.raises(UsageError, match=r"batch 3 .*--take-back 3 1"):
        history.take_back([1])
    history.take_back([2])  # nothing later touched its URLs
    assert history.take_back([1, 3]).batches == (3, 1)  # newest first, whatever the order
    assert _crawl_tables(history) == {"crawl_state": [], "crawl_log": [], "crawl_replaced": []}


def test_batches_recorded_in_turn_over_one_url_are_refused_whole(history):
    site_id = history.site_ids()[SITE]
    first = _fetch(history, URLS[:1], DAY1, "a")
    second = _fetch(history, URLS[:1], DAY1 + timedelta(hours=1), "b")
    _fetch(history, URLS[:1], DAY1 + timedelta(hours=2), "c", batch=first)  # first again
    assert history.crawl_states(site_id, URLS[:1])[URLS[0]].content_hash == "c"
    for ids in ([first], [second], [first, second]):
        with pytest.raises(UsageError, match="in turn"):
            history.take_back(ids)
    assert history.crawl_states(site_id, URLS[:1])[URLS[0]].content_hash == "c"


def test_unknown_taken_back_and_expired_batches_are_usage_errors(history):
    _fetch(history, URLS, DAY1, "a")
    with pytest.raises(UsageError, match="no batch 7"):
        history.take_back([1, 7])
    history.take_back([1])
    with pytest.raises(UsageError, match="batch 1 was taken back"):
        history.take_back([1])
    old = _fetch(history, URLS, DAY1, "b")
    _fetch(history, URLS[:1], DAY1 + timedelta(days=TAKE_BACK_DAYS + 1), "c")  # drops old's
    assert history._db.rows("SELECT count(*) FROM crawl_replaced WHERE batch_id = ?", (old,)) == [
        (0,)
    ]
    with pytest.raises(UsageError, match=f"batch {old}: its replaced states are no longer kept"):
        history.take_back([old])


def test_rows_recorded_before_batches_keep_counting_and_are_restored_as_they_were(history):
    site_id = history.site_ids()[SITE]
    history.save_fetches(site_id, [_state(URLS[0], DAY1, "a")], [_row(URLS[0], DAY1, None)], DAY1)
    history._db.execute("UPDATE crawl_state SET batch_id = NULL")  # as rows from before 0014
    history._db.execute("UPDATE crawl_log SET batch_id = NULL")
    history._db.execute("DELETE FROM crawl_batches")
    before = _crawl_tables(history)
    later = _fetch(history, URLS[:1], DAY1 + timedelta(days=1), "b")
    assert later == 1
    history.take_back([later])
    assert _crawl_tables(history) == before


def test_the_counts_name_the_batches_their_evidence_came_from(history):
    site_id = history.site_ids()[SITE]
    _fetch(history, URLS, DAY1, "a")  # first fetches: nothing compared, no date checked
    dated = [replace(_row(URLS[0], DAY1 + timedelta(hours=1), None), date_agrees=True)]
    states = [_state(URLS[0], DAY1 + timedelta(hours=1), "a")]
    history.save_fetches(site_id, states, dated, DAY1 + timedelta(hours=2))  # batch 2
    _fetch(history, URLS[:2], DAY1 + timedelta(days=1), "b")  # batch 3: two compared
    assert history.crawl_log_counts(SITE, DAY1, batches=True).batches == (2, 3)
    until = DAY1 + timedelta(days=1)
    assert history.crawl_log_counts(SITE, DAY1, until, batches=True).batches == (2,)
    assert history.crawl_log_counts(SITE, DAY1, by_url=[SITEMAP], batches=True).batches == (2, 3)
    assert history.crawl_log_counts(SITE, DAY1).batches == ()  # not asked for: not read
    history.take_back([3])
    assert history.crawl_log_counts(SITE, DAY1, batches=True).batches == (2,)


def test_the_replaced_states_keep_every_column_of_a_url_s_state(history):
    """A column added to crawl_state must be kept for a take-back too."""
    state = set(history._db.columns("crawl_state")) - {"batch_id"}
    kept = set(history._db.columns("crawl_replaced")) - {"batch_id", "prior_batch"}
    assert kept == state


def test_a_batch_taken_back_while_being_recorded_takes_no_more_fetches(history):
    batch = _fetch(history, URLS[:2], DAY1, "a")
    history.take_back([batch])
    with pytest.raises(HistoryError, match=f"batch {batch} was taken back while being recorded"):
        _fetch(history, URLS[2:], DAY1, "a", batch=batch)
    assert _crawl_tables(history) == {"crawl_state": [], "crawl_log": [], "crawl_replaced": []}
