"""Faults as a night's fleet meets them, each with the real component killed: 24 loopback
sites run by ``auditor audit --sites FILE`` in a child process, the fault coming once 8
are done. PostgreSQL restarted (down 5 s): the fleet goes on, every site saved once.
PostgreSQL down past the reconnect window, or the Dask scheduler killed: the fleet stops
saying why (no traceback, exit 1), the summary counts what became of the sites, and
``--resume`` audits only the rest."""

from __future__ import annotations

import contextlib
import itertools
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
from auditor.fleet.work import LEASE_MARGIN
from auditor.history import History
from tests.fleet.servers import SlowServer, simulated, too_close
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


# A worker cut off: one worker process of the fleet's local cluster stopped (SIGSTOP) for
# longer than a host's lease, while the other carries on; eight sites on two host names
# (four ports each), so a host held by the stopped worker is wanted by the other one.
CUT_DELAY, CUT_TIMEOUT, CUT_PAUSE = 0.2, 2.0, 0.3
CUT_LEASE = CUT_TIMEOUT + LEASE_MARGIN  # auditor.fleet.work.fleet_lease with --timeout 2
CUT_FOR = CUT_LEASE + 3  # stopped past its lease, and a delay, and then some
CUT_QUICK = ["--json", "--delay", str(CUT_DELAY), "--sample", "4", "--timeout", str(CUT_TIMEOUT),
             "--concurrency", "4"]  # fmt: skip


@pytest.fixture
def shared_hosts(tmp_path, monkeypatch) -> Iterator[tuple[list[SlowServer], Path]]:
    monkeypatch.chdir(tmp_path)  # reports land in ./reports
    found = [
        SlowServer(simulated("accurate-jsonld", n), host=f"127.0.32.{1 + n % 2}", pause=CUT_PAUSE)
        for n in range(6)
    ]
    listing = tmp_path / "crawl-list.txt"
    listing.write_text("".join(f"{s.origin}\n" for s in found))
    yield found, listing
    for server in found:
        server.close()


def _worker_processes(owner: int, count: int, timeout: float = 60) -> list[int]:
    """The pids of the ``count`` Dask worker processes the fleet ``owner`` started: those
    of its children and grandchildren (forked by its forkserver) holding a lock on a
    worker's scratch directory (not its other children, a pool of its own)."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        children = _children_of(owner)
        below = children + [pid for child in children for pid in _children_of(child)]
        found = [pid for pid in below if _is_dask_worker(pid)]
        if len(found) == count:
            return found
        time.sleep(0.2)
    raise AssertionError(f"no {count} worker processes under {owner}")


def _children_of(owner: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            if entry.name.isdigit():
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                found += [int(entry.name)] if ppid == owner else []
    return found


def _is_dask_worker(pid: int) -> bool:
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd).endswith(".dirlock"):
                    return True
    return False


def _sockets(pid: int) -> list[tuple[str, str]]:
    """The TCP sockets of ``pid``: (state, local address) as /proc/net/tcp has them (state
    0A is LISTEN, 01 ESTABLISHED; the address in hex, host:port)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes:
            found.append((fields[3], fields[1]))
    return found


def _holding_a_turn(pid: int, servers: list[SlowServer]) -> bool:
    """True while the worker ``pid`` waits for a page of one of ``servers``: it holds the
    host's turn (a connection of its, from a port the server is busy answering)."""
    busy = {port for server in servers for port in server.busy}
    mine = {int(local.rsplit(":", 1)[1], 16) for state, local in _sockets(pid) if state == "01"}
    return bool(busy & mine)


def _holds_table(pid: int, others: list[int]) -> bool:
    """True when the worker ``pid`` listens on more TCP ports than the others: the host
    table's own socket."""
    listening = {p: sum(state == "0A" for state, _ in _sockets(p)) for p in [pid, *others]}
    return listening[pid] > min(listening.values())


def _cut_off_worker(child: subprocess.Popen[str], servers: list[SlowServer]) -> int:
    """Once the fleet is under way, SIGSTOP a worker that does not hold the host table
    while it holds a host's turn (a page of its in flight); its pid."""
    workers = _worker_processes(child.pid, 2)
    ends = time.monotonic() + 60
    while time.monotonic() < ends:
        for pid in workers:
            others = [p for p in workers if p != pid]
            if _holding_a_turn(pid, servers) and not _holds_table(pid, others):
                os.kill(pid, signal.SIGSTOP)
                print(f"stopped worker {pid} (of {workers}) at {time.monotonic():.2f}")
                return pid
        time.sleep(0.02)
    raise AssertionError("no worker without the host table ran a site")


