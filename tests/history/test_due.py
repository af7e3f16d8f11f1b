"""When a site is due, as a daily cron at a fixed hour sees it: on its due day, never a
day late, never twice in one day, also when the previous night's fleet took hours."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from auditor.history import History
from tests.history.helpers import entries, result

DAY = timedelta(days=1)
#: Midnight of the simulation's first day; the cron fires at 02:00 every day.
MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)
CRON = timedelta(hours=2)
#: The night's fleet starts its sites between the cron's start and five hours later.
FLEET_HOURS = 5
WEEKS = 6
#: Each site and the interval its runs suggest (None: no suggestion, the 7-day default).
SITES = {
    "https://daily-a.example": 1.0,
    "https://daily-b.example": 1.0,
    "https://two.example": 2.0,
    "https://three.example": 3.0,
    "https://weekly.example": 7.0,
    "https://default.example": None,
    "https://fortnight.example": 14.0,
    "https://month.example": 30.0,
}
_NO_ENTRIES = entries()[:0]  # a run need not keep URLs to be due


@pytest.fixture
def history(tmp_path):
    with History.open(tmp_path / "history.sqlite3") as opened:
        yield opened


def _save(history: History, site: str, started: datetime, minutes: float) -> None:
    run = replace(
        result(site, started=started, recheck_days=SITES[site]),
        finished_at=started + timedelta(minutes=minutes),
    )
    history.save_run(run, files=[], entries=_NO_ENTRIES, pages=[])


def _fleet(history: History, sites: list[str], fired: datetime, rng: random.Random) -> None:
    """One night's fleet: the sites in a random order, started one after another from a
    few seconds after the cron fired to five hours later, each taking minutes."""
    rng.shuffle(sites)
    span = timedelta(hours=FLEET_HOURS)
    for position, site in enumerate(sites):
        share = position / (len(sites) - 1) if len(sites) > 1 else 0.0
        started = fired + timedelta(seconds=3) + (span - timedelta(seconds=3)) * share
        _save(history, site, started, minutes=rng.uniform(1, 25))


def _fired(day: int, drift: str, rng: random.Random) -> datetime:
    cron = MIDNIGHT + day * DAY + CRON
    if drift == "early":
        return cron - timedelta(seconds=30)  # a cron that fires half a minute early
    if drift == "jitter":
        return cron + timedelta(seconds=rng.uniform(-30, 90))
    return cron


@pytest.mark.parametrize("drift", ["exact", "early", "jitter"])
def test_a_daily_cron_picks_every_site_on_its_due_day(history, drift):
    rng = random.Random(7)
    first = _fired(0, drift, rng)
    _fleet(history, list(SITES), first, rng)  # the first audit of the crawl list
    expected = {site: round(days or 7.0) for site, days in SITES.items()}
    picked: dict[str, list[int]] = {site: [0] for site in SITES}

    for day in range(1, 7 * WEEKS + 1):
        fired = _fired(day, drift, rng)
        due = [record.origin for record in history.due_sites(fired)]
        assert len(due) == len(set(due))
        late = sorted(site for site, on in expected.items() if on < day)
        assert not late, f"day {day}: a day late for {late}"
        assert sorted(due) == sorted(s for s, on in expected.items() if on == day), day
        _fleet(history, due, fired, rng)
        for site in due:
            picked[site].append(day)
            expected[site] = day + round(SITES[site] or 7.0)
        # A second run the same day: six hours on, nothing is due yet; twelve hours on,
        # tomorrow night's sites may be (the nearer run), never one audited today.
        assert history.due_sites(fired + timedelta(hours=6)) == [], day
        again = {record.origin for record in history.due_sites(fired + timedelta(hours=12))}
        assert not again & set(due), day

    for site, days in picked.items():
        interval = round(SITES[site] or 7.0)
        assert days == list(range(0, 7 * WEEKS + 1, interval)), site
    assert sum(len(days) for days in picked.values()) == len(history.runs())


def test_a_daily_site_audited_at_two_is_not_due_again_at_eight(history):
    two = MIDNIGHT + CRON
    _save(history, "https://daily-a.example", two, minutes=3)
    for hours in (0, 6, 12, 17):
        assert history.due_sites(two + timedelta(hours=hours)) == [], hours
    (site,) = history.due_sites(two + DAY - timedelta(seconds=30))  # next night's early cron
    assert site.origin == "https://daily-a.example"


def test_a_site_the_fleet_reached_at_seven_is_due_at_next_weeks_two_oclock_cron(history):
    two = MIDNIGHT + CRON
    _save(history, "https://weekly.example", two + timedelta(hours=FLEET_HOURS), minutes=3)
    assert history.due_sites(two + 6 * DAY) == []  # the day before: not yet
    (site,) = history.due_sites(two + 7 * DAY)
    assert site.due_at == two + timedelta(hours=FLEET_HOURS) + 7 * DAY  # when it is due
