"""Proxies: with --proxy every request goes through it, robots.txt included; without it
none does; the environment's HTTP_PROXY and NO_PROXY are honoured; https through
CONNECT; SOCKS5 through a loopback SOCKS server; a fleet's crawl list may name a proxy
per site. Real proxies on loopback (tests/http/proxies.py) log what they relay."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.cli import main
from auditor.fleet import crawl_list
from auditor.http import HttpClient, HttpOptions, Response
from auditor.http.hosts import host_key
from tests.http.proxies import ForwardProxy, Socks5Proxy
from tests.loopback import TLS_CERT, LoopbackServer, send

PAGE = b"<html><head><title>t</title></head><body><p>hello</p></body></html>"
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def small_site(serve) -> LoopbackServer:
    """robots.txt naming a sitemap of two pages."""
    server = serve(routes={})

    def robots(handler) -> None:
        send(handler, 200, f"Sitemap: {server.origin}/sitemap.xml\n".encode(), "text/plain")

    def sitemap(handler) -> None:
        urls = "".join(
            f"<url><loc>{server.origin}/{name}.html</loc><lastmod>2026-11-0{i}</lastmod></url>"
            for i, name in enumerate("ab", start=1)
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        send(handler, 200, body.encode())

    server.routes.update(
        {
            "/robots.txt": robots,
            "/sitemap.xml": sitemap,
            "/a.html": lambda h: send(h, 200, PAGE, "text/html"),
            "/b.html": lambda h: send(h, 200, PAGE, "text/html"),
        }
    )
    return server


def relayed_paths(proxy: ForwardProxy, server: LoopbackServer) -> list[str]:
    prefix = server.origin
    return [r.target.removeprefix(prefix) for r in proxy.log]


def test_walk_sends_every_request_through_the_proxy_and_none_without(serve, capsys):
    server = small_site(serve)
    with ForwardProxy() as proxy:
        assert main(["walk", server.origin, "--proxy", proxy.url]) == 0
        assert relayed_paths(proxy, server) == ["/robots.txt", "/sitemap.xml"]
        assert server.paths() == ["/robots.txt", "/sitemap.xml"]
        assert main(["walk", server.origin]) == 0
        assert len(proxy.log) == 2  # without --proxy: none through it
    assert '"loc"' in capsys.readouterr().out


def test_an_audit_sends_robots_sitemaps_and_pages_through_the_proxy(serve, tmp_path, capsys):
    server = small_site(serve)
    with ForwardProxy() as proxy:
        args = ["audit", server.origin, "--proxy", proxy.url, "--delay", "0.01"]
        args += ["--db", str(tmp_path / "h.sqlite3"), "--out", str(tmp_path / "r"), "--json"]
        assert main(args) == 0
        paths = relayed_paths(proxy, server)
    assert paths == server.paths()  # every request the site saw came through the proxy
    assert paths[0] == "/robots.txt" and {"/sitemap.xml", "/a.html", "/b.html"} <= set(paths)
    capsys.readouterr()


def test_page_command_goes_through_the_proxy(serve, capsys):
    server = small_site(serve)
    with ForwardProxy() as proxy:
        assert main(["page", server.url("/a.html"), "--proxy", proxy.url, "--json"]) == 0
        assert relayed_paths(proxy, server) == ["/a.html"]
    capsys.readouterr()


def test_the_environment_proxy_is_honoured_and_no_proxy_bypasses_it(serve, monkeypatch):
    server = small_site(serve)
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with HttpClient() as client:
            assert _read(client, server.url("/robots.txt")) == 200
        assert relayed_paths(proxy, server) == ["/robots.txt"]
        with HttpClient(HttpOptions(env_proxy=False)) as client:
            assert _read(client, server.url("/robots.txt")) == 200
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        with HttpClient() as client:
            assert _read(client, server.url("/robots.txt")) == 200
        assert len(proxy.log) == 1  # env_proxy=False and NO_PROXY: straight to the site
        with HttpClient(HttpOptions(proxy=proxy.url)) as client:  # named: NO_PROXY aside
            assert _read(client, server.url("/robots.txt")) == 200
        assert len(proxy.log) == 2


def test_https_goes_through_connect():
    with (
        LoopbackServer(
            routes={"/x": lambda h: send(h, 200, b"ok", "text/plain")}, tls=True
        ) as site,
        ForwardProxy() as proxy,
    ):
        with HttpClient(HttpOptions(proxy=proxy.url)) as client:
            client.session.verify = str(TLS_CERT)
            assert _read(client, site.url("/x")) == 200
        assert [(r.method, r.target) for r in proxy.log] == [("CONNECT", f"127.0.0.1:{site.port}")]


def test_socks5_with_names_resolved_by_the_proxy(serve):
    """socks5h: the name goes to the proxy, which alone resolves it (here an IDN, mapped
    to the loopback site): nothing is resolved beyond loopback."""
    server = small_site(serve)

    def resolve(host: str, port: int) -> tuple[str, int]:
        assert host_key(host) == "xn--bcher-kva.example"
        return "127.0.0.1", server.port

    with Socks5Proxy(resolve) as socks:
        with HttpClient(HttpOptions(proxy=socks.url("socks5h"))) as client:
            assert _read(client, f"http://Bücher.example:{server.port}/robots.txt") == 200
        assert [r.target for r in socks.log] == [f"xn--bcher-kva.example:{server.port}"]
    assert server.log[0].headers["Host"] == f"xn--bcher-kva.example:{server.port}"


def test_socks5_with_names_resolved_here(serve):
    server = small_site(serve)
    with Socks5Proxy() as socks:
        with HttpClient(HttpOptions(proxy=socks.url("socks5"))) as client:
            assert _read(client, server.url("/robots.txt")) == 200
        assert [r.target for r in socks.log] == [f"127.0.0.1:{server.port}"]


def test_a_bad_proxy_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["walk", "https://example.com", "--proxy", "ftp://u:hunter2@proxy:21"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "not a proxy URL" in err and "hunter2" not in err and "u:***@proxy" in err


def test_the_crawl_list_may_name_a_proxy_per_site(tmp_path: Path):
    listed = tmp_path / "list.txt"
    listed.write_text("a.example socks5h://127.0.0.1:1080\nb.example  # none\nA.EXAMPLE.\n")
    found = crawl_list(files=[str(listed)])
    assert found.sites == ("https://a.example", "https://b.example")
    assert found.proxies == ("socks5h://127.0.0.1:1080", None)
    listed.write_text("a.example gopher://x\n")
    with pytest.raises(Exception, match=r"list.txt:1: not a proxy URL"):
        crawl_list(files=[str(listed)])


def test_a_fleet_sends_each_site_through_its_proxy(serve, tmp_path, capsys):
    """On Dask workers: the site whose line names a proxy goes through that one, the
    other through --proxy; every request of each, robots.txt included."""
    one, two = small_site(serve), small_site(serve)
    with ForwardProxy() as named, ForwardProxy() as fleet_wide:
        listed = tmp_path / "sites.txt"
        listed.write_text(f"{one.origin} {named.url}\n{two.origin}\n")
        args = ["audit", "--sites", str(listed), "--proxy", fleet_wide.url, "--delay", "0.01"]
        args += ["--db", str(tmp_path / "h.sqlite3"), "--out", str(tmp_path / "r")]
        args += ["--concurrency", "2"]
        assert main(args) == 0
        assert relayed_paths(named, one) == one.paths() and one.paths()
        assert relayed_paths(fleet_wide, two) == two.paths() and two.paths()
        assert all(r.target.startswith(one.origin) for r in named.log)
        assert all(r.target.startswith(two.origin) for r in fleet_wide.log)
    capsys.readouterr()


def _read(client: HttpClient, url: str) -> int | str:
    response = client.get(url)
    if not isinstance(response, Response):
        return f"{response.code}: {response.detail}"
    b"".join(response.body)
    return response.status


def test_inspect_and_plans_walk_go_through_the_proxy(serve, tmp_path, capsys):
    server = small_site(serve)
    db = ["--db", str(tmp_path / "h.sqlite3")]
    audit = ["audit", server.origin, "--delay", "0.01", "--out", str(tmp_path / "r"), *db]
    assert main(audit) == 0
    before = len(server.log)
    with ForwardProxy() as proxy:
        assert main(["inspect", server.origin, "--proxy", proxy.url, "--json"]) == 0
        assert main(["plan", server.origin, "--proxy", proxy.url, *db]) == 0
        paths = relayed_paths(proxy, server)
    assert paths == server.paths()[before:]  # every request since the audit came through it
    assert paths[:2] == ["/robots.txt", "/sitemap.xml"] and "/sitemap.xml" in paths[2:]
    capsys.readouterr()
