"""Hosts as the web writes them: one spelling for politeness, origins, dedup and the
history. IDN names reach a loopback site through a real forward proxy (which alone maps
the name to 127.0.0.1: nothing is resolved beyond loopback), IPv6 literals a server on
[::1]; the servers' logs show two spellings of one host spaced by the delay."""

from __future__ import annotations

import socket
import threading
from http.server import ThreadingHTTPServer

import pytest

from auditor.crawl.record import site_origin
from auditor.fleet import crawl_list
from auditor.fleet.client import GatedHttpClient, TimeLimit
from auditor.fleet.gate import HostGate, HostTable, host_of
from auditor.fleet.work import turn_lease
from auditor.http import HttpOptions, Response, same_origin
from auditor.http.hosts import canonical_host, origin, url_key
from auditor.walker.locs import LocJudge, origin_of
from tests.http.proxies import ForwardProxy
from tests.loopback import LoopbackServer, send

IDN = "xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("Example.COM", "example.com"),
        ("example.com.", "example.com"),
        ("bücher.example", IDN),
        ("BÜCHER.example.", IDN),
        ("XN--BCHER-KVA.EXAMPLE", IDN),
        ("bücher。example", IDN),  # an ideographic full stop, as UTS #46 maps it
        ("[::1]", "::1"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("[2001:DB8::0:1]", "2001:db8::1"),
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_every_spelling_of_a_host_is_one(written, key):
    assert canonical_host(written) == key


@pytest.mark.parametrize("bad", ["", ".", "a..", "[::zz]", "\u0080x.example"])
def test_what_is_no_host_name_is_refused(bad):
    with pytest.raises(ValueError):
        canonical_host(bad)


def test_origins_keep_the_ascii_form_the_history_always_stored():
    for stored in ("https://example.com", "http://127.0.0.1:8001", "https://shop.example:8443"):
        assert origin(stored) == stored == site_origin(stored + "/a?b")
    assert origin("HTTPS://Example.COM.:443/x") == "https://example.com"
    assert origin("http://[0:0::1]:80/") == "http://[::1]"
    assert origin("http://Bücher.example:8080/") == f"http://{IDN}:8080"
    assert origin("ftp://example.com/") is None


def test_url_keys_follow_rfc_3986_6_2_2_and_nothing_more():
    assert url_key("HTTP://Example.COM:80/%7euser/a%2fb?q=%e2%82%ac") == (
        "http://example.com/~user/a%2Fb?q=%E2%82%AC"
    )
    # no path case folding, no trailing-slash games, no query reordering, no dot segments
    for kept in (
        "https://e.com/A/b",
        "https://e.com/a/",
        "https://e.com/?b=1&a=2",
        "https://e.com/a/../b",
        "https://e.com/a?",  # an empty query or fragment is kept (RFC 3986 6.2.3)
        "https://e.com/a#",
        "https://e.com/a?#",
        "https://e.com?",
    ):
        assert url_key(kept) == kept
    assert url_key("https://bücher.example/a") == f"https://{IDN}/a"


def test_origin_checks_treat_spellings_as_one():
    assert same_origin("https://Bücher.example/", f"https://{IDN}./x")
    assert same_origin("http://[::1]:8080/", "http://[0:0::1]:8080/a")
    assert not same_origin("https://example.com/", "https://example.org/")
    assert origin_of("https://EXAMPLE.com./a") == ("https", "example.com", 443)
    judge = LocJudge([origin_of("http://[::1]:8080/sitemap.xml")])
    assert judge.accepts("http://[0:0::1]:8080/a") and judge.accepts("http://[::1]:8080/b")
    assert judge.cross_host == 0
    assert host_of("http://Bücher.example:1/") == host_of(f"https://{IDN}./") == IDN


def test_a_crawl_list_holds_one_host_once_whatever_its_spelling():
    found = crawl_list(["bücher.example", f"https://{IDN.upper()}./", "https://bücher.example:443"])
    assert found.sites == (f"https://{IDN}",)
    assert len(found.duplicates) == 2


def _gated_pair(delay: float, options: HttpOptions) -> tuple[GatedHttpClient, GatedHttpClient]:
    table = HostTable(delay)
    limit = TimeLimit.starting_now(60)
    return tuple(  # type: ignore[return-value]
        GatedHttpClient(options, HostGate(table, f"site-{n}", lease=turn_lease(options)), limit)
        for n in (1, 2)
    )


def _fetch_both(clients, urls) -> None:
    def one(client, url) -> None:
        response = client.get(url)
        assert isinstance(response, Response), response
        b"".join(response.body)
        client.gate.let_go()  # the site is over: the turn it kept is given back

    threads = [threading.Thread(target=one, args=pair) for pair in zip(clients, urls, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)


def _spaced(server_log, delay: float) -> bool:
    first, second = sorted(server_log, key=lambda r: r.at)
    return second.at - first.answered >= delay * 0.95


def test_two_spellings_of_an_idn_host_wait_for_each_other(serve):
    """Two sites of a fleet, one writing bücher.example, the other its A-label in upper
    case with the root's dot: one host, so its requests are spaced by the delay."""
    server = serve(routes={p: (lambda h: send(h, 200, b"ok", "text/plain")) for p in ("/a", "/b")})

    def resolve(host: str, port: int) -> tuple[str, int]:
        assert canonical_host(host) == IDN
        return "127.0.0.1", server.port

    delay = 0.6
    with ForwardProxy(resolve) as proxy:
        clients = _gated_pair(delay, HttpOptions(proxy=proxy.url))
        urls = (
            f"http://bücher.example:{server.port}/a",
            f"http://XN--BCHER-KVA.example.:{server.port}/b",
        )
        _fetch_both(clients, urls)
    assert sorted(server.paths()) == ["/a", "/b"] and len(proxy.log) == 2
    assert _spaced(server.log, delay)


class _V6Server(LoopbackServer):
    def __init__(self, routes) -> None:
        original = ThreadingHTTPServer.address_family
        ThreadingHTTPServer.address_family = socket.AF_INET6
        try:
            self.routes, self.root, self.now = routes, None, None
            super(LoopbackServer, self).__init__("::1")
        finally:
            ThreadingHTTPServer.address_family = original


def test_two_spellings_of_an_ipv6_host_wait_for_each_other():
    routes = {p: (lambda h: send(h, 200, b"ok", "text/plain")) for p in ("/a", "/b")}
    with _V6Server(routes) as server:
        delay = 0.6
        clients = _gated_pair(delay, HttpOptions())
        _fetch_both(
            clients, (f"http://[::1]:{server.port}/a", f"http://[0:0:0::1]:{server.port}/b")
        )
        assert sorted(server.paths()) == ["/a", "/b"]
        assert _spaced(server.log, delay)


def test_an_idn_site_audited_through_a_proxy_is_one_site_whatever_its_spelling(
    serve, tmp_path, capsys
):
    """The site is written bücher.example, its sitemap lists BÜCHER.example. and the
    A-label: all one origin (nothing cross-host), one site in the history, found again
    under any spelling; the proxy alone maps the name to the loopback server."""
    import json

    from auditor.cli import main

    server = serve(routes={})
    port = server.port
    spellings = (
        f"http://BÜCHER.example.:{port}",
        f"http://{IDN}:{port}",
        f"http://bücher.example:{port}",
    )
    page = b"<html><head><title>t</title></head><body><p>hello</p></body></html>"
    urls = "".join(
        f"<url><loc>{o}/{n}.html</loc></url>" for o, n in zip(spellings, "abc", strict=True)
    )
    sitemap = (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()
    )
    robots = f"Sitemap: http://bücher.example:{port}/sitemap.xml\n".encode()
    server.routes.update(
        {
            "/robots.txt": lambda h: send(h, 200, robots, "text/plain"),
            "/sitemap.xml": lambda h: send(h, 200, sitemap),
            **{f"/{n}.html": (lambda h: send(h, 200, page, "text/html")) for n in "abc"},
        }
    )

    def resolve(host: str, port_: int) -> tuple[str, int]:
        assert canonical_host(host) == IDN and port_ == port
        return "127.0.0.1", port

    db = ["--db", str(tmp_path / "h.sqlite3")]
    with ForwardProxy(resolve) as proxy:
        args = ["audit", f"http://bücher.example:{port}", "--proxy", proxy.url, "--delay", "0.01"]
        assert main([*args, "--out", str(tmp_path / "r"), "--json", *db]) == 0
        result = json.loads(capsys.readouterr().out)
    assert result["site"] == f"http://{IDN}:{port}"
    assert result["inventory"]["urls"] == 3 and result["inventory"]["problems"] == 0
    assert {"/a.html", "/b.html", "/c.html"} <= set(server.paths())
    assert all(r.target.startswith(f"http://{IDN}:{port}/") for r in proxy.log), [
        r.target for r in proxy.log
    ]
    for spelling in spellings:
        assert main(["history", spelling, "--json", *db]) == 0
        assert [r["site"] for r in json.loads(capsys.readouterr().out)] == [f"http://{IDN}:{port}"]
