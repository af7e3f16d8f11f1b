"""A site keeps its host's turn across its requests: the delay kept where the site runs,
one call to the table to take the host and one to give it back, never two requests to
one host closer than the delay, whichever site, thread or worker process asks."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest

from auditor.demo.server import SiteServer
from auditor.fleet.client import GatedHttpClient, TimeLimit
from auditor.fleet.gate import CHECK_EVERY, HostGate, HostTable
from auditor.http import HttpOptions, Response
from tests.fleet.servers import settled, simulated, too_close


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Counted:
    """A table that counts the calls made to it, by method."""

    def __init__(self, table: HostTable) -> None:
        self.table = table
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.table, name)

        def counted(*args: object) -> object:
            self.calls[name] = self.calls.get(name, 0) + 1
            return method(*args)

        return counted


def _request(gate: HostGate, clock: Clock, host: str, takes: float, status: int = 200) -> float:
    """One request of ``takes`` seconds in the gate's turn; when it started."""
    assert gate.wait_turn(host)
    started = clock.now
    clock.now += takes
    gate.finished(host, status, page=True)
    return started


def test_a_site_takes_its_host_once_and_keeps_the_delay_itself():
    clock = Clock()
    table = Counted(HostTable(1.0, clock=clock))
    gate = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    starts = [_request(gate, clock, "h", 0.25) for _ in range(4)]
    gate.let_go()
    assert [round(b - a, 6) for a, b in itertools.pairwise(starts)] == [1.25] * 3
    assert table.calls == {"hold": 1, "end": 1}
    assert table.table.pages_fetched() == 4
    assert table.table.ask("h", "b", 30) == pytest.approx(1.0)  # the delay from a's last end


def test_an_overloaded_answer_slows_the_held_host_down_and_the_table_learns_it():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    gate = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    _request(gate, clock, "h", 0.0, status=503)
    assert gate.delay_for("h") == 2.0
    started = _request(gate, clock, "h", 0.0)
    assert started == pytest.approx(102.0) and gate.delay_for("h") == 1.0
    _request(gate, clock, "h", 0.0, status=429)
    gate.let_go()
    assert table.delay_for("h") == 2.0
    assert table.ask("h", "b", 30) == pytest.approx(2.0)


def test_a_crawl_delay_read_while_the_turn_is_kept_holds_at_once_and_for_every_site():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    gate = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    first = _request(gate, clock, "h", 0.5)  # robots.txt
    gate.honour_crawl_delay("h", 4.0)
    assert _request(gate, clock, "h", 0.5) == pytest.approx(first + 0.5 + 4.0)
    gate.let_go()
    assert table.delay_for("h") == 4.0
    assert table.ask("h", "b", 30) == pytest.approx(4.0)


def test_a_holder_that_hears_someone_waits_gives_the_host_back_and_queues_behind():
    clock = Clock()
    table = HostTable(0.5, clock=clock)
    a = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    _request(a, clock, "h", 0.1)
    assert table.ask("h", "b", 30) > 0  # b waits, and asks again in time
    clock.now += CHECK_EVERY
    assert table.ask("h", "b", 30) > 0
    last_end = clock.now  # (a's last request ended long ago: b may start at once)
    granted = threading.Event()

    def sleep(seconds: float) -> None:  # b asks again while a sleeps: its turn, its request
        clock.now += seconds
        if not granted.is_set():
            assert table.ask("h", "b", 30) == 0
            granted.set()
            clock.now += 0.1
            table.done("h", "b", 200)

    a._sleep = sleep
    assert a.wait_turn("h")  # a heard that b waits: b went first, then a
    assert granted.is_set() and clock.now >= last_end + 0.1 + 0.5
    assert a.handed_over == 1


def test_a_worker_killed_holding_a_host_blocks_it_no_longer_than_its_lease():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    a = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    granted = clock.now
    _request(a, clock, "h", 0.5)
    _request(a, clock, "h", 0.5)  # then a's worker dies: no end, no renewal
    waits = 0.0
    while (wait := table.ask("h", "b", 30)) > 0:
        waits += wait
        clock.now += wait
    assert clock.now >= granted + 30 + 1.0  # the lease lapsed, then the delay
    assert clock.now <= granted + 30 + 1.0 + 1.0  # and no longer (b polls each delay)


def test_a_renewal_comes_before_the_lease_would_run_short():
    """Held longer than CHECK_EVERY, the turn is renewed (one call), then kept."""
    clock = Clock()
    table = Counted(HostTable(0.2, clock=clock))
    gate = HostGate(table, "a", lease=30, clock=clock, sleep=clock.sleep)
    while clock.now < 100 + 3 * CHECK_EVERY:
        _request(gate, clock, "h", 0.3)
        assert gate.holds("h", 20.0)
    gate.let_go()
    assert table.calls == {"hold": 1, "renew": 3, "end": 1}


