"""The demo: simulated sites on 127.0.0.1, each audited twice with a change in between.

``auditor demo`` runs it: no network beyond loopback, reports and a fleet index
written under ``reports/demo/``. Each site lives on a simulated clock shared by its
server and its audits: the second run is :data:`DEMO_GAP` after the first in the
history, as a weekly re-verification would be, and lands at about the real time.

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, Behaviour, SimulatedSite
from auditor.errors import UsageError
from auditor.history import History
from auditor.report import DEMO_DIR, load_report_data, write_fleet_index, write_site_report
from auditor.sampler import SampleOptions

__all__ = ["DEMO_DIR", "DEMO_GAP", "DemoRow", "demo_sites", "fresh_demo_history", "run_demo"]

#: The demo's sites are local: no delay between requests is needed to be polite.
DEMO_OPTIONS = AuditOptions(sample=SampleOptions(sample=50, delay=0.0))
#: Simulated time between a demo site's two audits (the default re-verification interval).
DEMO_GAP = timedelta(days=7)
#: The demo's history carries this SQLite application id ("demo"): the demo replaces
#: a database only when it carries the mark, so a user's history is never deleted.
DEMO_APPLICATION_ID = 0x64656D6F


@dataclass(frozen=True)
class DemoRow:
    """One demo site: what it does, and what auditor said after each run."""

    name: str
    origin: str
    expected: str
    first: str
    second: str
    report: Path


def demo_sites(start: datetime | None = None) -> dict[str, SimulatedSite]:
    """Every behaviour as a site of its own, plus one mixing two behaviours; their
    virtual clocks at ``start`` (by default, in the past as :class:`SimulatedSite`'s)."""

    def site(name: str, sections: dict[str, Behaviour], seed: int) -> SimulatedSite:
        if start is None:
            return SimulatedSite(name, sections, seed=seed)
        return SimulatedSite(name, sections, seed=seed, clock=start)

    sites = {
        name: site(name, {"pages": behaviour}, i)
        for i, (name, behaviour) in enumerate(BEHAVIOURS.items())
    }
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    sites["mixed"] = site("mixed", sections, len(sites))
    return sites


def fresh_demo_history(folder: Path) -> Path:
    """An empty history for the demo in ``folder``, marked as the demo's own.

    The demo's sites get new ports each time, so each demo starts afresh; the
    previous demo history is replaced only when it carries the demo's mark. Any
    other file of that name (a user's history, anything else) is left untouched and
    the demo refuses to run there (:class:`UsageError`).
    """
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "history.sqlite3"
    if database.exists():
        if not _made_by_demo(database):
            raise UsageError(
                f"{database} exists and was not made by auditor demo: it is left untouched; "
                "give the demo a folder of its own with --out"
            )
        for stale in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
            stale.unlink(missing_ok=True)
    with sqlite3.connect(database) as conn:
        conn.execute(f"PRAGMA application_id = {DEMO_APPLICATION_ID}")
    conn.close()
    return database


def _made_by_demo(database: Path) -> bool:
    """True when ``database`` is an SQLite file carrying the demo's mark (read-only look)."""
    try:
        conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return bool(conn.execute("PRAGMA application_id").fetchone()[0] == DEMO_APPLICATION_ID)
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False


def run_demo(
    folder: Path = DEMO_DIR,
    *,
    on_row: Callable[[DemoRow], None] | None = None,
    db: str | None = None,
) -> tuple[list[DemoRow], Path]:
    """Run the demo; returns one row per site and the fleet index's path.

    ``db`` (a path or ``postgresql://`` URL) receives the demo's runs instead of a fresh
    history in ``folder``. Each site is a loopback origin on a port the system hands
    out, held until the demo ends, so no two sites of one demo share an origin; in a
    history that already holds an earlier demo, a site may by chance get an old port."""
    database = fresh_demo_history(folder) if db is None else db
    rows, slugs = [], {}
    start = datetime.now(UTC) - DEMO_GAP  # the second runs land at about the real time
    # Every site's server stays up until the demo ends: a server closed before the next
    # starts may hand its port on, and two sites would then share one origin.
    with History.open(database) as history, ExitStack() as servers:
        for name, site in demo_sites(start).items():
            clock = SimulatedClock(start)
            server = servers.enter_context(SiteServer(site, clock.now))
            # the same sample every time, on the site's clock
            options = replace(DEMO_OPTIONS, seed=site.seed, clock=clock.now)
            first = audit_site(server.origin, history, options)
            clock.advance(DEMO_GAP)
            site.tick(DEMO_GAP)
            second = audit_site(server.origin, history, options)
            report = write_site_report(load_report_data(history, server.origin), folder / name)
            slugs[server.origin] = name
            expected = BEHAVIOURS[name].says if name in BEHAVIOURS else "partial"
            row = DemoRow(name, server.origin, expected, first.verdict, second.verdict, report)
            rows.append(row)
            if on_row is not None:
                on_row(row)
        index = write_fleet_index(history, folder, slugs)
    return rows, index
