"""Fetching pages politely from a loopback site, checked against the server's own request log."""

from __future__ import annotations

import itertools

import pytest

from auditor.http import HttpClient, HttpOptions
from auditor.sampler import HostPacer, PageFetcher, RobotsPolicy, SampleOptions, sample_site
from auditor.sampler.fetch import FetchedPage
from auditor.sampler.robots import fetch_robots
from auditor.walker.inventory import load_inventory
from tests.loopback import send
from tests.sampler.faketime import FakeTime

ALLOWED = {f"/blog/{c}.html" for c in "abcdefg"} | {"/private/ok.html"}
DISALLOWED = {"/private/secret.html", "/private/ok.html.bak", "/report.pdf"}


def _page_requests(server) -> list:
    return [r for r in server.log if r.path not in ("/robots.txt", "/sitemap.xml")]


def _gaps(requests) -> list[float]:
    return [b.at - a.at for a, b in itertools.pairwise(requests)]


def _sample(server, time: FakeTime | None = None, **options) -> tuple:
    """Sample the server's site; with ``time``, the pauses are simulated on its clock."""
    entries = load_inventory(server.origin).entries
    sampled = SampleOptions(**options)
    pacer = None if time is None else time.pacer(sampled.delay)
    run = sample_site(server.origin, entries, sampled, seed=7, pacer=pacer)
    return run, _page_requests(server)


def test_robots_rules_are_obeyed_and_crawl_delay_holds(serve):
    server, time = serve("sites/sample-polite"), FakeTime()
    run, requests = _sample(server, time, sample=20, delay=0.05)

    requested = {r.path for r in requests}
    assert requested == ALLOWED  # never a disallowed path
    assert run.skipped_robots == 4  # secret, ok.html.bak, the pdf, ?replytocom=
    assert {p.loc.removeprefix(server.origin) for p, f in run.pages if f.error == "robots"} == (
        DISALLOWED | {"/blog/a.html?replytocom=3"}
    )
    assert run.requested == len(ALLOWED)
    assert run.robots.crawl_delay == 0.3
    # Crawl-delay is larger than --delay: it wins, before every page but the first
    assert time.sleeps == pytest.approx([0.3] * (len(ALLOWED) - 1))
    assert run.fetched == len(ALLOWED) and run.requests == len(ALLOWED)
    titled = {p.loc: e for p, e in run.pages if e.ok}
    assert all(e.fingerprint is not None for e in titled.values())
    assert all("auditor/" in r.headers["User-Agent"] for r in requests)
    assert all(r.headers["Accept"].startswith("text/html") for r in requests)


def test_delay_holds_when_larger_than_crawl_delay(serve):
    server, time = serve("sites/sample-polite"), FakeTime()
    _, requests = _sample(server, time, sample=4, delay=0.45)

    assert len(requests) == 4
    assert time.sleeps == pytest.approx([0.45] * 3)


def test_the_real_server_sees_its_requests_spaced_by_the_crawl_delay(serve):
    """End to end on the real clock: the server's own log shows the spacing."""
    server = serve("sites/sample-polite")
    robots = server.render("/robots.txt").replace(b"Crawl-delay: 0.3", b"Crawl-delay: 0.1")
    server.routes["/robots.txt"] = lambda h: send(h, 200, robots, "text/plain")
    run, requests = _sample(server, sample=4, delay=0.01)

    assert run.robots.crawl_delay == 0.1
    assert len(requests) == 4
    assert min(_gaps(requests)) >= 0.1


def test_robots_txt_5xx_means_disallow_all(serve):
    server = serve("sites/sample-polite", routes={"/robots.txt": lambda h: send(h, 503, b"down")})
    client = HttpClient(HttpOptions(retries=0))
    policy = fetch_robots(client, server.origin)
    run = sample_site(server.origin, _inventory_entries(server), SampleOptions(sample=5), seed=1)

    assert policy.rule == "disallow-all" and "503" in policy.detail
    assert run.skipped_robots == 5 and run.requests == 0
    assert _page_requests(server) == []


def test_robots_txt_4xx_means_allow_all(serve):
    server = serve("sites/sample-polite", routes={"/robots.txt": lambda h: send(h, 404, b"")})
    run = sample_site(
        server.origin, _inventory_entries(server), SampleOptions(sample=12, delay=0.01), seed=1
    )

    assert run.robots.rule == "allow-all"
    assert run.skipped_robots == 0
    assert "/private/secret.html" in {r.path for r in _page_requests(server)}


def test_unreachable_robots_txt_means_disallow_all(serve):
    server = serve()
    policy = fetch_robots(HttpClient(HttpOptions(retries=0)), "http://127.0.0.1:9")

    assert policy.rule == "disallow-all"
    assert not policy.allows("http://127.0.0.1:9/anything")
    server.close()


def _inventory_entries(server):
    """The sitemap is read from its own server, whatever robots.txt says."""
    return load_inventory(server.url("/sitemap.xml")).entries


def _fetcher(server, delay: float = 0.05, pacer: HostPacer | None = None, **kwargs) -> PageFetcher:
    client = HttpClient(HttpOptions(retries=0, timeout=5))
    policy = RobotsPolicy(server.url("/robots.txt"), "allow-all", "test")
    return PageFetcher(server.origin, client, policy, pacer or HostPacer(delay), **kwargs)


