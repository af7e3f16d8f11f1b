"""The host gate: one request at a time per host name, delays added up, fair, and safe
against holders that vanish."""

from __future__ import annotations

import threading
import time
import warnings

import pytest

from auditor.demo.loopback import LoopbackHTTPServer, send
from auditor.demo.server import SiteServer
from auditor.fleet.client import GatedHttpClient, TimeLimit
from auditor.fleet.gate import FORGET_EVERY, STALE_AFTER, HostGate, HostTable
from auditor.fleet.work import turn_lease
from auditor.http import FetchFailure, HttpOptions, Response
from auditor.sampler.pacing import MAX_DELAY
from tests.fleet.servers import STAMP_SLACK, settled, simulated, too_close


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_holder_at_a_time_and_the_delay_counts_from_the_end():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    assert table.ask("h", "a", lease=30) == 0
    wait = table.ask("h", "b", lease=30)
    assert wait > 0  # busy: b waits
    clock.now += 5  # a's request takes 5 s
    table.done("h", "a", 200)
    assert table.ask("h", "b", lease=30) == pytest.approx(1.0)  # the delay from a's end
    clock.now += 1.0
    assert table.ask("h", "b", lease=30) == 0


def test_waiters_are_served_in_the_order_they_asked():
    clock = Clock()
    table = HostTable(0.5, clock=clock)
    assert table.ask("h", "a", 30) == 0
    table.ask("h", "b", 30)
    table.ask("h", "c", 30)
    table.done("h", "a", 200)
    clock.now += 0.5
    assert table.ask("h", "c", 30) > 0  # c came later than b
    assert table.ask("h", "b", 30) == 0


def test_a_lapsed_lease_and_a_silent_waiter_do_not_block_the_host():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    assert table.ask("h", "gone", lease=10) == 0  # then its worker dies
    table.ask("h", "silent", 10)  # asks once, never again
    clock.now += 10 + STALE_AFTER + 1.5
    assert table.ask("h", "b", 10) == 0  # lease lapsed, silent waiter dropped


def test_crawl_delay_and_overload_hold_for_every_site_on_the_host():
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    table.honour_crawl_delay("h", 4.0)
    assert table.delay_for("h") == 4.0
    assert table.ask("h", "a", 30) == 0
    table.done("h", "a", 503, retry_after=20.0)
    assert table.delay_for("h") == 20.0
    assert table.ask("h", "b", 30) == pytest.approx(20.0)
    table.done("h", "b", 200)  # (b never held it: the answer still counts)
    assert table.delay_for("h") == 10.0
    table.done("h", "b", 200)
    assert table.delay_for("h") == 5.0
    table.done("h", "b", 200)
    assert table.delay_for("h") == 4.0  # never below the Crawl-delay
    table.slow_down("h", 10_000)
    assert table.delay_for("h") == MAX_DELAY


def test_the_table_forgets_hosts_with_nothing_to_remember():
    """A fleet of many sites does not keep every host it ever saw: an idle host past its
    delay is dropped, unless it has a Crawl-delay, a back-off, a turn held or a waiter."""
    clock = Clock()
    table = HostTable(1.0, clock=clock)
    for n in range(100):
        assert table.ask(f"done-{n}", "a", 30) == 0
        table.done(f"done-{n}", "a", 200)
    table.honour_crawl_delay("crawl-delay", 5.0)
    table.ask("overloaded", "a", 30)
    table.done("overloaded", "a", 429)
    assert table.ask("held", "a", lease=10 * FORGET_EVERY) == 0
    table.ask("held", "waiter", 30)
    assert table.hosts == 103
    clock.now += FORGET_EVERY + 1
    assert table.ask("new", "b", 30) == 0
    assert table.hosts == 4  # crawl-delay, overloaded, held (its silent waiter dropped), new
    assert table.delay_for("crawl-delay") == 5.0 and table.delay_for("overloaded") == 2.0
    assert table.ask("done-7", "c", 30) == 0  # forgotten: starts afresh, as a new host
    assert table.hosts == 5


