"""A sampled page's fetch going wrong: redirects robots.txt forbids, other origins, a page the
deadline or the connection cuts short. Checked against the loopback server's own log."""

from __future__ import annotations

import itertools

import pytest

from auditor.http import HttpClient, HttpOptions
from auditor.sampler import HostPacer, PageFetcher, RobotsPolicy, SampleOptions, sample_site
from auditor.sampler.fetch import evidence_of
from auditor.sampler.robots import fetch_robots
from auditor.walker.inventory import load_inventory
from tests.loopback import LoopbackServer, send
from tests.sampler.faketime import FakeTime

HTML = b"<html><head><title>A page</title></head><body><main><p>Some words here.</p>"


def moved(location: str):
    return lambda h: send(h, 301, b"", "text/plain", {"Location": location})


def robots_fetcher(server: LoopbackServer, timeout: float = 5) -> PageFetcher:
    """A fetcher that obeys the server's own robots.txt."""
    client = HttpClient(HttpOptions(retries=0, timeout=timeout))
    return PageFetcher(server.origin, client, fetch_robots(client, server.origin), HostPacer(0.01))


def open_fetcher(server: LoopbackServer, timeout: float = 5) -> PageFetcher:
    """A fetcher for a site without robots.txt rules."""
    client = HttpClient(HttpOptions(retries=0, timeout=timeout))
    policy = RobotsPolicy(server.url("/robots.txt"), "allow-all", "test")
    return PageFetcher(server.origin, client, policy, HostPacer(0.01))


# -- every URL of a redirect chain obeys robots.txt ---------------------------------------------


@pytest.mark.parametrize("hops", [["/private/secret.html"], ["/blog/hop", "/private/secret.html"]])
def test_a_redirect_into_a_disallowed_path_is_never_followed(serve, hops):
    server = serve("sites/sample-polite")
    chain = ["/blog/moved.html", *hops]
    for here, there in itertools.pairwise(chain):
        server.routes[here] = moved(there)
    page = robots_fetcher(server).fetch(server.url("/blog/moved.html"))

    assert page.error == "robots"
    assert page.detail == f"redirect to disallowed URL {server.url('/private/secret.html')}"
    assert page.status == 301
    assert "/private/secret.html" not in server.paths()
    assert evidence_of(page).error == "robots"


def test_a_redirect_into_an_allowed_path_is_followed(serve):
    server = serve("sites/sample-polite", routes={"/blog/moved.html": moved("/private/ok.html")})
    page = robots_fetcher(server).fetch(server.url("/blog/moved.html"))

    assert page.ok, page
    assert page.final_url == server.url("/private/ok.html")


def test_a_sampled_page_redirecting_into_a_disallowed_path_gives_no_evidence(serve):
    server = serve("sites/sample-polite", routes={"/blog/a.html": moved("/private/secret.html")})
    entries = load_inventory(server.origin).entries
    time = FakeTime()  # the site's Crawl-delay, simulated
    options = SampleOptions(sample=20, delay=0.01)
    run = sample_site(server.origin, entries, options, seed=7, pacer=time.pacer(0.01))

    assert "/private/secret.html" not in server.paths()
    by_loc = {p.loc: e for p, e in run.pages}
    assert by_loc[server.url("/blog/a.html")].error == "robots"
    assert run.skipped_robots == 5  # the four the sitemap lists, and the one that redirects


# -- the site is one origin: scheme, host and port -----------------------------------------------


def test_a_page_on_another_port_of_the_same_host_is_off_site(serve):
    server, other = serve(), serve()
    other.routes["/page.html"] = lambda h: send(h, 200, HTML, "text/html")
    page = open_fetcher(server).fetch(other.url("/page.html"))

    assert (page.error, page.requested) == ("off-site", False)
    assert other.url("/page.html").rsplit("/", 1)[0] in (page.detail or "")
    assert other.log == []


def test_a_redirect_to_another_port_is_not_followed(serve):
    server, other = serve(), serve()
    other.routes["/page.html"] = lambda h: send(h, 200, HTML, "text/html")
    server.routes["/moved.html"] = moved(other.url("/page.html"))
    page = open_fetcher(server).fetch(server.url("/moved.html"))

    assert page.error == "redirect"
    assert other.log == []


# -- a page cut short is not a page ------------------------------------------------------------


def _headers_only(handler, headers: dict[str, str]) -> None:
    handler.send_response(200)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.close_connection = True


def test_a_page_cut_off_by_the_deadline_is_a_timeout(serve, hold):
    # No Content-Length: when the deadline shuts the socket, the read ends as a finished
    # page's would. A prefix's fingerprint would later read as a content change.
    def drip(handler):
        _headers_only(handler, {"Content-Type": "text/html"})
        handler.wfile.write(HTML)
        while not hold.wait(0.1):
            handler.wfile.write(b"<p>more</p>")

    server = serve(routes={"/slow.html": drip})
    page = open_fetcher(server, timeout=0.6).fetch(server.url("/slow.html"))

    assert (page.error, page.status) == ("timeout", 200)
    assert page.body == b""
    evidence = evidence_of(page)
    assert evidence.error == "timeout"
    assert evidence.fingerprint is None


def test_a_page_cut_short_of_its_content_length_is_an_http_error(serve):
    def short(handler):
        _headers_only(handler, {"Content-Type": "text/html", "Content-Length": "50000"})
        handler.wfile.write(HTML)

    server = serve(routes={"/short.html": short})
    page = open_fetcher(server).fetch(server.url("/short.html"))

    assert page.error == "http-error"
    assert "connection broken" in (page.detail or "")
    assert evidence_of(page).fingerprint is None
