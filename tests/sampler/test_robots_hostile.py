"""robots.txt as hostile servers write it: byte-order marks, other encodings, redirect loops.

Each case is served by a real loopback server; the server's own log shows that no
disallowed page is ever requested.
"""

from __future__ import annotations

import pytest

from auditor.http import HttpClient, HttpOptions
from auditor.sampler import SampleOptions, sample_site
from auditor.sampler.robots import decode_robots, fetch_robots
from auditor.walker.discovery import sitemaps_from_robots
from auditor.walker.inventory import load_inventory
from tests.loopback import send

# The group that names auditor comes first: a mark that voids its first line voids it.
RULES = (
    "User-agent: auditor\r\nDisallow: /private/\r\nAllow: /private/ok.html$\r\n"
    "Disallow: /*.pdf$\r\nCrawl-delay: 0.01\r\n\r\n"
    "User-agent: *\r\nDisallow: /\r\n"
)
DISALLOWED = {"/private/secret.html", "/private/ok.html.bak", "/report.pdf"}
ENCODINGS = {
    "utf-8 with a byte-order mark": lambda text: b"\xef\xbb\xbf" + text.encode(),
    "two byte-order marks": lambda text: b"\xef\xbb\xbf\xef\xbb\xbf" + text.encode(),
    "utf-16 little-endian with its mark": lambda text: b"\xff\xfe" + text.encode("utf-16-le"),
    "utf-16 big-endian with its mark": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
}
ENCODED = {name: encode(RULES) for name, encode in ENCODINGS.items()}


def _client() -> HttpClient:
    return HttpClient(HttpOptions(retries=0, timeout=5))


def _page_requests(server) -> set[str]:
    return {r.path for r in server.log if r.path not in ("/robots.txt", "/sitemap.xml")}


@pytest.mark.parametrize("body", ENCODED.values(), ids=ENCODED.keys())
def test_an_encoded_robots_txt_keeps_every_rule(serve, body):
    server = serve("sites/sample-polite", routes={"/robots.txt": lambda h: send(h, 200, body)})

    policy = fetch_robots(_client(), server.origin)

    assert policy.rule == "parsed"
    for path in DISALLOWED:
        assert not policy.allows(server.url(path)), path
    assert policy.allows(server.url("/private/ok.html"))
    assert policy.crawl_delay == 0.01


def test_a_byte_order_mark_never_lets_a_disallowed_page_be_fetched(serve):
    body = ENCODED["utf-8 with a byte-order mark"]
    server = serve("sites/sample-polite", routes={"/robots.txt": lambda h: send(h, 200, body)})
    entries = load_inventory(server.url("/sitemap.xml")).entries

    run = sample_site(server.origin, entries, SampleOptions(sample=12, delay=0.0), seed=1)

    assert run.skipped_robots == len(DISALLOWED)
    assert not _page_requests(server) & DISALLOWED


def test_walker_and_sampler_read_robots_txt_with_one_decoder():
    for encode in ENCODINGS.values():
        text = decode_robots(encode(RULES + "Sitemap: /s.xml\n"))
        assert text.startswith("User-agent")
        assert sitemaps_from_robots(text, "http://h") == ["http://h/s.xml"]
    assert decode_robots("Disallow: /caf\xe9".encode("latin-1")).endswith("/caf\xe9")


def _loop(handler) -> None:
    target = "/robots-a.txt" if handler.path == "/robots.txt" else "/robots.txt"
    send(handler, 301, b"", "text/plain", {"Location": target})


def _hops(handler) -> None:
    n = 0 if handler.path == "/robots.txt" else int(handler.path[2:].removesuffix(".txt"))
    send(handler, 302, b"", "text/plain", {"Location": f"/r{n + 1}.txt"})


@pytest.mark.parametrize(
    "routes",
    [
        {"/robots.txt": _loop, "/robots-a.txt": _loop},
        {"/robots.txt": _hops, **{f"/r{n}.txt": _hops for n in range(1, 12)}},
    ],
    ids=["a redirect loop", "more than five redirects"],
)
def test_a_robots_txt_that_redirects_without_end_counts_as_unavailable(serve, routes):
    """Google and RFC 9309: after five hops robots.txt is unavailable, as a 404: allow all."""
    server = serve("sites/sample-polite", routes=routes)

    policy = fetch_robots(_client(), server.origin)

    assert policy.rule == "allow-all"
    assert "redirect" in policy.detail
    assert policy.allows(server.url("/private/secret.html"))


def test_a_robots_txt_redirected_once_on_the_site_is_read(serve):
    def moved(handler):
        send(handler, 301, b"", "text/plain", {"Location": "/robots-new.txt"})

    def new(handler):
        send(handler, 200, RULES.encode(), "text/plain")

    server = serve("sites/sample-polite", routes={"/robots.txt": moved, "/robots-new.txt": new})
    policy = fetch_robots(_client(), server.origin)

    assert policy.rule == "parsed"
    assert not policy.allows(server.url("/private/secret.html"))