def test_a_table_started_again_grants_no_turn_before_its_quiet_time():
    """The table that replaces a lost one cannot know which turns that one granted: it
    waits a lease and a delay (every request started before is over) for every host."""
    clock = Clock()
    table = HostTable(1.0, quiet=41.0, clock=clock)
    assert table.ask("h", "a", 30) == pytest.approx(41.0)
    clock.now += 20
    assert table.ask("other", "b", 30) == pytest.approx(21.0)
    clock.now += 21
    assert table.ask("h", "a", 30) == 0
    assert table.ask("other", "b", 30) == 0
    assert HostTable(1.0, clock=clock).ask("h", "a", 30) == 0  # no quiet: at once


def test_gate_gives_up_a_turn_that_would_come_after_its_limit():
    clock = Clock()
    table = HostTable(3.0, clock=clock)
    gate = HostGate(table, "b", lease=30, clock=clock, sleep=lambda s: None)
    assert table.ask("h", "a", 30) == 0
    table.done("h", "a", 200)
    assert gate.wait_turn("h", until=clock.now + 1.0) is False
    assert table.ask("h", "c", 30) > 0 and "b" not in table._hosts["h"].waiting


def _fetch_all(client: GatedHttpClient, urls: list[str]) -> list[int]:
    statuses = []
    with client:
        for url in urls:
            result = client.get(url)
            assert isinstance(result, Response)
            b"".join(result.body)
            statuses.append(result.status)
    return statuses


def test_two_sites_on_one_host_two_ports_never_ask_it_at_once():
    """Threads with their own clients, one shared table: the servers' logs show each
    request at least the delay after the end of the one before, across both ports."""
    delay = 0.05
    table = HostTable(delay)
    servers = [SiteServer(simulated("accurate-jsonld", n), host="127.0.9.1") for n in (1, 2)]
    other = SiteServer(simulated("accurate-jsonld", 3), host="127.0.9.2")
    try:
        jobs = []
        for n, server in enumerate([*servers, other]):
            gate = HostGate(table, f"site-{n}", lease=30)
            client = GatedHttpClient(HttpOptions(timeout=5), gate, TimeLimit.starting_now(60))
            urls = [f"{server.origin}/pages/{i}" for i in range(8)]
            jobs.append(threading.Thread(target=_fetch_all, args=(client, urls)))
        for job in jobs:
            job.start()
        for job in jobs:
            job.join()
        settled([*servers, other])
        assert sum(len(s.log) for s in (*servers, other)) == 24
        assert too_close([*servers, other], delay) == []
        # the other host was not held up by the shared one: its requests interleave
        first_other, last_shared = other.log[0].at, max(s.log[-1].at for s in servers)
        assert first_other < last_shared
    finally:
        for server in (*servers, other):
            server.close()


def test_a_turn_lasts_until_the_body_is_closed():
    delay = 0.05
    table = HostTable(delay)
    servers = [SiteServer(simulated("accurate-jsonld", n), host="127.0.9.3") for n in (1, 2)]
    try:
        clients = [
            GatedHttpClient(
                HttpOptions(timeout=5),
                HostGate(table, f"site-{n}", lease=30),
                TimeLimit.starting_now(60),
            )
            for n in (1, 2)
        ]
        held = clients[0].get(servers[0].origin + "/sitemap.xml")
        assert isinstance(held, Response)
        second = threading.Thread(target=_fetch_all, args=(clients[1], [servers[1].origin + "/"]))
        second.start()
        second.join(timeout=0.5)
        assert second.is_alive() and servers[1].requests == []  # still waiting for the turn
        held.close()
        clients[0].gate.let_go()  # the site is over: the turn it kept is given back
        second.join()
        assert servers[1].requests == ["/"]
    finally:
        clients[0].close()
        for server in servers:
            server.close()


def test_no_request_once_the_site_time_limit_is_spent():
    table = HostTable(0.0)
    with SiteServer(simulated("accurate-jsonld", 1), host="127.0.9.4") as server:
        limit = TimeLimit(5.0, started=0.0)  # spent long ago on the monotonic clock
        client = GatedHttpClient(HttpOptions(timeout=5), HostGate(table, "a", lease=30), limit)
        result = client.get(server.origin + "/robots.txt")
        client.close()
    assert isinstance(result, FetchFailure) and result.code == "timeout"
    assert "time limit (5 s)" in result.detail
    assert server.log == []


