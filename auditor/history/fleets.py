"""A fleet's plan in the history: its crawl list's sites, recorded when the fleet starts.

Two things need it. An interrupted fleet can be resumed (``auditor audit --sites FILE
--resume``): the sites of its plan that have no run of this fleet yet are audited, the
others not again. And ``reverify`` knows the sites of a crawl list that were never
audited (the history learns a site only when its first run is saved), so a first fleet
cut short is finished by the next cron.

Data model (migration ``0010-fleet-plans``): ``fleets`` has one row per fleet started
(``list_key``, the SHA-256 of its sorted site origins: the same crawl list in any order
or spelling is the same list; ``started_at``; ``sites``; ``ended_at`` once every site
had its turn). ``fleet_sites`` has one row per site of a plan, ``run_id`` set in the
transaction that saves the site's run, so a run and its mark are saved together or not
at all. Only the latest plan of each crawl list keeps its sites: a new plan of the same
list drops the earlier ones' rows (a nightly fleet of 100,000 sites keeps 100,000 rows,
not a year of them). ``runs.run_key`` (unique) makes a save idempotent: a save retried
after a lost connection finds the run its first attempt committed.

Touches: the database.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from auditor.history.backend import Database
from auditor.history.records import instant, instant_text

__all__ = ["FLEET_PLANS", "FleetPlan", "end_fleet", "list_key", "never_audited", "plan_fleet"]

#: Migration 0010-fleet-plans.
FLEET_PLANS = (
    "ALTER TABLE runs ADD COLUMN run_key TEXT",
    "CREATE UNIQUE INDEX runs_by_key ON runs(run_key)",
    """CREATE TABLE fleets (
        id INTEGER PRIMARY KEY,
        list_key TEXT NOT NULL,
        started_at TEXT NOT NULL,
        sites INTEGER NOT NULL,
        ended_at TEXT)""",
    "CREATE INDEX fleets_by_list ON fleets(list_key, id)",
    """CREATE TABLE fleet_sites (
        fleet_id INTEGER NOT NULL REFERENCES fleets(id) ON DELETE CASCADE,
        origin TEXT NOT NULL,
        run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        PRIMARY KEY (fleet_id, origin))""",
)


@dataclass(frozen=True)
class FleetPlan:
    """A fleet as the history records it: new, or resumed with what is left of it."""

    fleet_id: int
    started_at: datetime
    total: int  # the crawl list's sites
    todo: tuple[str, ...]  # the sites to audit now, in the crawl list's order
    resumed: bool = False

    @property
    def done_before(self) -> int:
        """Sites of the plan saved by an earlier, interrupted session of the fleet."""
        return self.total - len(self.todo)


def list_key(sites: Sequence[str]) -> str:
    """The crawl list's identity: SHA-256 of its site origins, sorted, one a line."""
    return hashlib.sha256("\n".join(sorted(set(sites))).encode()).hexdigest()


def plan_fleet(db: Database, sites: Sequence[str], now: datetime, *, resume: bool) -> FleetPlan:
    """Record a fleet of ``sites`` (origins) starting ``now``; with ``resume``, take up
    the latest fleet of the same crawl list instead if it did not end (only its sites
    without a run of it are to do). One write transaction."""
    key = list_key(sites)
    with db.write():
        latest = db.rows(
            "SELECT id, started_at, ended_at FROM fleets WHERE list_key = ? ORDER BY id DESC"
            " LIMIT 1",
            (key,),
        )
        if resume and latest and latest[0][2] is None:
            fleet_id = int(latest[0][0])
            saved = db.rows(
                "SELECT origin FROM fleet_sites WHERE fleet_id = ? AND run_id IS NOT NULL",
                (fleet_id,),
            )
            done = {str(origin) for (origin,) in saved}
            todo = tuple(s for s in sites if s not in done)
            return FleetPlan(fleet_id, instant(latest[0][1]), len(sites), todo, resumed=True)
        fleet_id = int(db.rows("SELECT coalesce(max(id), 0) + 1 FROM fleets")[0][0])
        db.execute(
            "INSERT INTO fleets (id, list_key, started_at, sites) VALUES (?, ?, ?, ?)",
            (fleet_id, key, instant_text(now), len(sites)),
        )
        db.execute(
            "DELETE FROM fleet_sites WHERE fleet_id IN (SELECT id FROM fleets WHERE list_key = ?"
            " AND id < ?)",
            (key, fleet_id),
        )
        db.insert_rows("fleet_sites", ("fleet_id", "origin"), [(fleet_id, s) for s in sites])
    return FleetPlan(fleet_id, now, len(sites), tuple(sites))


def end_fleet(db: Database, fleet_id: int, now: datetime) -> None:
    """Mark the fleet ended: every site of it had its turn (a resume starts a new one)."""
    with db.write():
        db.execute("UPDATE fleets SET ended_at = ? WHERE id = ?", (instant_text(now), fleet_id))


def mark_run(db: Database, fleet_id: int, origin: str, run_id: int) -> None:
    """Inside a save's transaction: the site's run of the fleet is ``run_id``."""
    db.execute(
        "UPDATE fleet_sites SET run_id = ? WHERE fleet_id = ? AND origin = ?",
        (run_id, fleet_id, origin),
    )


def never_audited(db: Database) -> list[str]:
    """The sites of the latest plan of each crawl list that have no run at all, by
    origin (code point order)."""
    rows = db.rows(
        "SELECT DISTINCT f.origin FROM fleet_sites f WHERE NOT EXISTS ("
        " SELECT 1 FROM sites s JOIN runs r ON r.site_id = s.id WHERE s.origin = f.origin)"
    )
    return sorted(str(origin) for (origin,) in rows)
