"""A host that says it is overloaded (429/503): back off, recover, or give it up.

Real loopback servers answer; the pacer runs on an injected clock, so a Retry-After
of an hour costs the test nothing and every simulated wait can be counted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from auditor.http import HttpClient, HttpOptions
from auditor.sampler import HostPacer, PageFetcher, RobotsPolicy, SampleOptions, sample_site
from auditor.sampler.pacing import OVERLOAD_LIMIT, sampling_budget
from auditor.walker.inventory import load_inventory
from tests.loopback import send
from tests.sampler.faketime import FakeTime

PAGE = b"<html><head><title>p</title></head><body><p>ok</p></body></html>"
Answer = Callable[[int], tuple[int, dict[str, str]]]


def _site(serve, answer: Answer, pages: int = 10, robots: bytes = b"User-agent: *\nAllow: /\n"):
    """A site of ``pages`` pages; the k-th page request (any page) gets ``answer(k)``."""
    count = itertools.count()

    def page(handler) -> None:
        status, headers = answer(next(count))
        body, kind = (PAGE, "text/html") if status == 200 else (b"busy", "text/plain")
        send(handler, status, body, kind, headers)

    def sitemap(handler) -> None:
        origin = f"http://{handler.headers['Host']}"
        locs = "".join(f"<url><loc>{origin}/p/{i}.html</loc></url>" for i in range(pages))
        xmlns = "http://www.sitemaps.org/schemas/sitemap/0.9"
        send(handler, 200, f'<urlset xmlns="{xmlns}">{locs}</urlset>'.encode())

    routes = {f"/p/{i}.html": page for i in range(pages)}
    routes["/robots.txt"] = lambda h: send(h, 200, robots, "text/plain")
    routes["/sitemap.xml"] = sitemap
    server = serve(routes=routes)
    return server, [server.url(f"/p/{i}.html") for i in range(pages)]


def _page_requests(server) -> list[str]:
    return [r.path for r in server.log if r.path.startswith("/p/")]


def _fetcher(server, pacer: HostPacer, crawl_delay: float | None = None) -> PageFetcher:
    client = HttpClient(HttpOptions(retries=0, timeout=5))
    policy = RobotsPolicy(server.url("/robots.txt"), "allow-all", "test", crawl_delay)
    return PageFetcher(server.origin, client, policy, pacer)


def _once(status: int, retry_after: str | None) -> Answer:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return lambda k: (status, headers) if k == 0 else (200, {})


def _always(status: int, retry_after: str | None) -> Answer:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return lambda _k: (status, headers)


def test_a_retry_after_beyond_the_cap_stops_the_site_at_once(serve):
    server, urls = _site(serve, _once(429, "3600"))
    time = FakeTime()
    fetcher = _fetcher(server, time.pacer(1.0))
    pages = [fetcher.fetch(url) for url in urls]

    assert (pages[0].error, pages[0].status) == ("http-error", 429)
    assert {p.error for p in pages[1:]} == {"overloaded"}  # never asked for
    assert not any(p.requested for p in pages[1:])
    assert "3600 s" in pages[1].detail and "60 s cap" in pages[1].detail
    assert _page_requests(server) == ["/p/0.html"]
    assert time.sleeps == []  # not an hour, not 60 s a page: nothing


def test_a_retry_after_within_the_cap_is_honoured_then_the_delay_recovers(serve):
    server, urls = _site(serve, _once(429, "30"), pages=8)
    time = FakeTime()
    fetcher = _fetcher(server, time.pacer(1.0))
    pages = [fetcher.fetch(url) for url in urls]

    assert all(p.ok for p in pages)
    assert len(_page_requests(server)) == 9  # the first page asked twice
    # 30 s as asked, then each answer halves the delay back to --delay, never below it
    assert time.sleeps == [30.0, 15.0, 7.5, 3.75, 1.875, 1.0, 1.0, 1.0]
    assert fetcher.pacer.delay_for("127.0.0.1") == 1.0


def test_recovery_stops_at_the_crawl_delay(serve):
    server, urls = _site(serve, _once(503, "60"), pages=6)
    time = FakeTime()
    fetcher = _fetcher(server, time.pacer(1.0), crawl_delay=5.0)
    pages = [fetcher.fetch(url) for url in urls]

    assert all(p.ok for p in pages)
    assert time.sleeps == [60.0, 30.0, 15.0, 7.5, 5.0, 5.0]
    assert fetcher.pacer.delay_for("127.0.0.1") == 5.0


def test_a_host_that_answers_429_forever_is_given_up_after_three_in_a_row(serve):
    server, urls = _site(serve, _always(429, "1"))
    time = FakeTime()
    fetcher = _fetcher(server, time.pacer(1.0))
    pages = [fetcher.fetch(url) for url in urls]

    assert len(_page_requests(server)) == OVERLOAD_LIMIT == 3
    assert (pages[0].error, pages[0].detail) == ("http-error", "HTTP 429")
    assert {p.error for p in pages[1:]} == {"overloaded"}
    assert "429/503 3 times in a row" in pages[1].detail
    assert time.sleeps == [2.0, 4.0]  # the delay doubled twice, then no more waiting


def test_an_answer_between_overloads_resets_the_count_and_the_delay(serve):
    # every page answers 429 once, then 200: never three in a row, never stuck slow
    server, urls = _site(serve, lambda k: (429, {}) if k % 2 == 0 else (200, {}))
    time = FakeTime()
    fetcher = _fetcher(server, time.pacer(1.0))
    pages = [fetcher.fetch(url) for url in urls[:4]]

    assert all(p.ok for p in pages)
    assert len(_page_requests(server)) == 8
    assert time.sleeps == [2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]


def test_the_sample_stops_when_the_host_is_given_up(serve):
    server, _ = _site(serve, _always(503, None), pages=12)
    time = FakeTime()
    entries = load_inventory(server.origin).entries
    run = sample_site(
        server.origin, entries, SampleOptions(sample=12, delay=1.0), pacer=time.pacer(1.0)
    )

    assert run.stopped is not None and run.stopped[0] == "overloaded"
    assert run.requests == 3 and run.requested == 1  # one page asked for, three times
    assert sum(e.error == "overloaded" for _, e in run.pages) == 11
    assert len(_page_requests(server)) == 3


def test_sampling_never_outlasts_its_time_budget(serve):
    # Never three overloads in a row and never beyond the cap: without a budget this
    # host would hold each page for 60 s.
    server, _ = _site(serve, lambda k: (429, {"Retry-After": "60"}) if k % 2 == 0 else (200, {}))
    time = FakeTime()
    start = time.now
    entries = load_inventory(server.origin).entries
    run = sample_site(
        server.origin, entries, SampleOptions(sample=10, delay=1.0), pacer=time.pacer(1.0)
    )

    budget = sampling_budget(10, 1.0)
    assert budget == 70.0
    assert time.now - start <= budget
    assert run.stopped is not None and run.stopped[0] == "time-budget"
    assert "70 s" in run.stopped[1]
    assert run.fetched == 1 and run.requests == 2
    assert sum(e.error == "time-budget" for _, e in run.pages) == 9


def test_an_explicit_time_budget_is_kept(serve):
    server, _ = _site(serve, lambda _k: (200, {}))
    time = FakeTime()
    entries = load_inventory(server.origin).entries
    options = SampleOptions(sample=10, delay=2.0, time_budget=5.0)
    run = sample_site(server.origin, entries, options, pacer=time.pacer(2.0))

    assert time.sleeps == [2.0, 2.0]  # pages at 0, 2 and 4 s; the next turn (6 s) is too late
    assert run.fetched == 3 and run.stopped is not None and run.stopped[0] == "time-budget"


def test_a_calm_host_is_never_stopped(serve):
    server, _ = _site(serve, lambda _k: (200, {}))
    time = FakeTime()
    entries = load_inventory(server.origin).entries
    run = sample_site(
        server.origin, entries, SampleOptions(sample=10, delay=1.0), pacer=time.pacer(1.0)
    )

    assert run.fetched == 10 and run.stopped is None
    assert time.sleeps == [1.0] * 9
