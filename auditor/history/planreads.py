"""What a plan on the stored walks reads of each site, read for many sites at a time:
each site's latest run and its result, its freshest inventory (a later plan walk's, else
the run's ``url_state``) and its robots.txt, in four statements for a batch of sites
where a site at a time took seven (on PostgreSQL a round trip each: 100,000 sites), and
its audit samples' fetches (the plan counts what the audits saw change) in a fifth.

The same values as :meth:`~auditor.history.History.latest_run`,
:meth:`~auditor.history.History.result`,
:meth:`~auditor.history.History.current_inventory_blob` and
:meth:`~auditor.history.History.stored_robots` give one site at a time.

Touches: the database.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.history.backend import Database
from auditor.history.records import RunRecord, instant
from auditor.history.robots import StoredRobots

__all__ = ["AUDIT_FETCHES", "BATCH_SITES", "AuditFetch", "Batched", "StoredSite", "audit_fetches",
           "stored_sites"]  # fmt: skip

#: Sites read together: a batch holds their inventories (some 10 KB a site compressed)
#: and results (about 2 KB) in memory, a few MB.
BATCH_SITES = 500

_LATEST = (
    "SELECT s.origin, s.id, r.id, r.started_at, r.finished_at, r.verdict, r.recheck_days,"
    " r.result FROM sites s JOIN runs r ON r.id = (SELECT l.id FROM runs l"
    " WHERE l.site_id = s.id ORDER BY l.started_at DESC, l.id DESC LIMIT 1)"
    " WHERE s.origin IN ({})"
)
_WALKS = "SELECT site_id, walked_at, data FROM plan_walks WHERE site_id IN ({})"
_STATES = "SELECT site_id, data FROM url_state WHERE site_id IN ({})"
_ROBOTS = "SELECT site_id, url, rule, detail, body, read_at FROM site_robots WHERE site_id IN ({})"
#: Each good fetch of the sites' audit samples (the plan's rate evidence from the audits).
AUDIT_FETCHES = (
    "SELECT r.site_id, p.loc, p.fetched_at, p.content_changed FROM pages p"
    " JOIN runs r ON r.id = p.run_id"
    " WHERE r.site_id IN ({}) AND p.status BETWEEN 200 AND 299 AND p.error IS NULL"
)
AuditFetch = tuple[str, datetime, bool | None]


@dataclass(frozen=True)
class StoredSite:
    """One audited site as a plan on its stored walk reads it: its id, its latest run
    and that run's result (None where none is stored), when its freshest inventory was
    walked and its ``url_state`` blob (None where none is kept), its robots.txt as kept
    (None where none is), and its audit samples' good fetches (:data:`AUDIT_FETCHES`)."""

    site_id: int
    latest: RunRecord
    result: dict[str, Any] | None
    walked_at: datetime
    inventory: bytes | None
    robots: StoredRobots | None
    audits: tuple[AuditFetch, ...] = ()


def audit_fetches(db: Database, site_ids: Sequence[int]) -> dict[int, list[AuditFetch]]:
    """Each good fetch of the sites' audit samples, every run, by site id: its URL, when,
    and whether its main content changed since the page's previous fetch (None: not
    compared)."""
    found: dict[int, list[AuditFetch]] = {}
    for site_id, loc, at, changed in db.rows(AUDIT_FETCHES.format(_marks(site_ids)), site_ids):
        found.setdefault(int(site_id), []).append(
            (str(loc), instant(at), None if changed is None else bool(changed))
        )
    return found


def stored_sites(db: Database, origins: Sequence[str]) -> dict[str, StoredSite]:
    """The :class:`StoredSite` of each of ``origins`` with a run, by origin (at most
    :data:`BATCH_SITES` of them at a time is what they are read for)."""
    if not origins:
        return {}
    latest = db.rows(_LATEST.format(_marks(origins)), tuple(origins))
    ids = [int(row[1]) for row in latest]
    if not ids:
        return {}
    marks = _marks(ids)
    walks = {int(i): (instant(at), bytes(b)) for i, at, b in db.rows(_WALKS.format(marks), ids)}
    states = {int(i): bytes(data) for i, data in db.rows(_STATES.format(marks), ids)}
    robots = {int(row[0]): _robots(row[1:]) for row in db.rows(_ROBOTS.format(marks), ids)}
    audits = audit_fetches(db, ids)
    found = {}
    for origin, site_id, run_id, started, finished, verdict, recheck, result in latest:
        run = RunRecord(run_id, origin, instant(started), instant(finished), verdict, recheck)
        walked_at, inventory = run.started_at, states.get(int(site_id))
        walk = walks.get(int(site_id))
        if walk is not None and walk[0] > run.started_at:  # a plan walked it since
            walked_at, inventory = walk
        stored = json.loads(result) if result is not None else None
        found[str(origin)] = StoredSite(int(site_id), run, stored, walked_at, inventory,
                                        robots.get(int(site_id)),
                                        tuple(audits.get(int(site_id), ())))  # fmt: skip
    return found


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def _robots(row: Sequence[Any]) -> StoredRobots:
    url, rule, detail, body, read_at = row
    text = bytes(body).decode("utf-8", "surrogatepass")
    return StoredRobots(str(url), str(rule), str(detail), text, instant(read_at))


class Batched:
    """What ``read`` gives of each of ``origins``, read :data:`BATCH_SITES` at a time as
    they are asked for (in ``origins``' order: a plan goes host by host)."""

    def __init__(
        self, read: Callable[[Sequence[str]], Mapping[str, StoredSite]], origins: Sequence[str]
    ) -> None:
        self._read, self._origins = read, origins
        self._place = {origin: i for i, origin in enumerate(origins)}
        self._asked: set[str] = set()
        self._batch: Mapping[str, StoredSite] = {}

    def of(self, origin: str) -> StoredSite | None:
        """``origin``'s reads (None: none), its batch read when it is first asked for."""
        if origin not in self._asked:
            start = self._place[origin]
            chunk = self._origins[start : start + BATCH_SITES]
            self._batch, self._asked = self._read(chunk), set(chunk)
        return self._batch.get(origin)
