"""A site without structured dates earns trust from the pages whose lastmod moved.

A simulated site of 200 pages, no dateModified, accurate lastmod, is audited twice a week
apart on a simulated clock (loopback server, real SQLite history). Between the runs the
content and the lastmod of 10 pages advance: 6 that the first run fetched last (outside
the panel an earlier ordering re-fetched: its first 24 pages), 4 that it never fetched;
then 20 new pages are published, newer than any (the newest stratum goes to them). The
second run must re-fetch the 6 first (the first panel page, then one in three:
``MOVED_PANEL_SHARE``) and fetch the 4, and the changes it then observes earn trust.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, PageState, SimulatedSite
from auditor.history import History
from auditor.sampler import SampleOptions
from auditor.sampler.choose import MOVED_PANEL_SHARE, PANEL_SHARE

WEEK = timedelta(days=7)
SAMPLE = 40
PAGES = 200
#: Pages fetched last on run 1 whose content and lastmod then advance; pages never fetched.
MOVED_FETCHED = 6
MOVED_NEVER = 4
#: Pages published after the edits: the newest lastmods of run 2, none of them moved.
PUBLISHED = 20


@pytest.fixture
def history(tmp_path):
    with History.open(tmp_path / "history.sqlite3") as opened:
        yield opened


def _pages(server: SiteServer, since: int = 0) -> list[str]:
    """The page paths requested from ``since`` on in the server's log, in order."""
    skip = ("/robots.txt", "/sitemap.xml")
    return [r.path for r in server.log[since:] if r.path not in skip]


def _edit(site: SimulatedSite, paths: list[str], start: datetime) -> None:
    """Each page's content changes, and with it its (accurate) lastmod."""
    for n, path in enumerate(paths):
        page = site.pages[path]
        page.modified = (start + timedelta(days=1, hours=n)).replace(microsecond=0)
        page.version += 1


def _publish(site: SimulatedSite, count: int, start: datetime) -> None:
    """``count`` new pages, each dated after every edit of :func:`_edit`."""
    for n in range(count):
        moment = (start + timedelta(days=2, hours=n)).replace(microsecond=0)
        path = f"/pages/{len(site.pages)}"
        site.pages[path] = PageState(path, "pages", moment, moment)


def _site(start: datetime) -> SimulatedSite:
    pages = {"pages": BEHAVIOURS["accurate-no-structured"]}
    return SimulatedSite("moved", pages, pages_per_section=PAGES, seed=3, clock=start)


@pytest.mark.parametrize("sequential", [True, False])
def test_moved_pages_are_fetched_first_and_their_changes_earn_trust(history, sequential):
    start = datetime.now(UTC) - WEEK
    clock, site = SimulatedClock(start), _site(start)
    sample = SampleOptions(sample=SAMPLE, delay=0.0, sequential=sequential)
    options = AuditOptions(sample=sample, seed=7, clock=clock.now)
    with SiteServer(site, clock.now) as server:
        first = audit_site(server.origin, history, options)
        fetched = _pages(server)
        assert first.verdict == "inconclusive" and fetched == list(dict.fromkeys(fetched))
        assert len(fetched) == SAMPLE  # nothing to compare with: the whole budget
        moved = fetched[-MOVED_FETCHED:]  # fetched last: outside the first panel positions
        assert not set(moved) & set(fetched[: int(SAMPLE * PANEL_SHARE)])
        never = [p for p in site.pages if p not in fetched][::37][:MOVED_NEVER]
        _edit(site, [*moved, *never], start)
        _publish(site, PUBLISHED, start)
        clock.advance(WEEK)
        mark = len(server.log)
        second = audit_site(server.origin, history, options)
        requested = _pages(server, mark)

    again = [p for p in requested if p in fetched]
    assert [p for p in again if p in moved] == moved  # in their run-1 order...
    spread = [round(i / MOVED_PANEL_SHARE) for i in range(MOVED_FETCHED)]
    assert [again.index(p) for p in moved] == spread  # ...the first, then one in three
    assert set(never) <= set(requested)  # fetched now, to be compared next time
    changes = second.changes
    assert changes is not None
    assert (changes.changed, changes.lastmod_advanced, changes.both) == (6, 6, 6)
    assert changes.compared == len(again) >= 16  # 16 of 16 clear the bar (0.806)
    assert second.verdict == "trusted", second.reasons
    if sequential:
        assert second.sample.requested < SAMPLE  # decided before the budget ran out


def test_a_site_whose_lastmod_did_not_move_refetches_its_panel_as_before(history):
    start = datetime.now(UTC) - WEEK
    clock, site = SimulatedClock(start), _site(start)
    options = AuditOptions(sample=SampleOptions(sample=SAMPLE, delay=0.0), seed=7, clock=clock.now)
    with SiteServer(site, clock.now) as server:
        audit_site(server.origin, history, options)
        fetched = _pages(server)
        clock.advance(WEEK)
        mark = len(server.log)
        second = audit_site(server.origin, history, options)
        requested = _pages(server, mark)

    again = [p for p in requested if p in fetched]
    assert again == fetched[: int(SAMPLE * PANEL_SHARE)]  # the panel in run 1's order
    assert len(requested) == SAMPLE and second.verdict == "inconclusive"
    assert second.changes is not None and second.changes.changed == 0