def test_429_backs_off_as_asked_then_the_host_recovers_step_by_step(serve):
    calls = {"n": 0}

    def busy_once(handler):
        calls["n"] += 1
        if calls["n"] == 1:
            send(handler, 429, b"slow down", "text/plain", {"Retry-After": "1"})
        else:
            send(handler, 200, b"<html><body>ok</body></html>", "text/html")

    server, time = serve("sites/sample-polite", routes={"/busy": busy_once}), FakeTime()
    fetcher = _fetcher(server, pacer=time.pacer(0.05))
    page = fetcher.fetch(server.url("/busy"))
    fetcher.fetch(server.url("/blog/a.html"))

    assert page.ok and page.status == 200
    assert server.paths() == ["/busy", "/busy", "/blog/a.html"]
    # Retry-After honoured; then each answer halves the delay: still slower than --delay
    assert time.sleeps == [1.0, 0.5]
    assert fetcher.pacer.delay_for("127.0.0.1") == 0.25  # two answers later
    assert fetcher.requests == 3


def test_a_host_that_stays_overloaded_gives_an_error_value(serve):
    server = serve(
        routes={"/down": lambda h: send(h, 503, b"", "text/plain", {"Retry-After": "0"})}
    )
    page = _fetcher(server, delay=0.01).fetch(server.url("/down"))

    assert (page.error, page.detail, page.status) == ("http-error", "HTTP 503", 503)
    assert len(server.log) == 3  # the first try and two more


def test_off_site_redirect_is_not_followed(serve):
    elsewhere = serve("sites/sample-polite")
    target = elsewhere.url("/blog/a.html").replace("127.0.0.1", "localhost")
    server = serve(routes={"/moved": lambda h: send(h, 301, b"", headers={"Location": target})})
    page = _fetcher(server).fetch(server.url("/moved"))

    assert page.error == "redirect"
    assert elsewhere.log == []


def test_pages_on_another_host_or_scheme_are_never_requested(serve):
    server = serve("sites/sample-polite")
    fetcher = _fetcher(server)

    assert fetcher.fetch("http://localhost:1/x").error == "off-site"
    assert fetcher.fetch("ftp://127.0.0.1/x").error == "not-http"
    assert server.log == []


def test_a_huge_page_is_read_up_to_the_cap_and_marked_truncated(serve):
    huge = b"<html><body>" + b"<p>word</p>" * 200_000 + b"</body></html>"
    server = serve(routes={"/huge": lambda h: send(h, 200, huge, "text/html")})
    page = _fetcher(server, max_bytes=100_000).fetch(server.url("/huge"))

    assert page.ok and page.truncated
    assert len(page.body) == 100_000


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("application/pdf", b"%PDF-1.4"), ("application/json", b"{}"), ("", b"\x00\x01binary")],
)
def test_non_html_is_recorded_with_a_reason(serve, content_type, body):
    def route(handler):
        handler.send_response(200)
        if content_type:
            handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    server = serve(routes={"/thing": route})
    page = _fetcher(server).fetch(server.url("/thing"))

    assert page.error == "not-html"
    assert page.body == b""
    assert isinstance(page, FetchedPage) and page.requested


def test_a_404_page_is_a_value(serve):
    server = serve()
    page = _fetcher(server).fetch(server.url("/gone"))
    assert (page.error, page.status, page.detail) == ("http-error", 404, "HTTP 404")


def test_slow_page_times_out_within_the_deadline(serve, hold):
    def hang(handler):
        hold.wait(10)

    server = serve(routes={"/slow": hang})
    client = HttpClient(HttpOptions(retries=0, timeout=0.5))
    policy = RobotsPolicy(server.url("/robots.txt"), "allow-all", "test")
    page = PageFetcher(server.origin, client, policy, HostPacer(0.01)).fetch(server.url("/slow"))

    assert page.error == "timeout"


def test_skipped_pages_are_replaced_by_allowed_ones(serve):
    server, time = serve("sites/sample-polite"), FakeTime()
    run, requests = _sample(server, time, sample=8, delay=0.01)

    assert {r.path for r in requests} == ALLOWED  # 8 allowed pages, the budget
    assert run.fetched == 8
    assert time.sleeps == pytest.approx([0.3] * 7)  # the Crawl-delay


def test_sampled_pages_carry_their_evidence(serve):
    server = serve("sites/sample-evidence")
    run, _ = _sample(server, sample=6, delay=0.01)
    by_name = {p.loc.rsplit("/", 1)[1]: (p, e) for p, e in run.pages}

    assert run.fetched == 6
    credible = {n for n, (_, e) in by_name.items() if e.date_modified and e.date_modified.credible}
    assert credible == {"a.html", "b.html", "c.html"}
    for name in ("d.html", "e.html"):  # dateModified stamped as the page is served
        assert by_name[name][1].date_modified.why_not_credible == "render-time-date-modified"
    assert by_name["f.html"][1].date_modified is None
    page, evidence = by_name["a.html"]
    assert evidence.date_modified.value == page.lastmod  # 11:00+01:00 is 10:00Z
