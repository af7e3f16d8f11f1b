"""The worker holding the fleet's host table dies mid-fleet (a real LocalCluster, the
worker killed): the table is started again, quiet for a lease and a delay, the sites
it left behind are sent again, and no host is asked twice closer than its delay; lost
too often, the remaining sites fail saying why."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import auditor.fleet.cluster as cluster_module
import auditor.fleet.engine as engine
from auditor.audit import AuditOptions
from auditor.demo.server import SiteServer
from auditor.fleet import FleetProgress, SiteFailure, audit_fleet
from auditor.history import History
from auditor.http import PAGE_ACCEPT, HttpOptions
from auditor.sampler import SampleOptions
from auditor.scorer.result import AuditResult
from auditor.walker import WalkOptions
from tests.fleet.servers import simulated, too_close

DELAY = 0.2
OPTIONS = AuditOptions(
    walk=WalkOptions(http=HttpOptions(timeout=2)),
    sample=SampleOptions(
        sample=8, delay=DELAY, http=HttpOptions(timeout=2, retries=0, accept=PAGE_ACCEPT)
    ),
    seed=11,
)


@pytest.fixture
def servers() -> Iterator[list[SiteServer]]:
    """Four sites on hosts of their own, two more on one shared host."""
    found = [
        SiteServer(simulated("accurate-jsonld", n), host=f"127.0.19.{n}") for n in (1, 2, 3, 4)
    ]
    found += [SiteServer(simulated("no-lastmod", n), host="127.0.19.5") for n in (5, 6)]
    yield found
    for server in found:
        server.close()


def _killer(client: object, killed: list[int]):  # type: ignore[no-untyped-def]
    """A progress callback that kills the worker holding the host table, once, when the
    first sites are in flight. The table is the fleet's own: a table of an earlier fleet on
    the same cluster may not be forgotten by the scheduler yet, so those are left out."""

    def tables() -> dict[str, str]:
        return {k: w for w, keys in client.has_what().items() for k in keys if "TableHost" in k}

    earlier = tables()

    def kill_the_table(progress: FleetProgress) -> None:
        if killed or not progress.in_flight:
            return
        (holder,) = {w for k, w in tables().items() if k not in earlier}
        pid = client.run(os.getpid, workers=[holder])[holder]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    return kill_the_table


def _fleet_losing_its_table(  # type: ignore[no-untyped-def]
    client, servers: list[SiteServer], database: Path, options: AuditOptions, concurrency: int
):
    """Audit ``servers`` as a fleet whose table's worker is killed once mid-fleet: the
    outcomes, the sites saved in the history, and the pids killed."""
    killed: list[int] = []
    with History.open(database) as history:
        outcomes = list(
            audit_fleet(
                [s.origin for s in servers],
                history,
                options,
                client=client,
                concurrency=concurrency,
                on_progress=_killer(client, killed),
            )
        )
        saved = {r.site for r in history.runs()}
    return outcomes, saved, killed


def test_the_table_is_started_again_and_politeness_holds_across(
    cluster_client, servers, tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(cluster_module, "GATE_CALL_TIMEOUT", 5.0)  # a dead table: 5 s, not 20
    database = tmp_path / "fleet.sqlite3"
    with caplog.at_level(logging.WARNING):
        outcomes, saved, killed = _fleet_losing_its_table(
            cluster_client, servers, database, OPTIONS, concurrency=4
        )

    assert killed  # the worker holding the table died mid-fleet
    assert "host table was lost" in caplog.text  # and the table was started again
    assert all(isinstance(o, AuditResult) for o in outcomes), outcomes
    assert {o.site for o in outcomes} == saved == {s.origin for s in servers}
    assert too_close(servers, DELAY) == []  # across both tables, the shared host too
    with sqlite3.connect(database) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_table_lost_too_often_fails_the_remaining_sites_saying_why(
    cluster_client, servers, tmp_path, monkeypatch
):
    monkeypatch.setattr(cluster_module, "GATE_CALL_TIMEOUT", 5.0)
    monkeypatch.setattr(engine, "MAX_GATE_RESTARTS", 0)  # the first loss is one too many
    quick = replace(OPTIONS, sample=replace(OPTIONS.sample, delay=1.0))
    outcomes, saved, killed = _fleet_losing_its_table(
        cluster_client, servers, tmp_path / "fleet.sqlite3", quick, concurrency=2
    )

    assert killed and len(outcomes) == len(servers)
    failed = [o for o in outcomes if isinstance(o, SiteFailure)]
    assert failed  # the sites sent after the loss, and those in flight then
    for failure in failed:
        assert failure.code == "worker-lost" and "host table was lost" in failure.detail
    assert saved == {o.site for o in outcomes if isinstance(o, AuditResult)}
    assert too_close(servers, 1.0) == []