def test_a_response_dropped_unclosed_still_ends_its_turn():
    import gc

    table = HostTable(0.0)
    timeout = 2.0
    with SiteServer(simulated("accurate-jsonld", 1), host="127.0.9.5") as server:
        client = GatedHttpClient(
            HttpOptions(timeout=timeout), HostGate(table, "a", lease=300),
            TimeLimit.starting_now(60),
        )  # fmt: skip
        dropped = client.get(server.origin + "/robots.txt")
        assert isinstance(dropped, Response)
        assert table.ask("127.0.9.5", "b", 300) > 0  # held by the response
        del dropped
        gc.collect()
        assert client.gate.wait_turn("127.0.9.250")  # the site moves on to another host
        assert table.ask("127.0.9.5", "b", 300) == 0  # the dropped request was over
        client.close()
    # The dropped response's socket is its deadline's until the deadline passes (then
    # shut down and let go): unclosed, as dropped, here rather than in a later test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        time.sleep(timeout + 0.3)
        gc.collect()


def test_the_table_counts_the_pages_a_site_answered():
    table = HostTable(0.0)
    table.ask("h", "a", 30)
    table.done("h", "a", 200, page=True)
    table.ask("h", "a", 30)
    table.done("h", "a", 404, page=True)  # answered: a page fetched, whatever the status
    table.ask("h", "a", 30)
    table.done("h", "a", None, page=True)  # no answer at all: not fetched
    table.ask("h", "a", 30)
    table.done("h", "a", 200)  # a sitemap
    assert table.pages_fetched() == 2


def test_the_page_client_counts_pages_but_not_robots_txt():
    table = HostTable(0.0)
    with SiteServer(simulated("accurate-jsonld", 1), host="127.0.9.6") as server:
        page = next(iter(server.site.pages))
        gate = HostGate(table, "a", lease=30)
        pages = GatedHttpClient(
            HttpOptions(timeout=5), gate, TimeLimit.starting_now(60), pages=True
        )
        sitemaps = GatedHttpClient(HttpOptions(timeout=5), gate, TimeLimit.starting_now(60))
        for client, path in ((pages, "/robots.txt"), (pages, page), (pages, "/missing"),
                             (sitemaps, "/sitemap.xml")):  # fmt: skip
            response = client.get(server.origin + path)
            assert isinstance(response, Response)
            response.close()
        pages.close()
        sitemaps.close()
        gate.let_go()  # the count goes to the table with the turn kept, given back
    assert server.requests == ["/robots.txt", page, "/missing", "/sitemap.xml"]
    assert table.pages_fetched() == 2  # the page and the 404


class _StoppedAfterGrant:
    """The table, as seen by a site whose process stops right after its first turn is
    granted, for longer than the lease (SIGSTOP): meanwhile the turn lapses and site
    ``b`` takes the host and ends its request; the site then reads its stale grant."""

    def __init__(self, table: HostTable, clock: Clock, host: str, lease: float) -> None:
        self.table, self.clock, self.host, self.lease = table, clock, host, lease
        self.granted_at: list[float] = []  # when the site was granted a turn
        self.b_ended = 0.0

    def hold(self, host: str, holder: str, lease: float) -> tuple[float, float, float]:
        wait, _delay, _base = answer = self.table.hold(host, holder, lease)
        if wait <= 0:
            self.granted_at.append(self.clock.now)
            if len(self.granted_at) == 1:  # stopped: the lease lapses, b comes and goes
                self.clock.now += self.lease + self.table.delay_for(host) + 1
                assert self.table.ask(host, "b", lease) == 0
                self.b_ended = self.clock.now = self.clock.now + 0.5
                self.table.done(host, "b", 200)
        return answer

    def __getattr__(self, name: str) -> object:
        return getattr(self.table, name)


