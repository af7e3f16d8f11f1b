"""Faults as a night's fleet meets them, each with the real component killed: 24 loopback
sites run by ``auditor audit --sites FILE`` in a child process, the fault coming once 8
are done. PostgreSQL restarted (down 5 s): the fleet goes on, every site saved once.
PostgreSQL down past the reconnect window, or the Dask scheduler killed: the fleet stops
saying why (no traceback, exit 1), the summary counts what became of the sites, and
``--resume`` audits only the rest."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.demo.server import SiteServer
from auditor.history import History
from tests.fleet.servers import simulated
from tests.history.conftest import WRITER
from tests.pgserver import PostgresServer, running_server

PROJECT = str(Path(__file__).resolve().parents[2])
SITES, FAULT_AFTER = 24, 8
QUICK = ["--json", "--delay", "0.2", "--sample", "4", "--timeout", "2", "--concurrency", "4"]


@pytest.fixture(scope="module")
def sites() -> Iterator[list[SiteServer]]:
    found = [SiteServer(simulated("no-lastmod", n), host=f"127.0.31.{n}") for n in range(1, 25)]
    yield found
    for server in found:
        server.close()


@pytest.fixture
def crawl_file(tmp_path, sites, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    listing = tmp_path / "crawl-list.txt"
    listing.write_text("".join(f"{s.origin}\n" for s in sites))
    return listing


@pytest.fixture(scope="module")
def own_pg() -> Iterator[PostgresServer]:
    """A server of this module's own, to restart (the session's is shared)."""
    with running_server() as server:
        yield server


@pytest.fixture(params=("sqlite", "postgresql"))
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite3")
    return str(request.getfixturevalue("own_pg").new_database(WRITER))


#: Every fleet child of the running test: ended and its pipes closed at the test's end,
#: whatever the test did with it (a child left running warns in a later test).
_CHILDREN: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _children_ended() -> Iterator[None]:
    yield
    while _CHILDREN:
        child = _CHILDREN.pop()
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=30)


def _audit(crawl_file: Path, db: str, *extra: str) -> subprocess.Popen[str]:
    child = _started(crawl_file, db, *extra)
    _CHILDREN.append(child)
    return child


def _started(crawl_file: Path, db: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "auditor", "audit", "--sites", str(crawl_file), "--db", db,
         *QUICK, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PROJECT},
    )  # fmt: skip


def _with_fault(child: subprocess.Popen[str], fault, timeout: float = 120):  # type: ignore[no-untyped-def]
    """Read the child's lines; after FAULT_AFTER, call ``fault()``; then the rest. The
    sites printed, stderr, and the seconds from the fault to the child's end."""
    assert child.stdout is not None
    lines = [child.stdout.readline() for _ in range(FAULT_AFTER)]
    fault()
    at = time.monotonic()
    rest, err = child.communicate(timeout=timeout)
    took = time.monotonic() - at
    printed = [json.loads(line)["site"] for line in lines + rest.splitlines() if line.strip()]
    return printed, err, took


def _runs_per_site(db: str) -> dict[str, int]:
    with History.open(db) as history:
        counts: dict[str, int] = {}
        for run in history.runs():
            counts[run.site] = counts.get(run.site, 0) + 1
        return counts


def _json_summary(err: str) -> dict:  # type: ignore[type-arg]
    summary: dict = json.loads(err.strip().splitlines()[-1])["summary"]  # type: ignore[type-arg]
    return summary


def test_postgresql_restarted_mid_fleet_the_fleet_goes_on_and_saves_each_site_once(
    own_pg, crawl_file, sites
):
    db = own_pg.new_database(WRITER)
    child = _audit(crawl_file, db)
    restart = threading.Timer(5.0, own_pg.resume)

    def restart_the_server() -> None:
        own_pg.halt()  # every session ended: "terminating connection due to administrator..."
        restart.start()

    try:
        printed, err, took = _with_fault(child, restart_the_server)
    finally:
        restart.join()
    print(f"fleet end {took:.1f} s after the restart began")
    assert child.returncode == 0, err
    assert sorted(printed) == sorted(s.origin for s in sites)
    assert _runs_per_site(db) == {s.origin: 1 for s in sites}  # none lost, none twice
    assert "connected again after" in err and "Traceback" not in err
    assert _json_summary(err)["finished"] == SITES


def test_postgresql_down_past_the_window_stops_the_fleet_saying_why_and_resume_finishes(
    own_pg, crawl_file, sites
):
    db = own_pg.new_database(WRITER)
    child = _audit(crawl_file, db, "--db-reconnect", "3")
    try:
        printed, err, took = _with_fault(child, own_pg.halt)
    finally:
        own_pg.resume()
    assert child.returncode == 1, err
    assert took < 3 + 15, took  # the window, and the child's way out
    assert "auditor: the fleet stopped early:" in err and "within 3 s" in err
    assert "Traceback" not in err
    saved = _runs_per_site(db)
    assert set(printed) == set(saved) and all(n == 1 for n in saved.values())
    summary = _json_summary(err)
    assert summary["finished"] == len(saved) and summary["stopped"]
    assert sum(summary[k] for k in ("finished", "failed", "in_flight", "not_started")) == SITES

    _resumed_finishes(crawl_file, db, sites, saved)


def _resumed_finishes(crawl_file: Path, db: str, sites: list[SiteServer], saved: dict) -> None:  # type: ignore[type-arg]
    """``--resume`` audits only the sites without a run of the fleet: each site once."""
    with History.open(db) as history:
        assert set(history.never_audited()) == {s.origin for s in sites} - set(saved)
    again = _audit(crawl_file, db, "--resume")
    out, err = again.communicate(timeout=180)
    assert again.returncode == 0, err
    assert "resuming fleet 1" in err
    assert sorted(json.loads(line)["site"] for line in out.splitlines()) == sorted(
        {s.origin for s in sites} - set(saved)
    )
    assert _runs_per_site(db) == {s.origin: 1 for s in sites}
    assert _json_summary(err)["done_before"] == len(saved)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def dask_cluster() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``dask scheduler`` process and a ``dask worker`` process (2 x 2 threads)."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    port = address.rsplit(":", 1)[1]
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", port, "--dashboard-address", "127.0.0.1:0"], **quiet, start_new_session=True,
    )  # fmt: skip
    workers = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "2",
         "--nthreads", "2", "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"],
        **quiet, start_new_session=True, env={**os.environ, "PYTHONPATH": PROJECT},
    )  # fmt: skip
    try:
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, scheduler
    finally:
        for process in (scheduler, workers):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def test_the_dask_scheduler_killed_mid_fleet_stops_it_saying_why_and_resume_finishes(
    dask_cluster, crawl_file, db, sites
):
    address, scheduler = dask_cluster
    child = _audit(crawl_file, db, "--cluster", address)
    printed, err, took = _with_fault(child, lambda: os.killpg(scheduler.pid, signal.SIGKILL))
    assert child.returncode == 1, err
    assert took < 15, took  # the next look at the cluster, and the client's goodbye
    assert "auditor: the fleet stopped early: lost the Dask scheduler" in err
    assert "Traceback" not in err and "FuturesCancelledError" not in err, err
    saved = _runs_per_site(db)
    assert set(printed) == set(saved) and all(n == 1 for n in saved.values())
    summary = _json_summary(err)
    assert summary["finished"] == len(saved) >= FAULT_AFTER and summary["not_started"] > 0
    assert sum(summary[k] for k in ("finished", "failed", "in_flight", "not_started")) == SITES
    assert "never started" in err

    _resumed_finishes(crawl_file, db, sites, saved)  # on a local cluster this time
