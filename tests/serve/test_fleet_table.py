"""The fleet table of ``auditor serve``: rows as the history's runs say (streaks, since,
previous, degraded, due, savings), filters, every sort both ways, pages, the counts over
time, and runs saved (or deleted) by another handle while it serves. Both backends."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from auditor.history import DEFAULT_RECHECK_DAYS, History
from auditor.report.fleet import VERDICT_RANK
from auditor.report.site import site_slug
from auditor.scorer.result import VERDICTS
from auditor.serve import fleet, fleetstate
from auditor.serve.fleet import MAX_PER_PAGE, SORTS, FleetQuery, FleetTable
from auditor.serve.readers import Readers
from tests.history.backends import raw
from tests.history.helpers import entries, result

DAY0 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)
HOSTILE = 'https://evil.example/"><script>alert("site")</script>'
#: Each site's runs: (day, verdict, recheck_days, saved fetches a day or None).
FLEET = {
    "https://degrades.example": [(0, "trusted", 2.0, 10.0), (1, "trusted", 2.0, 10.0),
                                 (2, "untrusted", 1.0, 5.0), (3, "untrusted", 1.0, 4.5)],
    "https://improves.example": [(0, "untrusted", None, None), (1, "trusted", 3.0, 40.0),
                                 (2, "trusted", 3.0, 40.0)],
    "https://steady.example": [(1, "partial", None, 7.0)],
    "https://back.example": [(0, "trusted", 5.0, 1.0), (1, "untrusted", 5.0, 1.0),
                             (3, "trusted", 5.0, 2.0)],
    "http://127.0.0.1:8080": [(2, "no-lastmod", None, None), (3, "no-lastmod", None, None)],
    "https://MiXeD-Case.example": [(1, "inconclusive", 4.0, 7.0)],
    "https://ünï.example:8443": [(0, "partial", 4.0, 7.0), (2, "inconclusive", 4.0, 3.0)],
    HOSTILE: [(2, "untrusted", None, 0.0)],
    "https://per%cent_under.example": [(3, "trusted", 1.0, 7.0)],
}  # fmt: skip


def _save(history: History, site: str, day: float, verdict: str, recheck, saved) -> int:  # type: ignore[no-untyped-def]
    started = DAY0 + timedelta(days=day, seconds=len(site))
    savings = None
    if saved is not None:
        savings = {
            "urls": 100,
            "fetches_per_day": 50.0 - saved,
            "uniform_fetches_per_day": 50.0,
            "freshness": 0.9,
            "uniform_freshness": 0.95,
            "saved_share": saved / 50,
        }
    run = replace(result(site, started=started, verdict=verdict, recheck_days=recheck),
                  savings=savings, report=None)  # fmt: skip
    return history.save_run(run, files=[], entries=entries(site)[:0], pages=[])


@pytest.fixture
def fleet_url(db_url: str) -> str:
    """A history of :data:`FLEET`, one run's save out of order (the last run of
    back.example saved first: since and previous go by start, not by save)."""
    with History.open(db_url) as history:
        _save(history, "https://back.example", *FLEET["https://back.example"][-1])
        for site, runs in FLEET.items():
            for run in runs if site != "https://back.example" else runs[:-1]:
                _save(history, site, *run)
    return db_url


@pytest.fixture
def table(fleet_url: str):  # type: ignore[no-untyped-def]
    readers = Readers(fleet_url)
    yield FleetTable(readers, check_seconds=0.0, background=False)
    readers.close()


def _at(site: str, day: float) -> datetime:
    return DAY0 + timedelta(days=day, seconds=len(site))


def _all(table: FleetTable, **kwargs) -> list:  # type: ignore[no-untyped-def]
    page = table.query(FleetQuery(per_page=MAX_PER_PAGE, **kwargs))
    assert page.total == len(page.rows)
    return list(page.rows)


def test_each_row_says_its_streak_since_previous_due_and_savings(table):
    rows = {row.site: row for row in _all(table)}
    assert set(rows) == set(FLEET)
    d = rows["https://degrades.example"]
    assert (d.verdict, d.previous, d.degraded, d.runs) == ("untrusted", "trusted", True, 4)
    assert d.since == _at(d.site, 2) and d.last_run == _at(d.site, 3)
    assert d.due == _at(d.site, 4) and d.saved_per_day == pytest.approx(4.5)
    i = rows["https://improves.example"]
    assert (i.verdict, i.previous, i.degraded, i.since) == ("trusted", "untrusted", False,
                                                            _at(i.site, 1))  # fmt: skip
    s = rows["https://steady.example"]
    assert (s.previous, s.degraded, s.since, s.saved_per_day) == (None, False, _at(s.site, 1), 7.0)
    assert s.due == _at(s.site, 1 + DEFAULT_RECHECK_DAYS)
    b = rows["https://back.example"]  # trusted, untrusted, trusted: the last streak's start
    assert (b.verdict, b.previous, b.since, b.runs) == ("trusted", "untrusted", _at(b.site, 3), 3)
    assert b.saved_per_day == 2.0 and b.last_run == _at(b.site, 3)
    assert rows["http://127.0.0.1:8080"].saved_per_day is None
    assert rows["http://127.0.0.1:8080"].slug == "http_127.0.0.1_8080"
    u = rows["https://ünï.example:8443"]
    assert (u.previous, u.degraded) == ("partial", True)
    for row in rows.values():
        assert row.slug == site_slug(row.site)
        assert table.site(row.slug) == row and table.site(row.site) == row
    assert table.site("nowhere.example") is None


def _expected(rows: list, sort: str) -> list[str]:  # type: ignore[type-arg]
    """Sites in the order of ``sort``, by plain Python: ties by site, no savings last."""
    name, descending = sort.lstrip("-"), sort.startswith("-")
    if name == "site":
        return sorted((r.site for r in rows), reverse=descending)
    values = {
        "verdict": lambda r: VERDICT_RANK.get(r.verdict, 0),
        "since": lambda r: r.since,
        "last_run": lambda r: r.last_run,
        "due": lambda r: r.due,
        "saved": lambda r: r.saved_per_day,
        "runs": lambda r: r.runs,
    }[name]
    known = [r for r in rows if values(r) is not None]
    ordered = sorted(sorted(known, key=lambda r: r.site), key=values, reverse=descending)
    ties = {}
    for r in ordered:  # reverse=True keeps ties in order: re-sort each tie by site
        ties.setdefault(values(r), []).append(r.site)
    found = [
        site for key in dict.fromkeys(values(r) for r in ordered) for site in sorted(ties[key])
    ]
    return found + sorted(r.site for r in rows if values(r) is None)


@pytest.mark.parametrize("sort", [*SORTS, *(f"-{s}" for s in SORTS)])
def test_every_sort_both_ways_ties_by_site(table, sort):
    rows = _all(table)
    assert [r.site for r in _all(table, sort=sort)] == _expected(rows, sort)


def test_the_default_order_is_the_static_index_s_worst_first(table):
    sites = [r.site for r in _all(table)]
    assert sites[:3] == sorted(s for s, runs in FLEET.items()
                               if runs[-1][1] in ("untrusted", "no-lastmod"))  # fmt: skip
    assert sites[-3:] == ["https://back.example", "https://improves.example",
                          "https://per%cent_under.example"]  # fmt: skip


def test_filters_alone_and_together(table):
    def sites(**kwargs) -> set[str]:  # type: ignore[no-untyped-def]
        return {r.site for r in _all(table, **kwargs)}

    assert sites(verdicts=("trusted",)) == {"https://improves.example", "https://back.example",
                                            "https://per%cent_under.example"}  # fmt: skip
    assert sites(verdicts=("partial", "no-lastmod")) == {"https://steady.example",
                                                        "http://127.0.0.1:8080"}  # fmt: skip
    assert sites(verdicts=("no-such-verdict",)) == set()
    assert sites(degraded=True) == {"https://degrades.example", "https://ünï.example:8443"}
    boundary = _at("https://degrades.example", 2)  # since exactly then: included
    assert "https://degrades.example" in sites(changed_since=boundary)
    assert "https://degrades.example" not in sites(
        changed_since=boundary + timedelta(microseconds=1)
    )
    late = {"https://back.example", "https://per%cent_under.example"}
    assert sites(changed_since=DAY0 + timedelta(days=3)) == late
    assert sites(changed_since=DAY0 + timedelta(days=3, hours=3)) == set()
    assert sites(verdicts=("untrusted",), degraded=True) == {"https://degrades.example"}
    assert sites(host="mixed-CASE") == {"https://MiXeD-Case.example"}
    assert sites(host="ÜNÏ") == {"https://ünï.example:8443"}
    assert sites(host="%cent_") == {"https://per%cent_under.example"}
    assert sites(host="_") == {"https://per%cent_under.example"}  # no LIKE wildcard
    assert sites(host='"><script>') == {HOSTILE}
    assert sites(host=":8080") == {"http://127.0.0.1:8080"}
    assert sites(host="http://") == {"http://127.0.0.1:8080"}
    assert sites(host="\n") == set()
    assert sites(host="example", verdicts=("trusted",), sort="-since") == sites(
        verdicts=("trusted",)
    )


def test_counts_are_the_whole_fleet_s_whatever_the_filter(table):
    counts = {"trusted": 3, "partial": 1, "inconclusive": 2, "untrusted": 2, "no-lastmod": 1}
    page = table.query(FleetQuery(host="steady"))
    assert page.counts == counts and page.total == 1
    assert list(page.counts) == list(VERDICTS)  # the contract's order


def test_pages_cut_the_order_and_a_page_past_the_last_is_empty(table):
    everything = [r.site for r in _all(table, sort="site")]
    seen = []
    for number in (1, 2, 3, 4, 5):
        page = table.query(FleetQuery(sort="site", page=number, per_page=2))
        assert (page.total, page.pages, page.page, page.per_page) == (9, 5, number, 2)
        seen += [r.site for r in page.rows]
    assert seen == everything
    past = table.query(FleetQuery(sort="site", page=6, per_page=2))
    assert past.rows == () and past.total == 9 and past.pages == 5
    one = table.query(FleetQuery(per_page=1, page=9))
    assert len(one.rows) == 1 and one.pages == 9
    none = table.query(FleetQuery(host="no match at all"))
    assert (none.rows, none.total, none.pages) == ((), 0, 1)


@pytest.mark.parametrize(
    "bad",
    [{"per_page": 0}, {"per_page": MAX_PER_PAGE + 1}, {"page": 0}, {"page": -1},
     {"sort": "origin"}, {"sort": "--site"}, {"changed_since": datetime(2026, 3, 1)}],
)  # fmt: skip
def test_a_query_out_of_bounds_is_refused(table, bad):
    with pytest.raises(ValueError):
        table.query(FleetQuery(**bad))


def test_verdicts_over_time_count_each_site_from_its_first_run(table):
    days = table.verdicts_over_time(date(2026, 3, 6))
    assert [d for d, _ in days] == [date(2026, 3, n) for n in range(1, 7)]
    by_day = dict(days)
    assert by_day[date(2026, 3, 1)] == {"trusted": 2, "partial": 1, "inconclusive": 0,
                                        "untrusted": 1, "no-lastmod": 0}  # fmt: skip
    assert by_day[date(2026, 3, 2)] == {"trusted": 2, "partial": 2, "inconclusive": 1,
                                        "untrusted": 1, "no-lastmod": 0}  # fmt: skip
    assert by_day[date(2026, 3, 3)] == {"trusted": 1, "partial": 1, "inconclusive": 2,
                                        "untrusted": 3, "no-lastmod": 1}  # fmt: skip
    final = {"trusted": 3, "partial": 1, "inconclusive": 2, "untrusted": 2, "no-lastmod": 1}
    assert by_day[date(2026, 3, 4)] == final == by_day[date(2026, 3, 6)]
    assert final == table.query(FleetQuery()).counts


def test_runs_saved_by_another_handle_are_read_incrementally(table, fleet_url, monkeypatch):
    before = table.version
    untouched = table.site("steady.example")
    monkeypatch.setattr(fleetstate, "built", lambda history: pytest.fail("read whole"))
    with History.open(fleet_url) as writer:
        _save(writer, "https://improves.example", 4, "inconclusive", 1.0, 1.0)
        _save(writer, "https://new.example", 4, "trusted", None, None)
    row = table.site("improves.example")
    assert (row.verdict, row.previous, row.degraded, row.runs) == ("inconclusive", "trusted",
                                                                   True, 4)  # fmt: skip
    assert table.site("new.example").previous is None
    assert table.version != before
    assert table.site("steady.example") is untouched
    page = table.query(FleetQuery(sort="site"))
    assert page.total == 10 and page.counts["trusted"] == 3 and page.counts["inconclusive"] == 3
    assert [r.site for r in page.rows] == sorted(r.site for r in page.rows)
    assert {r.site for r in _all(table, degraded=True)} >= {"https://improves.example"}


def test_runs_deleted_read_every_site_again(table, fleet_url, monkeypatch):
    monkeypatch.setattr(fleet, "VERIFY_SECONDS", 0.0)  # every check counts the runs
    for site in ("https://degrades.example", "https://steady.example"):  # their inventories
        raw(fleet_url, "DELETE FROM url_state WHERE site_id = (SELECT id FROM sites"
                       " WHERE origin = ?)", (site,))  # fmt: skip
    raw(fleet_url, "DELETE FROM runs WHERE id = (SELECT max(id) FROM runs r"
                   " WHERE r.site_id = (SELECT id FROM sites WHERE origin = ?))",
        ("https://degrades.example",))  # fmt: skip
    raw(fleet_url, "DELETE FROM runs WHERE site_id = (SELECT id FROM sites WHERE origin = ?)",
        ("https://steady.example",))  # fmt: skip
    rows = {r.site: r for r in _all(table)}
    assert "https://steady.example" not in rows
    assert rows["https://degrades.example"].runs == 3
    assert table.site("steady.example") is None


def test_a_table_checks_no_more_often_than_asked(fleet_url):
    readers = Readers(fleet_url)
    try:
        table = FleetTable(readers, check_seconds=3600, background=False)
        with History.open(fleet_url) as writer:
            _save(writer, "https://late.example", 5, "trusted", None, None)
        assert table.site("late.example") is None and len(table) == 9
    finally:
        readers.close()


def test_threads_query_while_another_handle_saves(table, fleet_url):
    errors: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        try:
            while not stop.is_set():
                for sort in SORTS:
                    page = table.query(FleetQuery(sort=sort, per_page=3, host="example"))
                    assert len(page.rows) <= 3 and page.total >= 8
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    with History.open(fleet_url) as writer:
        for n in range(5):
            _save(writer, f"https://busy{n}.example", 4 + n / 10, "partial", None, None)
    stop.set()
    for thread in threads:
        thread.join()
    assert not errors
    assert table.query(FleetQuery(verdicts=("partial",))).total == 1 + 5


def test_a_deletion_is_seen_when_the_runs_are_next_counted(table, fleet_url):
    raw(fleet_url, "DELETE FROM url_state")
    raw(fleet_url, "DELETE FROM runs WHERE site_id = (SELECT id FROM sites WHERE origin = ?)",
        ("https://steady.example",))  # fmt: skip
    assert table.site("steady.example") is not None  # the highest run id alone: unchanged
    table.refresh()  # counts them
    assert table.site("steady.example") is None and len(table) == 8


def test_a_background_thread_keeps_the_table_up_to_date(fleet_url):
    readers = Readers(fleet_url)
    table = FleetTable(readers, check_seconds=0.05)
    try:
        with History.open(fleet_url) as writer:
            _save(writer, "https://background.example", 5, "trusted", None, None)
        deadline = time.monotonic() + 10
        while table.site("background.example") is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert table.site("background.example") is not None
    finally:
        table.close()
        readers.close()
    assert not any(t.name == "auditor-fleet-table" and t.is_alive() for t in threading.enumerate())


def test_a_refreshed_state_has_the_sorts_and_searches_asked_before_made(table, fleet_url):
    table.query(FleetQuery(sort="-saved", host="EXAMPLE"))
    old = table._state
    with History.open(fleet_url) as writer:
        _save(writer, "https://warm.example", 5, "trusted", None, None)
    table.refresh()
    assert table._state is not old
    assert set(table._state._orders) == set(old._orders) >= {"-saved"}
    assert "example" in table._state._hosts
    assert "https://warm.example" in {r.site for r in _all(table, host="EXAMPLE", sort="-saved")}