def test_a_turn_lapsed_before_its_request_went_out_is_taken_again():
    clock = Clock()
    options = HttpOptions(timeout=5)
    table = HostTable(1.0, clock=clock)
    stopped = _StoppedAfterGrant(table, clock, "127.0.9.7", turn_lease(options))

    def sleep(seconds: float) -> None:
        clock.now += seconds

    gate = HostGate(stopped, "a", lease=turn_lease(options), clock=clock, sleep=sleep)
    with SiteServer(simulated("accurate-jsonld", 1), host="127.0.9.7") as server:
        client = GatedHttpClient(options, gate, TimeLimit(600.0, clock.now, clock))
        result = client.get(server.origin + "/robots.txt")
        assert isinstance(result, Response) and result.status == 200
        result.close()
        second = client.get(server.origin + "/sitemap.xml")  # on the turn kept: no ask
        assert isinstance(second, Response)
        second.close()
        client.close()
    assert gate.taken_again == 1
    _first, again = stopped.granted_at
    assert again >= stopped.b_ended + 1.0  # the delay after b, not the stale turn
    assert len(server.log) == 2


def test_a_turn_that_lapsed_while_its_connection_was_made_is_taken_again(monkeypatch):
    """Stopped after the turn's check but before the request's first byte (here: while
    the connection was made): the request does not go out on the lapsed turn."""
    import urllib3.connection

    clock = Clock()
    options = HttpOptions(timeout=5)
    lease = turn_lease(options)
    table = HostTable(1.0, clock=clock)
    b_ended: list[float] = []
    new_conn = urllib3.connection.HTTPConnection._new_conn

    def stopped_while_connecting(self):  # the lease lapses; b comes and goes meanwhile
        made = new_conn(self)
        if not b_ended:
            clock.now += lease + 2
            assert table.ask("127.0.9.7", "b", lease) == 0
            clock.now += 0.5
            table.done("127.0.9.7", "b", 200)
            b_ended.append(clock.now)
        return made

    monkeypatch.setattr(urllib3.connection.HTTPConnection, "_new_conn", stopped_while_connecting)

    def sleep(seconds: float) -> None:
        clock.now += seconds

    gate = HostGate(table, "a", lease=lease, clock=clock, sleep=sleep)
    with SiteServer(simulated("accurate-jsonld", 1), host="127.0.9.7") as server:
        client = GatedHttpClient(options, gate, TimeLimit(600.0, clock.now, clock))
        result = client.get(server.origin + "/robots.txt")
        assert isinstance(result, Response) and result.status == 200
        result.close()
        client.close()
    assert gate.taken_again == 1
    assert len(server.log) == 1  # the called-off attempt sent nothing
    assert clock.now >= b_ended[0] + 1.0  # it went out a delay after b, on a new turn
    assert table.granted == 3  # a, b, then a again


class _HopsAndRetries(LoopbackHTTPServer):
    """``/moved`` redirects to ``/here`` on the same host; ``/busy`` answers 503 once,
    then 200; anything else 200."""

    def __init__(self, host: str) -> None:
        self.busy = 0
        super().__init__(host)

    def answer(self, handler) -> None:
        if handler.path == "/moved":
            send(handler, 301, b"", "text/plain", {"Location": "/here"})
        elif handler.path == "/busy" and not self.busy:
            self.busy += 1
            send(handler, 503, b"busy", "text/plain")
        else:
            send(handler, 200, b"ok", "text/plain")


@pytest.mark.parametrize("path", ["/moved", "/busy"])
def test_a_redirect_hop_or_a_retry_waits_the_hosts_delay_as_a_new_request_would(path):
    delay = 0.4
    with _HopsAndRetries("127.0.9.7") as server:
        gate = HostGate(HostTable(delay), "a", lease=30)
        options = HttpOptions(timeout=10, retries=2, backoff=0.05)
        client = GatedHttpClient(options, gate, TimeLimit.starting_now(60))
        response = client.get(server.origin + path)
        assert not isinstance(response, FetchFailure) and response.status == 200
        response.close()
        first, second = server.log
        assert second.at - first.answered >= delay - STAMP_SLACK  # not the backoff's 0.05 s
        assert client.paused > 0