def test_two_sites_on_one_host_two_ports_take_turns_politely():
    """Threads with their own gates, one table, a short CHECK_EVERY: both sites' requests
    get through, the host handed over between them, never two closer than the delay."""
    delay = 0.05
    table = HostTable(delay)
    servers = [SiteServer(simulated("accurate-jsonld", n), host="127.0.9.21") for n in (1, 2)]
    try:
        gates = [HostGate(table, f"site-{n}", lease=30, check_every=0.2) for n in (1, 2)]
        jobs = []
        for server, gate in zip(servers, gates, strict=True):
            client = GatedHttpClient(HttpOptions(timeout=5), gate, TimeLimit.starting_now(60))
            urls = [f"{server.origin}/pages/{i}" for i in range(12)]
            jobs.append(threading.Thread(target=_fetch_all, args=(client, gate, urls)))
        for job in jobs:
            job.start()
        for job in jobs:
            job.join()
        settled(servers)
        assert [len(s.log) for s in servers] == [12, 12]
        assert too_close(servers, delay) == []
        assert sum(g.handed_over for g in gates) >= 1
        ends = sorted((entry.at, n) for n, s in enumerate(servers) for entry in s.log)
        assert len({n for _, n in ends[:12]}) == 2  # interleaved, not one site then the other
    finally:
        for server in servers:
            server.close()


def _fetch_all(client: GatedHttpClient, gate: HostGate, urls: list[str]) -> None:
    with client:
        for url in urls:
            result = client.get(url)
            assert isinstance(result, Response)
            b"".join(result.body)
    gate.let_go()


def test_two_sites_on_one_host_in_two_worker_processes_hand_it_over_politely(cluster_client):
    """Each site on a worker process of its own, one host (two ports), each site longer
    than CHECK_EVERY: the host goes from one to the other and back, never two requests
    closer than the delay."""
    from auditor.audit import AuditBundle, AuditOptions, Previous
    from auditor.fleet.cluster import start_gate
    from auditor.fleet.runners import run_on_worker
    from auditor.fleet.work import SiteTask
    from auditor.http import PAGE_ACCEPT
    from auditor.sampler import SampleOptions
    from auditor.walker import WalkOptions

    delay = 0.4
    options = AuditOptions(
        walk=WalkOptions(http=HttpOptions(timeout=5)),
        sample=SampleOptions(
            sample=16, delay=delay, http=HttpOptions(timeout=5, retries=0, accept=PAGE_ACCEPT)
        ),
        seed=7,
    )
    servers = [SiteServer(simulated("accurate-jsonld", n), host="127.0.9.22") for n in (1, 2)]
    ref, alive = start_gate(cluster_client, delay)
    try:
        workers = sorted(cluster_client.nthreads())
        futures = [
            cluster_client.submit(
                run_on_worker,
                SiteTask(s.origin, s.origin, Previous(), options, 120.0),
                ref,
                workers=[worker],
                allow_other_workers=False,
                pure=False,
            )
            for s, worker in zip(servers, workers, strict=True)
        ]
        outcomes = [f.result(timeout=120) for f in futures]
        assert all(isinstance(o, AuditBundle) for o in outcomes), outcomes
        settled(servers)
        assert too_close(servers, delay) == []
        order = [n for _, n in sorted((r.at, n) for n, s in enumerate(servers) for r in s.log)]
        switches = sum(a != b for a, b in itertools.pairwise(order))
        assert switches >= 2, [len(s.log) for s in servers]  # one, the other, the first again
    finally:
        alive.release()
        for server in servers:
            server.close()


def _hold_and_die(line: object, origin: str, lease: float, ready: Any) -> None:
    """In a process of its own: take the host's turn over the table's socket, make one
    request on it, say so, and wait to be killed (the turn still kept)."""
    from auditor.fleet.channel import DirectTable

    gate = HostGate(DirectTable(line, 5.0), "doomed", lease=lease)  # type: ignore[arg-type]
    client = GatedHttpClient(HttpOptions(timeout=1), gate, TimeLimit.starting_now(60))
    response = client.get(origin + "/robots.txt")
    assert isinstance(response, Response)
    response.close()
    ready.set()
    time.sleep(60)


def test_a_worker_process_killed_keeping_a_turn_blocks_the_host_no_longer_than_its_lease():
    import multiprocessing
    import os
    import signal

    from auditor.fleet.channel import TableServer

    delay, lease = 0.3, 2.0
    table = HostTable(delay)
    line = TableServer(table, "127.0.0.1")
    servers = [SiteServer(simulated("accurate-jsonld", n), host="127.0.9.23") for n in (1, 2)]
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    args = (line.line, servers[0].origin, lease, ready)
    doomed = context.Process(target=_hold_and_die, args=args)
    doomed.start()
    try:
        assert ready.wait(30)
        os.kill(doomed.pid or 0, signal.SIGKILL)
        doomed.join()
        gate = HostGate(table, "b", lease=lease)
        client = GatedHttpClient(HttpOptions(timeout=1), gate, TimeLimit.starting_now(60))
        response = client.get(servers[1].origin + "/robots.txt")
        assert isinstance(response, Response)
        response.close()
        gate.let_go()
        settled(servers)
        (killed,), (after,) = servers[0].log, servers[1].log
        assert after.at >= killed.at + lease + delay - 0.05  # the lease lapsed, then the delay
        assert after.at <= killed.at + lease + delay + 1.0  # and not much later
    finally:
        doomed.kill()
        line.close()
        for server in servers:
            server.close()
