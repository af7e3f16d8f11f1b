"""audit_fleet on loopback fleets of simulated sites: the same verdicts as one by one,
politeness per host name across sites and worker processes, failures isolated."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest
from dask.utils import key_split
from distributed.diagnostics.plugin import SchedulerPlugin

from auditor.audit import AuditOptions, audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.fleet import SiteFailure, audit_fleet
from auditor.history import History
from auditor.http import PAGE_ACCEPT, HttpOptions
from auditor.sampler import SampleOptions
from auditor.scorer.result import AuditResult
from auditor.walker import WalkOptions
from tests.fleet.servers import DyingServer, HangingServer, settled, simulated, too_close

DELAY = 0.1
OPTIONS = AuditOptions(
    walk=WalkOptions(http=HttpOptions(timeout=5)),
    sample=SampleOptions(
        sample=8, delay=DELAY, http=HttpOptions(timeout=5, retries=0, accept=PAGE_ACCEPT)
    ),
    seed=7,
)


@pytest.fixture
def fleet() -> Iterator[list[SiteServer]]:
    """Three sites on hosts of their own, and two on one host (two ports)."""
    servers = [
        SiteServer(simulated("accurate-jsonld", 1), host="127.0.10.1"),
        SiteServer(simulated("generation-time", 2), host="127.0.10.2"),
        SiteServer(simulated("no-lastmod", 3), host="127.0.10.3"),
        SiteServer(simulated("accurate-date-microdata", 4), host="127.0.10.4"),
        SiteServer(simulated("bumping", 5), host="127.0.10.4"),
    ]
    yield servers
    for server in servers:
        server.close()


def test_a_fleet_gives_the_verdicts_of_one_by_one_and_keeps_every_host_polite(fleet, tmp_path):
    origins = [s.origin for s in fleet]
    with History.open(tmp_path / "alone.sqlite3") as history:
        alone = {o: audit_site(o, history, OPTIONS).verdict for o in origins}
    for server in fleet:
        server.log.clear()

    with History.open(tmp_path / "fleet.sqlite3") as history:
        outcomes = list(audit_fleet([*origins, origins[0] + "/"], history, OPTIONS, concurrency=3))
        saved = {r.site: r.verdict for r in history.runs()}

    assert all(isinstance(o, AuditResult) for o in outcomes), outcomes
    together = {o.site: o.verdict for o in outcomes}
    assert together == alone  # the repeat of the first site was audited once
    assert saved == together and sorted(o.run_id for o in outcomes) == [1, 2, 3, 4, 5]
    assert len(set(alone.values())) >= 3  # the fleet is varied enough to mean something
    settled(fleet)
    assert all(len(s.log) >= 4 for s in fleet)  # robots, sitemap, pages: all behind the gate
    assert sum(len(s.log) for s in fleet[3:]) >= 10  # the shared host was asked often
    assert too_close(fleet, DELAY) == []


def test_on_a_cluster_a_hanging_site_and_a_dying_one_do_not_stop_the_fleet(
    cluster_client, tmp_path
):
    release = threading.Event()
    good = SiteServer(simulated("accurate-jsonld", 1), host="127.0.11.1")
    shared = SiteServer(simulated("generation-time", 2), host="127.0.11.1")
    many = {f"part{i}": BEHAVIOURS["accurate-jsonld"] for i in range(12)}
    hanging = HangingServer(SimulatedSite("hanging", many, 2), host="127.0.11.2", release=release)
    dying = DyingServer(simulated("accurate-jsonld", 4), host="127.0.11.3", answers=5)
    servers = [good, shared, hanging, dying]
    short = replace(OPTIONS, walk=WalkOptions(http=HttpOptions(timeout=1, retries=0)))
    database = tmp_path / "fleet.sqlite3"
    try:
        with History.open(database) as history:
            outcomes = {
                o.site: o
                for o in audit_fleet(
                    [s.origin for s in servers],
                    history,
                    short,
                    client=cluster_client,
                    site_timeout=8,  # 12 sub-sitemaps that hang 1 s each: past it
                )
            }
            runs = {r.site for r in history.runs()}
    finally:
        release.set()
        for server in servers:
            server.close()

    assert set(outcomes) == {s.origin for s in servers}, outcomes
    failure = outcomes[hanging.origin]
    assert isinstance(failure, SiteFailure) and failure.code == "time-limit"
    assert "(8 s)" in failure.detail
    assert dying.died.is_set(), outcomes[dying.origin]
    for site in (good, shared):
        assert isinstance(outcomes[site.origin], AuditResult)
    assert hanging.origin not in runs  # nothing of a failed site is saved
    assert runs == {o for o, r in outcomes.items() if isinstance(r, AuditResult)}
    assert too_close([good, shared], DELAY) == []
    with sqlite3.connect(database) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


class _TasksStarted(SchedulerPlugin):
    """On the scheduler: the tasks it started, by name (``run_on_worker``, ``SiteRunner``)."""

    name = "tasks-started"

    def __init__(self) -> None:
        self.started: Counter[str] = Counter()

    def transition(self, key, start, finish, *args, **kwargs):  # type: ignore[no-untyped-def]
        if finish == "processing":
            self.started[key_split(key)] += 1


def _started(dask_scheduler):  # type: ignore[no-untyped-def]
    return dict(dask_scheduler.plugins[_TasksStarted.name].started)


def test_a_site_costs_the_scheduler_no_task(fleet, cluster_client, tmp_path, monkeypatch):
    """A Dask task a site cost 11 ms of CPU (the owner's, the scheduler's and the
    worker's): the sites go to one runner a worker, a task each for the whole fleet,
    as the host table is. The owner also looks every 10 ms here: no cost a look."""
    import auditor.fleet.engine as engine

    monkeypatch.setattr(engine, "_POLL", 0.01)
    cluster_client.register_plugin(_TasksStarted())
    try:
        with History.open(tmp_path / "h.sqlite3") as history:
            outcomes = list(
                audit_fleet([s.origin for s in fleet], history, OPTIONS, client=cluster_client)
            )
        started = cluster_client.run_on_scheduler(_started)
    finally:
        cluster_client.unregister_scheduler_plugin(_TasksStarted.name)
    assert all(isinstance(o, AuditResult) for o in outcomes), outcomes
    assert len(outcomes) == len(fleet)
    assert started == {"TableHost": 1, "SiteRunner": len(cluster_client.nthreads())}, started


def test_a_site_with_a_large_previous_inventory_reaches_its_worker(cluster_client, tmp_path):
    servers = [SiteServer(simulated("accurate-jsonld", n), host=f"127.0.15.{n}") for n in (1, 2)]
    quick = replace(OPTIONS, sample=replace(OPTIONS.sample, delay=0.0))
    try:
        with History.open(tmp_path / "h.sqlite3") as history:
            for server in servers:
                audit_site(server.origin, history, quick)
            again = list(
                audit_fleet([s.origin for s in servers], history, quick, client=cluster_client)
            )
    finally:
        for server in servers:
            server.close()
    assert all(isinstance(r, AuditResult) for r in again), again
    assert sorted(r.run_id for r in again) == [3, 4]
    assert all(r.changes is not None for r in again)  # the previous run reached the worker


def test_the_local_cluster_s_workers_run_without_dask_s_profiler():
    """It samples every thread's stack 100 times a second: a fleet's workers hold dozens."""
    import dask

    from auditor.fleet.cluster import local_client

    with local_client(4) as client:
        settings = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
        assert len(settings) == 2 and set(settings.values()) == {False}
    assert dask.config.get("distributed.worker.profile.enabled") is True  # here, unchanged


def _ticks(dask_worker):  # type: ignore[no-untyped-def]
    """On a worker: how often its event loop wakes for Dask's own looks."""
    pcs = dask_worker.periodic_callbacks
    return pcs["tick"].callback_time, pcs["monitor"].callback_time


def test_the_local_cluster_looks_at_itself_seldom_when_idle():
    """Dask's servers measure their event loop every 20 ms, their system every 0.5 s and
    a worker's memory every 0.1 s: 65 ms of CPU a second for an idle local cluster of two
    workers, beside a fleet whose sites mostly wait. Its own settings, here only."""
    import dask

    from auditor.fleet.cluster import local_client

    with local_client(4) as client:
        for tick, monitor in client.run(_ticks).values():
            assert tick >= 500 and monitor >= 1000  # milliseconds
        scheduler = client.cluster.scheduler  # type: ignore[union-attr]
        assert scheduler.periodic_callbacks["tick"].callback_time >= 500
        intervals = client.run(
            lambda: dask.config.get("distributed.worker.memory.monitor-interval")
        )
        assert set(intervals.values()) == {"500ms"}
    assert dask.config.get("distributed.admin.tick.interval") == "20ms"  # here, unchanged