def _one_outcome_each(
    printed: list[dict],
    db: str,
    servers: list[SlowServer],  # type: ignore[type-arg]
) -> tuple[set[str], dict[str, str]]:
    """Every site printed once, saved once if it finished, never if it failed; the sites
    saved and the failures' codes."""
    assert sorted(line["site"] for line in printed) == sorted(s.origin for s in servers)
    failed = {line["site"]: line["failed"]["code"] for line in printed if line.get("failed")}
    saved = _runs_per_site(db)
    assert saved == {s.origin: 1 for s in servers if s.origin not in failed}
    return set(saved), failed


def _run_cut(
    listing: Path,
    db: str,
    servers: list[SlowServer],
    *extra: str,
    env: dict[str, str] | None = None,
    resume: bool,
) -> tuple[list[dict], str, float]:  # type: ignore[type-arg]
    """Run the fleet with one worker stopped for CUT_FOR seconds, then resumed (SIGCONT)
    or left stopped; what it printed, its stderr, and its wall time."""
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "auditor", "audit", "--sites", str(listing), "--db", db,
         *CUT_QUICK, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": PROJECT, **(env or {})},
    )  # fmt: skip
    _CHILDREN.append(child)
    cut = _cut_off_worker(child, servers)
    command = Path(f"/proc/{cut}/cmdline").read_bytes()
    try:
        if resume:
            time.sleep(CUT_FOR)
            os.kill(cut, signal.SIGCONT)
        out, err = child.communicate(timeout=120)
    finally:
        left = _kill_if_left(cut, command)
    print(f"stopped worker outlived its fleet: {left}; longest gaps: {_longest_gaps(servers)}")
    return [json.loads(line) for line in out.splitlines()], err, time.monotonic() - started


def _kill_if_left(pid: int, command: bytes) -> bool:
    """SIGKILL the worker ``pid`` if it outlived its fleet (the same process: its
    command line unchanged); whether it did."""
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/cmdline").read_bytes() == command:
            os.kill(pid, signal.SIGKILL)
            return True
    return False


def _longest_gaps(servers: list[SlowServer]) -> dict[str, float]:
    """Per host name, the longest quiet between two requests (a turn held by the stopped
    worker shows as about a lease)."""
    by_host: dict[str, list[float]] = {}
    for server in servers:
        by_host.setdefault(server.host, []).extend(r.at for r in server.log)
    return {
        host: round(max((b - a for a, b in itertools.pairwise(sorted(at))), default=0.0), 1)
        for host, at in by_host.items()
    }


@pytest.mark.parametrize("site_timeout", [None, "12"], ids=["carries-on", "time-spent"])
def test_a_worker_stopped_past_its_lease_then_resumed_keeps_every_host_polite(
    shared_hosts, tmp_path, site_timeout
):
    servers, listing = shared_hosts
    db = str(tmp_path / "history.sqlite3")
    extra = ["--site-timeout", site_timeout] if site_timeout else []
    printed, err, took = _run_cut(listing, db, servers, *extra, resume=True)
    print(f"fleet of {len(servers)} in {took:.1f} s; stderr: {err[-2000:]}")
    assert "Traceback" not in err, err
    _saved, failed = _one_outcome_each(printed, db, servers)
    if site_timeout:  # the sites of the stopped worker: their clock ran on meanwhile
        assert failed and set(failed.values()) == {"time-limit"}, failed
    else:  # they carry on where they were, asking for each turn again
        assert failed == {}
    assert too_close(servers, CUT_DELAY) == []


def test_a_worker_stopped_for_good_is_declared_dead_and_its_sites_run_elsewhere(
    shared_hosts, tmp_path
):
    servers, listing = shared_hosts
    db = str(tmp_path / "history.sqlite3")
    ttl = {"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "5s"}  # Dask's own setting
    printed, err, took = _run_cut(listing, db, servers, env=ttl, resume=False)
    print(f"fleet of {len(servers)} in {took:.1f} s; stderr: {err[-2000:]}")
    assert "Traceback" not in err, err
    _saved, failed = _one_outcome_each(printed, db, servers)
    assert failed == {}  # the dead worker's sites were run again by the other one
    assert too_close(servers, CUT_DELAY) == []
